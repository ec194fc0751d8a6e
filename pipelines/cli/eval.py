"""``python -m pipelines eval``: run a protocol on a labelled dataset, print the metrics and keep the report.

python -m pipelines eval --dataset check-covid --split dev --protocol single --backend fake --limit 10
python -m pipelines eval --dataset my-claims.jsonl --protocol single --corpus my-notes --labels binary
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pipelines.eval.labels import LABEL_MODES


def add_eval_command(sub: Any) -> None:
    parser = sub.add_parser("eval", help="evaluate protocols on a labelled dataset (accuracy, F1, calibration, evidence recall, cost)")
    parser.add_argument("--dataset", required=True, help="check-covid, a Check-COVID-style folder, or a .jsonl file of claims with labels")
    parser.add_argument("--split", default="dev", help="Check-COVID split: train or dev (default dev)")
    parser.add_argument("--protocol", default=None, help="protocol, or several separated by commas (default from config)")
    parser.add_argument("--backend", default=None, help="fake, embedded or openai, for every role (default from config)")
    parser.add_argument("--model", default="", help="model name at the backend")
    parser.add_argument("--limit", type=int, default=None, help="evaluate a fixed, label-balanced sample of N claims")
    parser.add_argument("--seed", type=int, default=0, help="which sample --limit takes (default 0)")
    parser.add_argument("--labels", choices=LABEL_MODES, default="three", help="three classes, or binary (SUPPORTS/REFUTES claims only)")
    parser.add_argument("--corpus", default=None, help="corpus to search (default: the dataset's, else from config)")
    parser.add_argument("--concurrency", type=int, default=1, help="claims run at once (model calls stay bounded per backend)")
    parser.add_argument("--web", action="store_true", help="let agents search the web (off by default, so results repeat)")
    parser.add_argument(
        "--label-map", action="append", default=[], metavar="THEIRS=OURS", help="map a dataset label, e.g. 'Pants on fire=REFUTES'"
    )
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON instead of text")
    parser.set_defaults(handler=run_eval_command)


def run_eval_command(args: argparse.Namespace) -> int:
    from pipelines.core.config import AppSettings, RunConfig
    from pipelines.eval.datasets import load_dataset
    from pipelines.eval.harness import evaluate, evaluation_config, format_claims, format_report
    from pipelines.eval.labels import parse_label_map
    from pipelines.eval.records import EvalStore, write_report_files
    from pipelines.run.runner import check_names
    from pipelines.run.services import Services

    settings = AppSettings()
    label_map = parse_label_map(args.label_map)
    dataset = load_dataset(args.dataset, args.split, checkcovid_dir=settings.checkcovid_dir, label_map=label_map)
    base = RunConfig()
    protocols = [p.strip() for p in (args.protocol or base.protocol).split(",") if p.strip()]
    configs = [
        evaluation_config(
            base,
            protocol=protocol,
            backend=args.backend or (base.debater.backend if args.model else None),
            model=args.model,
            corpus=args.corpus or dataset.corpus,
            web_search=args.web,
        )
        for protocol in protocols
    ]
    for config in configs:
        check_names(config)  # bad names answer at once, before the embedding model loads
    services = Services.create(settings)
    store = EvalStore(services.store.engine) if services.store is not None else None
    for config in configs:
        print(f"evaluating {config.protocol} on {dataset.name}/{dataset.split} ({len(dataset.items)} claims in the file)", file=sys.stderr)

        def progress(outcome: Any, done: int, total: int) -> None:
            shown = outcome.verdict or f"FAILED: {outcome.error[:80]}"
            print(f"  [{done}/{total}] {outcome.id}: {shown} ({outcome.seconds:.1f} s)", file=sys.stderr, flush=True)

        report = evaluate(
            dataset,
            config,
            services,
            labels=args.labels,
            limit=args.limit,
            seed=args.seed,
            concurrency=args.concurrency,
            extra_labels=label_map,
            on_outcome=progress,
        )
        json_path, csv_path = write_report_files(report, settings.data_dir / "evals")
        if store is not None:
            store.save(report)
        if args.json:
            print(json.dumps(report.model_dump(mode="json")))
        else:
            print(format_report(report))
            print(format_claims(report))
            print(f"  saved {json_path} and {csv_path}" + (" and in the run database" if store is not None else ""))
    return 0

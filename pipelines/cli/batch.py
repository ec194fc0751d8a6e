"""``python -m pipelines batch FILE``: check every claim of a file, K at a time, and write the results.

python -m pipelines batch claims.csv --protocol single --concurrency 2 [--backend fake] [--out results]
python -m pipelines batch claims.csv --submit [--wait]   (a shared desk: the claims go to the workers' queue; docs/scale.md)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from pipelines.cli.acting import BY_HELP, acting_person


def add_batch_command(sub: Any) -> None:
    parser = sub.add_parser("batch", help="check every claim of a .csv (claim column), .jsonl or .txt file; write CSV and JSONL results")
    parser.add_argument("file", type=Path)
    parser.add_argument("--protocol", default=None, help="debate method (default from config)")
    parser.add_argument("--backend", default=None, help="fake, embedded or openai, for every role")
    parser.add_argument("--model", default="", help="model name at the backend")
    parser.add_argument("--corpus", default=None, help="local corpus to search")
    parser.add_argument("--no-web", action="store_true", help="do not search the web")
    parser.add_argument("--concurrency", type=int, default=2, help="claims run at once (default 2); model calls stay bounded per backend")
    parser.add_argument("--out", type=Path, default=None, help="results path without suffix (default data/batches/<file>-<time>)")
    parser.add_argument("--by", default="", help=BY_HELP)
    parser.add_argument(
        "--submit",
        action="store_true",
        help="submit the claims to the desk's workers (PostgreSQL) and return, instead of running them here",
    )
    parser.add_argument("--wait", action="store_true", help="with --submit: print the batch's progress until every claim is done")
    parser.set_defaults(handler=run_batch_command)


def run_batch_command(args: argparse.Namespace) -> int:
    from pipelines.core.config import AppSettings, load_run_config
    from pipelines.run.batch import BatchInputError, iter_batch, parse_claims_file, to_csv, to_jsonl
    from pipelines.run.runner import check_names
    from pipelines.run.services import Services

    if not args.file.is_file():
        raise BatchInputError(f"{args.file}: no such file")
    items = parse_claims_file(args.file.read_bytes(), args.file.name)
    overrides = {"protocol": args.protocol, "corpus": args.corpus, "backend": args.backend, "model": args.model, "no_web": args.no_web}
    check_names(load_run_config().with_overrides(**overrides))
    person = acting_person(args.by, "run")  # with a users file: only an account proven by its password runs a batch
    settings = AppSettings()
    services = Services.create(settings)
    config = services.desk_settings().apply(load_run_config()).with_overrides(**overrides)  # the desk's endpoints, prices and limits
    if args.submit:
        return _submit(items, config, services, args, person)
    print(f"{len(items)} claims, {config.protocol}, {args.concurrency} at a time", file=sys.stderr)
    outcomes = []
    for outcome in iter_batch(items, config, services, concurrency=args.concurrency):
        outcomes.append(outcome)
        shown = f"{outcome.verdict} (run {outcome.run_id})" if outcome.status == "completed" else f"FAILED: {outcome.error}"
        print(f"[{len(outcomes)}/{len(items)}] {outcome.id}: {shown}", file=sys.stderr, flush=True)
    _join_queue([(o.run_id, items[o.index]) for o in outcomes if o.run_id], services, person)
    out = args.out or settings.data_dir / "batches" / f"{args.file.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    out.parent.mkdir(parents=True, exist_ok=True)
    csv_path, jsonl_path = out.with_suffix(".csv"), out.with_suffix(".jsonl")
    csv_path.write_text(to_csv(outcomes), encoding="utf-8")
    jsonl_path.write_text(to_jsonl(outcomes), encoding="utf-8")
    failed = [o for o in outcomes if o.status != "completed"]
    print(f"{len(outcomes) - len(failed)} completed, {len(failed)} failed; results in {csv_path} and {jsonl_path}")
    for o in sorted(failed, key=lambda o: o.index):
        print(f"  failed: {o.id}: {o.error}")
    return 1 if failed else 0


def _join_queue(runs: list[tuple[str, Any]], services: Any, person: Any) -> None:
    """The batch's runs join the claims queue, as a batch on the page does; what could not, on stderr."""
    from pipelines.cli.queue import join_queue_batch

    if services.store is not None and runs:
        joined, said = join_queue_batch(services.store.engine, runs, person)
        for line in said:
            print(f"  {line}", file=sys.stderr)
        print(f"{joined} of {len(runs)} claims joined the claims queue", file=sys.stderr)


def _submit(items: Any, config: Any, services: Any, args: argparse.Namespace, person: Any) -> int:
    from pipelines.newsroom.access.roles import acting_name
    from pipelines.run.workers import batch_progress, failure_reasons, submit_batch

    by = acting_name(person, "run")
    submitted = submit_batch(items, config, services, by=by, label=args.file.name)
    print(f"submitted {submitted.jobs} claims as batch {submitted.queue}; workers take them (`python -m pipelines worker`)")
    _join_queue(list(zip(submitted.run_ids, items, strict=True)), services, person)
    if not args.wait:
        return 0
    while True:
        progress = batch_progress(services, submitted.queue)
        print(
            f"{progress.count('completed')} completed, {progress.count('running')} running, {progress.count('waiting')} waiting, "
            f"{progress.count('failed', 'stopped', 'skipped', 'cancelled')} failed or not run",
            file=sys.stderr,
            flush=True,
        )
        if progress.finished:
            break
        time.sleep(2)
    for claim in failure_reasons(services, progress).claims:
        if claim.state not in ("completed",):
            print(f"  {claim.state}: {claim.id}: {claim.error}")
    return 0 if progress.count("completed") == len(progress.claims) else 1

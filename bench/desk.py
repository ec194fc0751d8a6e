"""`desk` against `single` on Check-COVID, the same claims in one run: accuracy, calibration, selectivity, cost.

    .venv/bin/python bench/desk.py [--split dev] [--limit N [--skip M]] [--backend embedded|fake] [--protocols desk,single]
        [--set desk.exhibits=8 ...] [--data-dir DIR] [--records FILE] [--out docs/measurements/data/desk-dev]

Each protocol runs the same claims through the evaluation harness (stored runs, web off,
corpus ``check-covid``), one claim at a time. Printed side by side:

- binary accuracy on the SUPPORT/REFUTE claims. ``desk`` states p(supported), so its binary
  answer is the likelier side; ``single`` is scored on the label it gave (NOT ENOUGH INFO
  counts wrong), and also on the claims where it took a side;
- 3-label accuracy and macro-F1 as ruled, with the dataset's ceiling (Check-COVID repeats
  every NOT ENOUGH INFO claim's text with a SUPPORT or REFUTE label);
- ECE (10 bins) of the binary answer's probability, beside the ECE a perfectly calibrated
  verdict with the same confidences would show on as many claims (chance alone lifts it on
  a few dozen claims), and selective accuracy: the binary accuracy on the 50% and 80% of
  claims the protocol is surest of;
- the deciding document among the exhibits (desk) or anywhere in the retrieved evidence: by its
  id, or by a passage of it that an exhibit holds word for word under another document's id
  (Check-COVID has papers that share a passage, and the search keeps one copy of a text);
  "by its id alone" beside it;
- model calls, tokens and seconds per claim (median and mean). Tokens are those sent (prompts
  and answers); "tokens read" leaves out the prompt tokens the server reused from the call
  before (llama.cpp's prompt cache), what the model actually computed. Claims whose text repeats
  an earlier claim's are answered from the response cache, as the app would; times are
  over the claims that called the model.

``--records`` writes one JSON line per claim with every exhibit's stance (what
``bench/fit_desk_calibration.py`` fits on). The data folder is fresh unless ``--data-dir``
is given, so no earlier answer is replayed from the cache. ``--skip M`` runs the sample's claims
after its first M (the sample of ``--limit N`` starts with the sample of any smaller limit), so a
larger sample can be read in parts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.json_lines import read_json_lines
from pipelines.core.config import AppSettings, RunConfig
from pipelines.core.events import ExhibitStanceRead, VerdictAggregated
from pipelines.eval import metrics
from pipelines.eval.datasets import Dataset, load_dataset
from pipelines.eval.harness import EvalReport, evaluate, evaluation_config, format_report, select_items
from pipelines.record.digest import digest
from pipelines.run.runner import Services
from pipelines.stages.exhibit_reading import exhibit_settings
from pipelines.stages.exhibits import same_text

BINARY = ("SUPPORTS", "REFUTES")


@dataclass
class ClaimRecord:
    """One claim as a protocol answered it, with what the metrics need."""

    id: str
    claim: str
    gold: str
    predicted: str | None
    p_supported: float | None  # the protocol's probability that the claim is supported (desk), else None
    raw_supported: float | None
    deciding_found: bool | None  # by id, or a passage of the deciding document held word for word by an exhibit
    calls: int
    cached_calls: int
    tokens: int  # sent: prompts and answers
    seconds: float
    exhibits: list[dict[str, Any]] = field(default_factory=list)
    debated: bool = False
    tokens_read: int = 0  # what the model computed: tokens sent less the prompt tokens its server reused
    deciding_by_id: bool | None = None  # the deciding document's own id among the exhibits
    reader: str = ""  # the stance question the exhibits were read with (desk.reader): what their readings mean

    @property
    def binary(self) -> str | None:
        """The claim's binary answer: the likelier side when a probability is stated, else the label if it took a side."""
        if self.p_supported is not None:
            return "SUPPORTS" if self.p_supported >= 0.5 else "REFUTES"
        return self.predicted if self.predicted in BINARY else None

    @property
    def binary_confidence(self) -> float | None:
        return max(self.p_supported, 1 - self.p_supported) if self.p_supported is not None else None


def records_of(report: EvalReport, dataset: Dataset, services: Services, *, reader: str = "") -> list[ClaimRecord]:
    """The report's rows with the stored runs' stances and evidence read back; ``reader``: the question they were read with."""
    assert services.store is not None
    gold_docs = {item.id: {g.doc_id for g in item.gold_evidence} for item in dataset.items}
    records = []
    for row in report.rows:
        events = services.store.events(row.run_id) if row.run_id else []
        run = digest(events)
        evidence = run.evidence
        stances = [e for e in events if isinstance(e, ExhibitStanceRead)]
        aggregated = [e for e in events if isinstance(e, VerdictAggregated)]
        final = aggregated[-1] if aggregated else None
        exhibits = [
            {
                "id": s.evidence_id,
                "round": s.round,
                "doc_id": evidence[s.evidence_id].doc_id if s.evidence_id in evidence else None,
                "probabilities": s.probabilities,
                "per_order": list(s.per_order),
                "agree": s.orders_agree,
                "quoted": list(s.quoted),
                "text": evidence[s.evidence_id].text if s.evidence_id in evidence else "",
            }
            for s in stances
        ]
        shown = [evidence[s.evidence_id] for s in stances if s.evidence_id in evidence] if stances else list(evidence.values())
        docs = {x["doc_id"] for x in exhibits} if stances else {e.doc_id for e in evidence.values()}
        golds = gold_docs.get(row.id, set())
        found, by_id = deciding(golds, docs, [e.text for e in shown], _passages_of(services, dataset, golds))
        records.append(
            ClaimRecord(
                id=row.id,
                claim=row.claim,
                gold=row.gold,
                predicted=row.predicted,
                p_supported=final.calibrated if final is not None else None,
                raw_supported=final.raw if final is not None else None,
                deciding_found=found,
                deciding_by_id=by_id,
                calls=run.cost.calls - run.cost.cached_calls,
                cached_calls=run.cost.cached_calls,
                tokens=run.cost.tokens_in + run.cost.tokens_out,
                seconds=row.cost.wall_seconds,
                exhibits=exhibits,
                debated=any(a.debated for a in aggregated),
                tokens_read=run.cost.tokens_read,
                reader=reader,
            )
        )
    return records


def deciding(golds: set[str], docs: set[str], texts: Sequence[str], gold_passages: set[str]) -> tuple[bool | None, bool | None]:
    """Whether the deciding document is among what was read: by its id or by one of its passages held word for word, and by id alone.

    ``gold_passages``: the deciding documents' passage texts as ``same_text`` gives them (the rule by which the exhibits
    keep one copy of a text). None, None for a claim without a deciding document.
    """
    if not golds:
        return None, None
    by_id = bool(golds & docs)
    return by_id or bool({same_text(t) for t in texts} & gold_passages), by_id


def _passages_of(services: Services, dataset: Dataset, doc_ids: set[str]) -> set[str]:
    """The texts of the documents' passages in the dataset's corpus, as the search would return them."""
    if not dataset.corpus or not services.index.has(dataset.corpus):
        return set()
    return {same_text(p.text) for doc in sorted(doc_ids) for p in services.index.document(dataset.corpus, doc)}


def summarise(records: Sequence[ClaimRecord], ceiling: float) -> dict[str, Any]:
    """Every figure of one protocol's column."""
    binary = [r for r in records if r.gold in BINARY]
    correct = [r.binary == r.gold for r in binary]
    sided = [r for r in binary if r.binary is not None]
    confident = [r for r in binary if r.binary_confidence is not None]
    ece = (
        metrics.expected_calibration_error([r.binary_confidence for r in confident], [r.binary == r.gold for r in confident], 10)
        if len(confident) == len(binary) and binary
        else None
    )
    stated = [c for c in (r.binary_confidence for r in confident) if c is not None]
    floor = metrics.ece_of_a_calibrated_verdict(stated) if ece is not None and stated else None
    live = [r for r in records if r.calls > 0]  # claims answered from the cache cost no model time
    found = [r.deciding_found for r in records if r.deciding_found is not None]
    gold3 = [r.gold for r in records]
    pred3 = [r.predicted for r in records]
    return {
        "claims": len(records),
        "binary_claims": len(binary),
        "binary_accuracy": _mean(correct),
        "binary_accuracy_when_sided": _mean([r.binary == r.gold for r in sided]),
        "sided": len(sided),
        "accuracy_3": metrics.accuracy(gold3, pred3) if records else None,
        "macro_f1_3": metrics.macro_f1(gold3, pred3, ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")) if records else None,
        "ceiling_3": ceiling,
        "ece": ece,
        "ece_if_calibrated": floor[0] if floor else None,
        "ece_if_calibrated_90": floor[1] if floor else None,
        "selective_50": selective_accuracy(confident, 0.5) if ece is not None else None,
        "selective_80": selective_accuracy(confident, 0.8) if ece is not None else None,
        "deciding_found": _mean(found),
        "deciding_by_id": _mean([r.deciding_by_id for r in records if r.deciding_by_id is not None]),
        "debated": sum(r.debated for r in records),
        "calls_per_claim": _mean([r.calls + r.cached_calls for r in records]),
        "tokens_median": statistics.median([r.tokens for r in live]) if live else None,
        "tokens_mean": _mean([r.tokens for r in live]),
        "tokens_read_median": statistics.median([r.tokens_read for r in live]) if live else None,
        "tokens_read_mean": _mean([r.tokens_read for r in live]),
        "seconds_median": statistics.median([r.seconds for r in live]) if live else None,
        "seconds_mean": _mean([r.seconds for r in live]),
        "seconds_max": max((r.seconds for r in live), default=None),
        "live_claims": len(live),
    }


def selective_accuracy(records: Sequence[ClaimRecord], coverage: float) -> float | None:
    """Binary accuracy on the ``coverage`` share of claims with the highest stated confidence."""
    ranked = sorted(records, key=lambda r: -(r.binary_confidence or 0.0))
    kept = ranked[: max(1, round(len(ranked) * coverage))]
    return _mean([r.binary == r.gold for r in kept])


def _mean(values: Sequence[Any]) -> float | None:
    return sum(values) / len(values) if values else None


ROWS = (
    ("binary accuracy", "binary_accuracy"),
    ("  when it took a side", "binary_accuracy_when_sided"),
    ("3-label accuracy", "accuracy_3"),
    ("3-label ceiling", "ceiling_3"),
    ("3-label macro-F1", "macro_f1_3"),
    ("ECE (binary, 10 bins)", "ece"),
    ("  if perfectly calibrated (median)", "ece_if_calibrated"),
    ("  if perfectly calibrated (90th pct.)", "ece_if_calibrated_90"),
    ("selective acc. @50%", "selective_50"),
    ("selective acc. @80%", "selective_80"),
    ("deciding doc found", "deciding_found"),
    ("  by its id alone", "deciding_by_id"),
    ("debated claims", "debated"),
    ("calls / claim", "calls_per_claim"),
    ("tokens / claim (median)", "tokens_median"),
    ("tokens / claim (mean)", "tokens_mean"),
    ("  read by the model (median)", "tokens_read_median"),
    ("  read by the model (mean)", "tokens_read_mean"),
    ("seconds / claim (median)", "seconds_median"),
    ("seconds / claim (mean)", "seconds_mean"),
    ("seconds / claim (max)", "seconds_max"),
    ("claims that called the model", "live_claims"),
)


def table(columns: dict[str, dict[str, Any]], rows: Sequence[tuple[str, str]] = ROWS) -> str:
    """A Markdown table with a column of figures per name in ``columns``, one line per (title, key) in ``rows``."""
    names = list(columns)
    lines = ["| figure | " + " | ".join(f"`{n}`" for n in names) + " |", "| --- |" + " ---: |" * len(names)]
    for title, key in rows:
        cells = [_fmt(columns[n].get(key)) for n in names]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return str(value)


def apply_settings(config: RunConfig, pairs: Sequence[str]) -> RunConfig:
    """``section.field=value`` overrides (e.g. desk.exhibits=10), validated by the config model."""
    data = config.model_dump()
    for pair in pairs:
        key, _, value = pair.partition("=")
        section, _, name = key.partition(".")
        if not name or section not in data or not isinstance(data[section], dict):
            raise SystemExit(f"--set wants section.field=value, got {pair!r}")
        data[section][name] = json.loads(value) if value[:1] in "[{0123456789-tf" and value not in ("", "-") else value
    return RunConfig.model_validate(data)


def run_bench(
    dataset: Dataset,
    services: Services,
    protocols: Sequence[str],
    *,
    backend: str,
    labels: str = "three",
    limit: int | None = None,
    settings: Sequence[str] = (),
    quiet: bool = False,
    corpus: str = "check-covid",
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """Each protocol on the same claims, one after the other: its column of figures, every claim's record, the harness's report."""
    columns: dict[str, dict[str, Any]] = {}
    reports: dict[str, str] = {}
    all_records: list[dict[str, Any]] = []
    for protocol in protocols:
        config = apply_settings(evaluation_config(RunConfig(), protocol=protocol, backend=backend, corpus=corpus), settings)

        def progress(outcome: Any, done: int, total: int, protocol: str = protocol) -> None:
            if not quiet:
                print(f"  {protocol} {done}/{total} {outcome.id} {outcome.verdict} {outcome.seconds:.1f}s", file=sys.stderr, flush=True)

        report = evaluate(dataset, config, services, labels=labels, limit=limit, on_outcome=progress)  # type: ignore[arg-type]
        records = records_of(report, dataset, services, reader=exhibit_settings(config).reader)
        columns[protocol] = summarise(records, report.ceiling)
        reports[protocol] = format_report(report)
        all_records += [{"protocol": protocol, **r.__dict__} for r in records]
    return columns, all_records, reports


def claims_of(dataset: Dataset, records: Path, *, binary: bool, limit: int | None = None) -> Dataset:
    """The dataset cut to the claims a records file holds, in the file's order (a paired comparison with an earlier run)."""
    ids = list(dict.fromkeys(row["id"] for row in read_json_lines(records)))
    by_id = {item.id: item for item in dataset.items}
    items = tuple(by_id[i] for i in ids if i in by_id and (not binary or by_id[i].label in BINARY))
    return Dataset(dataset.name, dataset.split, items[:limit], dataset.corpus, dataset.source)


def add_sample_options(parser: argparse.ArgumentParser, *, limit: int | None) -> None:
    """The options this bench and the protocols bench share: which claims, on which backend, with which settings, where."""
    parser.add_argument(
        "--dataset",
        default="check-covid",
        help="check-covid, or a JSONL file of claims (e.g. ../shared/data/liar-plus/liar_dev_binary.jsonl)",
    )
    parser.add_argument("--corpus", default="", help="the corpus searched (ingested in the data folder first); default: check-covid")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=limit)
    parser.add_argument("--skip", type=int, default=0, help="leave out the sample's first M claims (read in an earlier part)")
    parser.add_argument("--labels", choices=("three", "binary"), default="three")
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--set", action="append", default=[], help="a run option, e.g. desk.exhibits=10 (repeatable)")
    parser.add_argument("--data-dir", default="", help="reuse this data folder (its index and response cache); default: a fresh one")
    parser.add_argument(
        "--claims-from",
        default="",
        help="run the claims of this records file (JSON lines, gzip allowed), in its order (with --limit: its first N)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_sample_options(parser, limit=None)
    parser.add_argument("--protocols", default="desk,single")
    parser.add_argument("--records", default="", help="write every claim's record (with the exhibits' stances) as JSON lines")
    parser.add_argument("--out", default="", help="write the table and the reports to OUT.md / OUT-PROTOCOL.txt")
    args = parser.parse_args()

    data_dir = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="desk-bench-"))
    settings = AppSettings(data_dir=data_dir)
    services = Services.create(settings)
    dataset = load_dataset(args.dataset, args.split, checkcovid_dir=settings.checkcovid_dir)
    corpus = args.corpus or dataset.corpus or "check-covid"
    dataset = Dataset(dataset.name, dataset.split, dataset.items, corpus, dataset.source)
    protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    limit = args.limit
    if args.claims_from:
        dataset = claims_of(dataset, Path(args.claims_from), binary=args.labels == "binary", limit=limit)
        limit = None
    if args.skip:
        sample = select_items(dataset, args.labels, limit, seed=0)  # type: ignore[arg-type]
        dataset = Dataset(dataset.name, dataset.split, sample.items[args.skip :], dataset.corpus, dataset.source)
        limit = None
    columns, all_records, reports = run_bench(
        dataset, services, protocols, backend=args.backend, labels=args.labels, limit=limit, settings=args.set, corpus=corpus
    )
    for body in reports.values():
        print(body, file=sys.stderr)
    heading = f"{dataset.name} {args.split if args.dataset == 'check-covid' else ''}, {args.backend}, {len(all_records) // max(1, len(columns))} claims ({args.labels} labels)"
    text = f"{heading}\n\n{table(columns)}\n"
    print(text)
    if args.records:
        Path(args.records).parent.mkdir(parents=True, exist_ok=True)
        Path(args.records).write_text("".join(json.dumps(r) + "\n" for r in all_records))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".md").write_text(text)
        for protocol, body in reports.items():
            out.with_name(f"{out.name}-{protocol}.txt").write_text(body + "\n")
        out.with_name(f"{out.name}-summary.json").write_text(json.dumps(columns, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""The evaluation harness: run a dataset's claims as normal stored runs, then score them.

``evaluate`` samples the claims (a fixed, label-balanced sample for a seed), runs them
through the batch queue (``pipelines.run.batch``: bounded concurrency, a failed claim reported
and the rest going on), maps every verdict onto the canonical labels (``labels``) and
computes the metrics (``metrics``). The report keeps every claim's row, so past evaluations
can be compared and audited down to the run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from pipelines.core.config import RunConfig
from pipelines.core.domain import Label
from pipelines.eval import metrics
from pipelines.eval.datasets import Dataset, EvalItem
from pipelines.eval.labels import LabelMode, canonical, classes, keeps
from pipelines.record.digest import Cost
from pipelines.run.batch import BatchItem, ClaimOutcome, iter_batch
from pipelines.run.services import Services

ECE_BINS = 10


class ClaimScore(BaseModel):
    """One claim of an evaluation: gold and predicted label, the evidence it found, and its cost."""

    model_config = ConfigDict(frozen=True)

    id: str
    claim: str
    gold: str
    predicted: str | None  # canonical label; None when the run failed or its label is not in the mapping
    verdict: str | None  # the protocol's own label
    confidence: float | None
    correct: bool
    evidence_recall: float | None  # share of the gold rationale's sentences retrieved; None without gold
    document_found: bool | None  # whether any gold document was retrieved at all
    status: str
    error: str = ""
    run_id: str | None = None
    cost: Cost = Cost()  # wall_seconds: the claim's own run
    retrieval_calls: int = 0

    @model_validator(mode="before")
    @classmethod
    def _cost_from_flat_fields(cls, data: Any) -> Any:
        return cost_from_flat_fields(data)

    def flat_row(self) -> dict[str, Any]:
        """The row as the per-claim CSV's columns: the cost spread over model_calls, cached_calls, tokens_in, tokens_out and seconds."""
        row = self.model_dump(mode="json", exclude={"cost"})
        return {**row, **flat_cost(self.cost)}


class EvalReport(BaseModel):
    """A finished evaluation: what ran, the metrics, and every claim's row."""

    id: str
    created_at: float
    dataset: str
    split: str
    source: str = ""
    protocol: str
    backend: str
    labels: LabelMode
    seed: int
    limit: int | None
    claims: int
    failed: int
    accuracy: float
    macro_f1: float
    per_class: dict[str, metrics.ClassScore]
    confusion: metrics.ConfusionMatrix
    calibration: metrics.Calibration
    evidence_recall: float | None
    evidence_recall_claims: int
    document_recall: float | None
    cost: Cost  # every claim's calls and tokens; wall_seconds: the whole evaluation, claims run side by side
    retrieval_calls: int
    concurrency: int = 1
    config: dict[str, Any] = Field(default_factory=dict)
    rows: list[ClaimScore] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ceiling(self) -> float:
        """The best accuracy reachable from the claims' text alone (metrics.text_ceiling); from the rows, so old reports have it too."""
        return self._ceiling().accuracy

    @computed_field  # type: ignore[prop-decorator]
    @property
    def conflicting_claims(self) -> int:
        """Claims whose exact text also carries another gold label in this report."""
        return self._ceiling().conflicting

    def _ceiling(self) -> metrics.Ceiling:
        return metrics.text_ceiling([r.claim for r in self.rows], [r.gold for r in self.rows])

    @property
    def title(self) -> str:
        return f"{self.protocol} · {self.backend} · {self.dataset}/{self.split} · {self.claims} claims ({self.labels})"

    @model_validator(mode="before")
    @classmethod
    def _cost_from_flat_fields(cls, data: Any) -> Any:
        return cost_from_flat_fields(data)

    def per_claim(self, name: str) -> float:
        """Mean per claim of a ``Cost`` field (calls, tokens_in, tokens_out, wall_seconds...) or of retrieval_calls."""
        if not self.rows:
            return 0.0
        return sum(float(getattr(r.cost, name) if name in Cost.model_fields else getattr(r, name)) for r in self.rows) / len(self.rows)


# Reports saved before the cost was one field spread it over these; they still load.
FLAT_COST = {
    "model_calls": "calls",
    "cached_calls": "cached_calls",
    "tokens_in": "tokens_in",
    "tokens_out": "tokens_out",
    "seconds": "wall_seconds",
}


def cost_from_flat_fields(data: Any) -> Any:
    if not isinstance(data, dict) or "cost" in data or not any(name in data for name in FLAT_COST):
        return data
    rest = {k: v for k, v in data.items() if k not in FLAT_COST}
    return {**rest, "cost": {field: data[name] for name, field in FLAT_COST.items() if name in data}}


def flat_cost(cost: Cost) -> dict[str, Any]:
    return {name: getattr(cost, field) for name, field in FLAT_COST.items()}


OutcomeListener = Callable[[ClaimOutcome, int, int], None]


def evaluation_config(
    base: RunConfig,
    *,
    protocol: str,
    backend: str | None = None,
    model: str = "",
    corpus: str | None = None,
    web_search: bool = False,
) -> RunConfig:
    """The run config of an evaluation: one protocol, every role on one backend, web search off unless asked.

    Web search is off by default so an evaluation repeats exactly, offline, on the corpus the
    dataset's gold evidence points into.
    """
    config = base.model_copy(update={"protocol": protocol})
    if backend:
        config = config.with_backend(backend, model)
    if corpus:
        config = config.model_copy(update={"corpus": corpus})
    return config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"web_search": web_search})})


def select_items(dataset: Dataset, labels: LabelMode, limit: int | None, seed: int) -> Dataset:
    """The claims an evaluation runs: those scored in ``labels`` mode, then the fixed sample."""
    kept = tuple(item for item in dataset.items if keeps(item.label, labels))
    return Dataset(dataset.name, dataset.split, kept, dataset.corpus, dataset.source).sample(limit, seed)


def evaluate(
    dataset: Dataset,
    config: RunConfig,
    services: Services,
    *,
    labels: LabelMode = "three",
    limit: int | None = None,
    seed: int = 0,
    concurrency: int = 1,
    extra_labels: Mapping[str, Label] | None = None,
    on_outcome: OutcomeListener | None = None,
) -> EvalReport:
    """Run and score ``limit`` claims of ``dataset`` (all when None); ``on_outcome(outcome, done, total)`` reports progress."""
    sample = select_items(dataset, labels, limit, seed)
    by_index = dict(enumerate(sample.items))
    batch = [BatchItem(index=i, id=item.id, claim=item.claim) for i, item in by_index.items()]
    services.ensure_corpus(config.corpus)  # a first-time index build is not part of the evaluation's time
    started = time.perf_counter()
    outcomes: dict[int, ClaimOutcome] = {}
    for outcome in iter_batch(batch, config, services, concurrency=concurrency):
        outcomes[outcome.index] = outcome
        if on_outcome is not None:
            on_outcome(outcome, len(outcomes), len(batch))
    rows = [score_claim(by_index[i], outcomes[i], extra_labels) for i in sorted(outcomes)]
    return build_report(
        rows,
        labels=labels,
        dataset=sample,
        config=config,
        seed=seed,
        limit=limit,
        seconds=time.perf_counter() - started,
        concurrency=concurrency,
    )


def score_claim(item: EvalItem, outcome: ClaimOutcome, extra_labels: Mapping[str, Label] | None = None) -> ClaimScore:
    """One claim's row: the verdict mapped to a canonical label, compared with gold; evidence against the rationale."""
    predicted = canonical(outcome.verdict, extra_labels) if outcome.status == "completed" else None
    gold_pairs = [(g.doc_id, g.sentence) for g in item.gold_evidence]
    gold_docs = {doc for doc, _ in gold_pairs}
    retrieved_docs = {doc for doc, _ in outcome.retrieved_sentences}
    error = outcome.error
    if outcome.status == "completed" and predicted is None:
        error = f"verdict {outcome.verdict!r} is not in the label mapping (pipelines/eval/labels.py); counted as wrong"
    return ClaimScore(
        id=item.id,
        claim=item.claim,
        gold=item.label,
        predicted=predicted,
        verdict=outcome.verdict,
        confidence=outcome.confidence,
        correct=predicted == item.label,
        evidence_recall=metrics.evidence_recall(gold_pairs, outcome.retrieved_sentences),
        document_found=bool(gold_docs & retrieved_docs) if gold_docs else None,
        status=outcome.status,
        error=error,
        run_id=outcome.run_id,
        cost=outcome.cost,
        retrieval_calls=outcome.retrieval_calls,
    )


def build_report(
    rows: list[ClaimScore],
    *,
    labels: LabelMode,
    dataset: Dataset,
    config: RunConfig,
    seed: int,
    limit: int | None,
    seconds: float,
    concurrency: int = 1,
) -> EvalReport:
    """Every metric over the claims' rows (pure: no runs, no I/O)."""
    scored = classes(labels)
    gold = [r.gold for r in rows]
    predicted = [r.predicted for r in rows]
    recalls = [r.evidence_recall for r in rows if r.evidence_recall is not None]
    found = [r.document_found for r in rows if r.document_found is not None]
    created = time.time()
    return EvalReport(
        id=f"{time.strftime('%Y%m%d-%H%M%S', time.localtime(created))}-{config.protocol}-{uuid.uuid4().hex[:6]}",
        created_at=created,
        dataset=dataset.name,
        split=dataset.split,
        source=dataset.source,
        protocol=config.protocol,
        backend=_backends(config),
        labels=labels,
        seed=seed,
        limit=limit,
        claims=len(rows),
        failed=sum(r.status != "completed" for r in rows),
        accuracy=metrics.accuracy(gold, predicted),
        macro_f1=metrics.macro_f1(gold, predicted, scored),
        per_class=metrics.per_class_scores(gold, predicted, scored),
        confusion=metrics.confusion_matrix(gold, predicted, scored),
        calibration=metrics.calibration(
            [r.confidence if r.status == "completed" else None for r in rows], [r.correct for r in rows], ECE_BINS
        ),
        evidence_recall=metrics.mean(recalls),
        evidence_recall_claims=len(recalls),
        document_recall=sum(found) / len(found) if found else None,
        cost=Cost.total(r.cost for r in rows).model_copy(update={"wall_seconds": round(seconds, 3)}),
        retrieval_calls=sum(r.retrieval_calls for r in rows),
        concurrency=concurrency,
        config=config.snapshot(),
        rows=rows,
    )


def _backends(config: RunConfig) -> str:
    names = list(dict.fromkeys(config.role(r).backend for r in ("debater", "judge", "scorer")))
    return names[0] if len(names) == 1 else "/".join(names)


def format_report(report: EvalReport) -> str:
    """The report as the CLI prints it: the headline metrics, per class, the confusion matrix, cost per claim."""
    cal = report.calibration
    ece = (
        f"{cal.ece:.3f} over {cal.covered} of {cal.total} claims"
        if cal.ece is not None
        else f"n/a: the {report.protocol} verdicts carry no confidence"
    )
    recall = (
        f"{report.evidence_recall:.3f} over {report.evidence_recall_claims} claims with a gold rationale"
        if report.evidence_recall is not None
        else "n/a (no gold rationale)"
    )
    lines = [
        f"evaluation {report.id}: {report.title}",
        f"  accuracy        {report.accuracy:.3f}",
        *ceiling_lines(report),
        f"  macro-F1        {report.macro_f1:.3f}",
        f"  ECE             {ece}",
        f"  evidence recall {recall}",
    ]
    if report.document_recall is not None:
        lines.append(f"  document found  {report.document_recall:.3f} (a gold document anywhere in the retrieved evidence)")
    lines.append(f"  failed runs     {report.failed} of {report.claims}")
    lines.append("  per class        precision  recall     F1  support")
    for label, s in report.per_class.items():
        lines.append(f"    {label:<16} {s.precision:>7.3f} {s.recall:>7.3f} {s.f1:>6.3f} {s.support:>8}")
    width = max(len(c) for c in report.confusion.columns) + 1
    lines.append("  confusion (rows gold, columns predicted)")
    lines.append("    " + " " * 17 + "".join(f"{c:>{width}}" for c in report.confusion.columns))
    for label, counts in zip(report.confusion.rows, report.confusion.counts, strict=True):
        lines.append(f"    {label:<17}" + "".join(f"{n:>{width}}" for n in counts))
    lines.append(
        f"  cost per claim  {report.per_claim('calls'):.1f} model calls ({report.cost.cached_calls} cached in all), "
        f"{report.per_claim('tokens_in'):.0f} tokens in, {report.per_claim('tokens_out'):.0f} out, "
        f"{report.per_claim('retrieval_calls'):.1f} retrievals, {report.per_claim('wall_seconds'):.2f} s"
    )
    lines.append(f"  wall time       {report.cost.wall_seconds:.1f} s for {report.claims} claims at concurrency {report.concurrency}")
    return "\n".join(lines)


def ceiling_note(report: EvalReport) -> str:
    """Why the accuracy cannot reach 1 on this sample, or "" when nothing caps it."""
    if not report.conflicting_claims:
        return ""
    return (
        f"{report.conflicting_claims} of the {report.claims} claims share their exact text with a claim of another gold label: "
        f"a system that answers the same text the same way can reach at most {report.ceiling:.3f} accuracy here"
    )


def ceiling_lines(report: EvalReport) -> list[str]:
    note = ceiling_note(report)
    return [f"  ceiling         {report.ceiling:.3f} ({note})"] if note else []


def format_claims(report: EvalReport) -> str:
    """One line per claim: id, gold, predicted, confidence, evidence recall, cost."""
    lines = ["  id                          gold             predicted        conf  ev.rec calls  tok.in tok.out retr      s  run"]
    for r in report.rows:
        conf = f"{r.confidence:.2f}" if r.confidence is not None else "  - "
        rec = f"{r.evidence_recall:.2f}" if r.evidence_recall is not None else "  - "
        lines.append(
            f"  {r.id[:27]:<27} {r.gold:<16} {r.predicted or r.status!s:<16} {conf:>5} {rec:>6} {r.cost.calls:>5} "
            f"{r.cost.tokens_in:>7} {r.cost.tokens_out:>7} {r.retrieval_calls:>4} {r.cost.wall_seconds:>6.1f}  {r.run_id or r.error[:60]}"
        )
    return "\n".join(lines)

"""Batch checking for a desk: a file (or a pasted list) of claims run as a queue with bounded concurrency.

Each claim becomes a normal stored run (``runner.stream_run``); a claim that fails is
reported with its reason and the rest go on. Results come back as they finish, so a page
or the CLI can show progress, and export as CSV or JSON lines with one row per claim,
failed ones included.

Input: CSV with a ``claim`` column (``id`` optional; other columns are ignored), JSON lines
with a ``"claim"`` field (``"id"`` optional), or plain text with one claim per line.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from corpora.jsonl import jsonl_objects
from pipelines.core.config import RunConfig
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import Event
from pipelines.core.text.safety import UnsafeClaimError, check_claim_text, csv_cell
from pipelines.record.digest import Cost, digest
from pipelines.record.labels import common_label
from pipelines.run.llm.limits import Budget, describe_stop
from pipelines.run.runner import check_names, check_priced, stream_run, under_desk_limits
from pipelines.run.services import Services

log = logging.getLogger(__name__)

MAX_BATCH_CLAIMS = 1000
MAX_CONCURRENCY = 16
CLAIM_COLUMNS = ("claim", "text")
Status = Literal["completed", "failed", "stopped", "skipped"]  # stopped: by a spend limit; skipped: never started (the batch's limit)
EXPORT_FIELDS = (
    "index", "id", "claim", "status", "verdict", "protocol_word", "confidence", "decided_by", "sources", "rationale", "error", "run_id",
    "model_calls", "cached_calls", "tokens_in", "tokens_out", "spent", "retrieval_calls", "seconds",
)  # fmt: skip


class BatchInputError(DebateDeskError, ValueError):
    """A batch file or list that cannot be read; the message says what is wrong and how to fix it."""


@dataclass(frozen=True)
class BatchItem:
    """One claim of a batch: its position in the input, an id (given, or the row number) and the text."""

    index: int
    id: str
    claim: str
    fields: tuple[tuple[str, str], ...] = ()  # the row's other columns (lower-case name, text), for the claims queue


@dataclass(frozen=True)
class ClaimOutcome:
    """What became of one claim: the run's verdict and cost, or why it failed."""

    index: int
    id: str
    claim: str
    status: Status
    run_id: str | None = None
    verdict: str | None = None
    confidence: float | None = None
    decided_by: str = ""
    rationale: str = ""
    sources: tuple[str, ...] = ()
    error: str = ""
    cost: Cost = field(default_factory=Cost)  # wall_seconds: from submitting the claim to its outcome
    retrieval_calls: int = 0
    # (document id, sentence index) of every corpus sentence the run retrieved: for evidence recall.
    retrieved_sentences: tuple[tuple[str, int], ...] = field(default=(), repr=False)

    @property
    def seconds(self) -> float:
        return self.cost.wall_seconds

    def export_row(self) -> dict[str, Any]:
        cost = self.cost
        flat: dict[str, int | float | None] = {
            "model_calls": cost.calls,
            "cached_calls": cost.cached_calls,
            "tokens_in": cost.tokens_in,
            "tokens_out": cost.tokens_out,
        }
        flat["spent"] = round(cost.spent, 6) if cost.priced else None  # None (an empty cell): the run had no prices
        words = {"verdict": common_label(self.verdict) if self.verdict else None, "protocol_word": self.verdict}  # the one vocabulary
        row = {name: flat[name] if name in flat else words[name] if name in words else getattr(self, name) for name in EXPORT_FIELDS}
        row["sources"] = list(self.sources)
        return row


# --- input ---------------------------------------------------------------------------


def parse_claims_file(data: bytes, filename: str) -> list[BatchItem]:
    """Claims from an uploaded ``.csv``, ``.jsonl`` or ``.txt`` file."""
    suffix = Path(filename).suffix.lower()
    if suffix not in (".csv", ".jsonl", ".txt"):
        raise BatchInputError(f"{filename}: use a .csv file with a 'claim' column, a .jsonl file, or a .txt file with one claim per line")
    text = _decode(data, filename)
    if not text.strip():
        raise BatchInputError(f"{filename}: the file is empty")
    if suffix == ".csv":
        return _from_csv(text, filename)
    if suffix == ".jsonl":
        return _from_jsonl(text, filename)
    return parse_claims_text(text, filename)


def parse_claims_text(text: str, where: str = "the list") -> list[BatchItem]:
    """One claim per non-blank line (as pasted into the page)."""
    claims = [" ".join(line.split()) for line in text.splitlines()]
    items = [BatchItem(index=i, id=str(i + 1), claim=c) for i, c in enumerate(c for c in claims if c)]
    return _checked(items, where)


def _decode(data: bytes, filename: str) -> str:
    if b"\x00" in data[:4096]:
        raise BatchInputError(f"{filename}: this is a binary file, not text; export it as CSV (UTF-8) or JSON lines")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BatchInputError(
            f"{filename}: not UTF-8 text (byte 0x{data[exc.start]:02x} at position {exc.start}); save it as UTF-8 (in Excel: 'CSV UTF-8')"
        ) from exc


def _from_csv(text: str, filename: str) -> list[BatchItem]:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel  # type: ignore[assignment]
    reader = csv.DictReader(io.StringIO(text), dialect=dialect)
    columns = {(name or "").strip().lower(): name for name in reader.fieldnames or []}
    claim_column = next((columns[c] for c in CLAIM_COLUMNS if c in columns), None)
    if claim_column is None:
        found = ", ".join(repr(n) for n in reader.fieldnames or []) or "none"
        raise BatchInputError(f"{filename}: no 'claim' column (found columns: {found}); name the column that holds the claims 'claim'")
    id_column = columns.get("id")
    items: list[BatchItem] = []
    empty: list[int] = []
    for row in reader:
        line = reader.line_num
        claim = " ".join(str(row.get(claim_column) or "").split())
        if not claim:
            if any((v or "").strip() for v in row.values() if isinstance(v, str)):
                empty.append(line)
            continue
        given = str(row.get(id_column) or "").strip() if id_column else ""
        others = tuple(
            (k.strip().lower(), str(v).strip()) for k, v in row.items() if k and k not in (claim_column, id_column) and isinstance(v, str)
        )
        items.append(BatchItem(index=len(items), id=given or str(len(items) + 1), claim=claim, fields=others))
    if empty:
        raise BatchInputError(
            f"{filename}: empty claim on line{'s' if len(empty) > 1 else ''} {_lines(empty)}; fill them in or delete the rows"
        )
    if not items:
        raise BatchInputError(f"{filename}: no claims; the file has a header but no rows with a claim")
    return _checked(items, filename)


def _from_jsonl(text: str, filename: str) -> list[BatchItem]:
    items: list[BatchItem] = []
    for number, row in jsonl_objects(
        text, filename, BatchInputError, expected='an object like {"claim": "..."}', hint="write one JSON object per line"
    ):
        value = next((row[c] for c in CLAIM_COLUMNS if c in row), None)
        if not isinstance(value, str) or not value.strip():
            found = ", ".join(sorted(row)) or "none"
            raise BatchInputError(f'{filename} line {number}: needs a non-empty "claim" (found fields: {found})')
        given = str(row.get("id") or "").strip()
        others = tuple((str(k).lower(), _scalar_text(v)) for k, v in row.items() if k not in (*CLAIM_COLUMNS, "id") and v is not None)
        items.append(BatchItem(index=len(items), id=given or str(len(items) + 1), claim=" ".join(value.split()), fields=others))
    return _checked(items, filename)


def _scalar_text(value: Any) -> str:
    """A JSON field as text: a list (tags) joined with commas, anything else as written."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value)


def _checked(items: list[BatchItem], where: str) -> list[BatchItem]:
    if not items:
        raise BatchInputError(f"{where}: no claims; give one claim per line")
    if len(items) > MAX_BATCH_CLAIMS:
        raise BatchInputError(f"{where}: {len(items):,} claims; the limit is {MAX_BATCH_CLAIMS:,} per batch, so split the file")
    seen: dict[str, int] = {}
    for item in items:
        try:
            check_claim_text(item.claim, f"claim {item.index + 1} (id {item.id!r})")
        except UnsafeClaimError as exc:
            raise BatchInputError(f"{where}: {exc}") from None
        if item.id in seen:
            raise BatchInputError(
                f"{where}: id {item.id!r} is used twice (claims {seen[item.id] + 1} and {item.index + 1}); ids must be unique"
            )
        seen[item.id] = item.index
    return items


def _lines(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:5])
    return shown + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")


# --- running -------------------------------------------------------------------------


def run_claim(item: BatchItem, config: RunConfig, services: Services, batch_budget: Budget | None = None) -> ClaimOutcome:
    """Run one claim as a normal stored run; never raises for a failed claim (the outcome says why)."""
    started = time.perf_counter()
    events: list[Event] = []
    try:
        for evt in stream_run(item.claim, config, services, batch_budget=batch_budget):
            events.append(evt)
    except DebateDeskError as exc:  # refused before it started (empty or huge claim, unknown corpus...)
        return ClaimOutcome(
            item.index, item.id, item.claim, "failed", error=str(exc), cost=Cost(wall_seconds=time.perf_counter() - started)
        )
    except Exception as exc:  # a bug in one run must not sink the batch; it is logged and reported
        log.exception("claim %s of a batch crashed", item.id)
        return outcome_from_events(item, events, time.perf_counter() - started, crash=f"internal error (please report): {exc!r}")
    return outcome_from_events(item, events, time.perf_counter() - started)


def outcome_from_events(item: BatchItem, events: Sequence[Event], seconds: float, crash: str = "") -> ClaimOutcome:
    """A claim's outcome read off its run's events."""
    run = digest(events)
    verdict = run.verdict
    retrieved = sorted({(e.doc_id, i) for e in run.evidence.values() if e.doc_id for i in e.sentence_indices})
    error = crash or run.failure or run.interruption or ("" if verdict else "the run ended without a verdict")
    status: Status = "completed" if verdict is not None and not error else "failed"
    if not crash and run.failure is None and run.stopped_by is not None:
        status = "stopped"
    return ClaimOutcome(
        index=item.index,
        id=item.id,
        claim=item.claim,
        status=status,
        run_id=run.run_id,
        verdict=verdict.label if verdict else None,
        confidence=verdict.confidence if verdict else None,
        decided_by=verdict.decided_by if verdict else "",
        rationale=verdict.rationale if verdict else "",
        sources=tuple(dict.fromkeys(e.source_label for e in run.cited_evidence())),
        error=error,
        cost=run.cost.model_copy(update={"wall_seconds": round(seconds, 3)}),
        retrieval_calls=run.queries,
        retrieved_sentences=tuple(retrieved),
    )


def iter_batch(
    items: Sequence[BatchItem],
    config: RunConfig,
    services: Services,
    *,
    concurrency: int = 2,
    runner: Callable[[BatchItem, RunConfig, Services, Budget | None], ClaimOutcome] = run_claim,
) -> Iterator[ClaimOutcome]:
    """Run the claims, at most ``concurrency`` at a time, yielding each outcome as it finishes.

    Claims start in input order. Model calls of all the runs share one bound per endpoint
    (``Services.limiters``), so K claims at once never send more than the role's
    ``concurrency`` calls to the same server. Closing the iterator early lets the claims
    already started finish and starts no more. The batch's spend limits (``config.budget``)
    are shared by its runs: a run that reaches one stops between calls, and once one is
    reached no claim starts; each claim not started comes back ``skipped`` saying so.
    """
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise BatchInputError(f"concurrency must be between 1 and {MAX_CONCURRENCY}, got {concurrency}")
    # Names, prices and the corpus are checked (and a built-in corpus indexed) once, not by K claims at once.
    config, _desk = under_desk_limits(config, services)
    check_names(config)
    check_priced(config)
    services.ensure_corpus(config.corpus)
    queue = list(items)
    spend = Budget.for_batch(config.budget) if config.budget.limits_batch else None
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="batch") as pool:
        running: set[Future[ClaimOutcome]] = set()
        try:
            while queue or running:
                stop = spend.reached() if spend is not None else None
                if stop is not None:
                    yield from (_skipped(item, describe_stop(stop)) for item in queue)
                    queue.clear()
                while queue and len(running) < concurrency:
                    running.add(pool.submit(runner, queue.pop(0), config, services, spend))
                if not running:
                    break
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: f.result().index):
                    yield future.result()
        finally:
            queue.clear()


def _skipped(item: BatchItem, why: str) -> ClaimOutcome:
    return ClaimOutcome(item.index, item.id, item.claim, "skipped", error=f"not started: {why}")


def run_batch(
    items: Sequence[BatchItem],
    config: RunConfig,
    services: Services,
    *,
    concurrency: int = 2,
    on_outcome: Callable[[ClaimOutcome], None] | None = None,
) -> list[ClaimOutcome]:
    """Every claim's outcome, in input order (``on_outcome`` sees each one as it finishes)."""
    outcomes = []
    for outcome in iter_batch(items, config, services, concurrency=concurrency):
        if on_outcome is not None:
            on_outcome(outcome)
        outcomes.append(outcome)
    return sorted(outcomes, key=lambda o: o.index)


# --- output --------------------------------------------------------------------------


def to_csv(outcomes: Sequence[ClaimOutcome]) -> str:
    """One row per claim (failed ones included), sources joined with '; '."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(EXPORT_FIELDS), lineterminator="\r\n")  # RFC 4180; a field holding "\r" is quoted too
    writer.writeheader()
    for outcome in sorted(outcomes, key=lambda o: o.index):
        row = outcome.export_row()
        row["sources"] = "; ".join(row["sources"])
        writer.writerow({name: csv_cell(value) for name, value in row.items()})  # a claim like "=HYPERLINK(..)" stays text
    return buffer.getvalue()


def to_jsonl(outcomes: Sequence[ClaimOutcome]) -> str:
    """One JSON object per claim (failed ones included)."""
    return "".join(json.dumps(o.export_row(), ensure_ascii=False) + "\n" for o in sorted(outcomes, key=lambda o: o.index))


def outcome_dict(outcome: ClaimOutcome) -> dict[str, Any]:
    """Every field, JSON-ready (what an evaluation report keeps per claim)."""
    data = asdict(outcome)
    data["sources"] = list(outcome.sources)
    data["retrieved_sentences"] = [list(pair) for pair in outcome.retrieved_sentences]
    return data

"""Export a stored run (JSON record, Markdown report, schema.org ClaimReview) and import a JSON record back.

Pure functions over a run's summary and events: the UI offers them as downloads, the CLI
writes them to files. The JSON record is the whole run with a versioned schema
(``format`` + ``schema_version``); ``load_record`` validates a file in that schema (ours or
written by hand) and lists every problem it finds instead of stopping at the first.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipelines import __version__
from pipelines.errors import DebateDeskError
from pipelines.events import (
    CheckerAddedEvidence,
    CheckerAdmittedEvidence,
    CheckerStruckEvidence,
    Event,
    EvidenceRetrieved,
    QueryIssued,
    RoundStarted,
    RunFailed,
    RunInterrupted,
    RunResumed,
    RunStarted,
    StageFailed,
    TurnCompleted,
    dump_event,
    parse_event,
)
from pipelines.record.digest import RunDigest, describe_intervention, digest
from pipelines.record.store import RUN_STATUSES, RunStore, RunSummary
from pipelines.record.verdict_card import ModelSide, audit_trail, common_label, verdict_card
from pipelines.text.probability import decimal
from pipelines.text.safety import (
    JsonTooDeepError,
    UnsafeTextError,
    check_claim_text,
    csv_cell,
    escape_markdown,
    json_for_html,
    load_json,
    public_http_url,
    terminal_text,
)
from pipelines.text.urls import scrub_url

FORMAT = "debatedesk.run"
SCHEMA_VERSION = 1
MAX_IMPORT_BYTES = 50 * 1024 * 1024
ExportFormat = Literal["json", "md", "csv", "claimreview"]
EXPORT_FORMATS: dict[str, tuple[str, str]] = {  # format -> (file suffix, MIME type)
    "json": (".json", "application/json"),
    "md": (".md", "text/markdown"),
    "csv": (".csv", "text/csv"),
    "claimreview": (".jsonld", "application/ld+json"),
}


class RecordError(DebateDeskError, ValueError):
    """A file that is not a valid run record; ``problems`` lists every reason, each with where it is."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        shown = problems[:25] + ([f"... and {len(problems) - 25} more"] if len(problems) > 25 else [])
        super().__init__("this file is not a valid DebateDesk run record:\n" + "\n".join(f"- {p}" for p in shown))


class Totals(BaseModel):
    """A run's cost as the record file spells it (format v1): the digest's ``Cost`` under these names, and the event count."""

    model_config = ConfigDict(extra="forbid")

    model_calls: int = Field(ge=0, description="ModelCallCompleted events")
    tokens_in: int = Field(ge=0)
    tokens_out: int = Field(ge=0)
    model_seconds: float = Field(ge=0)
    events: int = Field(ge=0)


class RunInfo(BaseModel):
    """The run's row: what was checked, how, when, and how it ended."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    claim: str = Field(min_length=1, max_length=2000)
    protocol: str = Field(min_length=1, max_length=64)
    status: Literal["running", "completed", "failed", "interrupted"]
    created_at: float = Field(description="epoch seconds")
    finished_at: float | None = None
    app_version: str = "unknown"
    config: dict[str, Any] = Field(default_factory=dict, description="the run's config snapshot, without API keys")
    verdict: str | None = Field(default=None, description="the model's verdict")
    confidence: float | None = Field(default=None, ge=0, le=1)
    checker_verdict: str | None = None
    checker_note: str | None = None
    checker_by: str | None = None
    checker_at: float | None = Field(default=None, description="when the checker set their verdict (epoch seconds); from the events")
    attempts: int = Field(default=1, ge=1)
    origin: str = "run"
    totals: Totals | None = Field(default=None, description="recomputed from the events on import; must match when given")


class RunRecord(BaseModel):
    """A whole run as one JSON document (the export and import format)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["debatedesk.run"] = "debatedesk.run"
    schema_version: Literal[1] = 1
    exported_at: float | None = None
    exported_by: str = Field(default="", description="the app version that wrote the file")
    run: RunInfo
    events: list[dict[str, Any]] = Field(min_length=1)


def record_schema() -> dict[str, Any]:
    """The JSON Schema of the record (events are checked one by one against their own types)."""
    return RunRecord.model_json_schema()


# --- JSON -------------------------------------------------------------------------------------


def to_record(summary: RunSummary, events: Sequence[Event]) -> dict[str, Any]:
    """The whole run as a JSON-ready dict in the versioned schema."""
    derived = {"totals", "checker_at"}  # read off the events, not the run's row
    same_name = {name: getattr(summary, name) for name in RunInfo.model_fields if name not in derived}  # the run's row
    read = digest(events)
    checker_at = read.override.at if read.override is not None and summary.checker_verdict else None  # a row stored before checker_at too
    info = RunInfo(**same_name, totals=totals_of(read), checker_at=checker_at)
    record = RunRecord(
        exported_at=round(time.time(), 3), exported_by=f"DebateDesk {__version__}", run=info, events=[dump_event(e) for e in events]
    )
    return record.model_dump(mode="json")


def to_json(summary: RunSummary, events: Sequence[Event]) -> str:
    """The record as JSON text; ``<`` ``>`` ``&`` are \\u-escaped, so it is safe to embed in HTML and parses the same."""
    return json_for_html(to_record(summary, events)) + "\n"


def totals_of(run: RunDigest) -> Totals:
    cost = run.cost
    return Totals(
        model_calls=cost.calls,
        tokens_in=cost.tokens_in,
        tokens_out=cost.tokens_out,
        model_seconds=round(cost.model_seconds, 4),
        events=run.events,
    )


def load_record(data: str | bytes) -> tuple[RunSummary, list[Event]]:
    """Validate a JSON record and return the run and its events; raises RecordError listing every problem."""
    if len(data) > MAX_IMPORT_BYTES:
        raise RecordError([f"the file is {len(data) / 1e6:.1f} MB; the limit is {MAX_IMPORT_BYTES / 1e6:.0f} MB"])
    try:
        raw = load_json(data, "the file")
    except JsonTooDeepError as exc:
        raise RecordError([str(exc)]) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError([f"not JSON: {exc}"]) from None
    if not isinstance(raw, dict):
        raise RecordError([f"the top level must be an object with format, schema_version, run and events, not {type(raw).__name__}"])
    problems: list[str] = []
    if raw.get("format") != FORMAT:
        problems.append(f"format: must be {FORMAT!r} (got {raw.get('format')!r})")
    if raw.get("schema_version") != SCHEMA_VERSION:
        problems.append(f"schema_version: this app reads version {SCHEMA_VERSION} (got {raw.get('schema_version')!r})")
    try:
        record = RunRecord.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(exc, skip={("format",), ("schema_version",)}))
        raise RecordError(_dedupe(problems)) from None
    if problems:
        raise RecordError(problems)
    events: list[Event] = []
    for i, item in enumerate(record.events):
        try:
            events.append(parse_event(item))
        except ValidationError as exc:
            problems.extend(f"events[{i}] ({item.get('type', '?')}): {p}" for p in _pydantic_problems(exc))
        except ValueError as exc:
            problems.append(f"events[{i}]: {exc}")
    if not problems:
        problems.extend(_consistency_problems(record.run, events))
    if problems:
        raise RecordError(problems)
    run = record.run
    read = digest(events)
    cost = read.cost
    summary = RunSummary(
        **run.model_dump(exclude={"totals", "checker_at"}),
        cost=cost.model_copy(update={"wall_seconds": 0.0}).rounded(4),
        event_count=len(events),
        checker_at=read.override.at if read.override is not None and run.checker_verdict else None,
    )
    return summary, events


def _consistency_problems(run: RunInfo, events: list[Event]) -> list[str]:
    problems: list[str] = []
    try:  # the same check as a claim typed on the Verify page: no control characters, something visible
        check_claim_text(run.claim, "run.claim")
    except UnsafeTextError as exc:
        problems.append(str(exc))
    first = events[0]
    if not isinstance(first, RunStarted):
        problems.append(f"events[0]: a run starts with RunStarted, not {type(first).__name__}")
    else:
        if first.run_id != run.id:
            problems.append(f"events[0].run_id: {first.run_id!r} does not match run.id {run.id!r}")
        if first.claim != run.claim:
            problems.append("events[0].claim: does not match run.claim")
        if first.protocol != run.protocol:
            problems.append(f"events[0].protocol: {first.protocol!r} does not match run.protocol {run.protocol!r}")
    for i, e in enumerate(events[1:], start=1):
        if isinstance(e, RunStarted):
            problems.append(f"events[{i}]: a second RunStarted (one run per file)")
    known: set[str] = set()
    for i, e in enumerate(events):
        if isinstance(e, EvidenceRetrieved | CheckerAddedEvidence):
            if e.evidence.id in known:
                problems.append(f"events[{i}]: evidence id {e.evidence.id} is used twice")
            known.add(e.evidence.id)
        elif isinstance(e, TurnCompleted):
            problems.extend(f"events[{i}].turn.cited: {c} is not an evidence item of this run" for c in e.turn.cited if c not in known)
        elif isinstance(e, CheckerStruckEvidence | CheckerAdmittedEvidence) and e.evidence_id not in known:
            problems.append(f"events[{i}].evidence_id: {e.evidence_id} is not an evidence item of this run")
    read = digest(events)
    model_verdict = read.verdict.label if read.verdict is not None else None
    if run.verdict is not None and model_verdict != run.verdict:
        problems.append(f"run.verdict: {run.verdict!r} is not the last VerdictReached in the events ({model_verdict or 'none'})")
    if run.checker_verdict is not None and (read.override is None or read.override.label != run.checker_verdict):
        problems.append(f"run.checker_verdict: {run.checker_verdict!r} is not the last VerdictOverridden in the events")
    if run.checker_at is not None and (read.override is None or abs(read.override.at - run.checker_at) > 0.001):
        problems.append("run.checker_at: is not the time of the last VerdictOverridden in the events")
    if run.status == "completed" and model_verdict is None:
        problems.append("run.status: a completed run has a VerdictReached event")
    if run.totals is not None:
        actual = totals_of(read)
        for name in ("model_calls", "tokens_in", "tokens_out", "events"):
            if getattr(run.totals, name) != getattr(actual, name):
                problems.append(f"run.totals.{name}: says {getattr(run.totals, name)} but the events add up to {getattr(actual, name)}")
    problems.extend(_secret_problems(run.config))
    return problems


def _secret_problems(config: dict[str, Any], path: str = "run.config") -> list[str]:
    problems = []
    for key, value in config.items():
        if isinstance(value, dict):
            problems.extend(_secret_problems(value, f"{path}.{key}"))
        elif re.search(r"(api_?key|secret|password|token)$", key, re.IGNORECASE) and value:
            problems.append(f"{path}.{key}: records never hold secrets; remove it before importing")
        elif key.endswith("base_url") and isinstance(value, str) and scrub_url(value) != value:
            problems.append(f"{path}.{key}: records never hold credentials; remove the user info and key parameters from the URL")
    return problems


def _pydantic_problems(exc: ValidationError, skip: set[tuple[Any, ...]] = frozenset()) -> list[str]:  # type: ignore[assignment]
    found = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        if loc in skip:
            continue
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(top level)"
        found.append(f"{where}: {err['msg']}")
    return found


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- Markdown ---------------------------------------------------------------------------------


def md(text: str) -> str:
    """Untrusted text (web pages, model answers) as literal Markdown: no links, images or HTML get through.

    Control characters (ANSI escapes, BEL) are shown as ``\\xNN``: a report is read in terminals too.
    """
    return terminal_text(escape_markdown(text))


def _cell(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return md(flat[: limit - 1] + "…" if len(flat) > limit else flat)


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if ts else "—"


def to_markdown(summary: RunSummary, events: Sequence[Event]) -> str:
    """A readable report of the run: verdicts, interventions, rounds, evidence and cost."""
    run = digest(events)
    evidence, cited_by, struck, model_verdict = run.evidence, run.cited_by, run.struck, run.verdict
    config = summary.config
    lines = [f"# Fact-check: {md(summary.claim)}", ""]
    verdict_line = f"**{md(summary.verdict)}**" if summary.verdict else "none (the run did not reach one)"
    if summary.confidence is not None:
        verdict_line += f" (confidence {decimal(summary.confidence)})"
    rows = [("Model's verdict", verdict_line)]
    if summary.checker_verdict:
        at = f" at {_when(run.override.at)}" if run.override is not None else ""
        rows.append(
            (
                "Checker's verdict",
                f"**{md(summary.checker_verdict)}** by {md(summary.checker_by or '?')}{at}: {_cell(summary.checker_note or '', 500)}",
            )
        )
    models = ", ".join(
        f"{role}: {md(str(config.get(role, {}).get('backend', '?')))}/{md(str(config.get(role, {}).get('model') or 'default'))}"
        for role in ("debater", "judge", "scorer")
        if role in config
    )
    web = config.get("retrieval", {}).get("web_search")
    rows += [
        ("Protocol", md(summary.protocol)),
        ("Models", models or "—"),
        ("Corpus", md(str(config.get("corpus", "—"))) + ("" if web is None else f"; web search {'on' if web else 'off'}")),
        ("Run", f"`{summary.id}` · {md(summary.status)} · started {_when(summary.created_at)} · finished {_when(summary.finished_at)}"),
        ("Attempts", str(summary.attempts)),
        ("Cost", run.cost.describe()),
        ("App version", md(summary.app_version)),
    ]
    lines += ["| | |", "| --- | --- |", *[f"| {k} | {v} |" for k, v in rows], ""]
    card = verdict_card(run)
    if card is not None and card.model is not None:
        lines += _card_lines(card.model)
    if model_verdict is not None:
        lines += ["## The model's reasoning", "", md(model_verdict.rationale or "(no rationale)"), ""]
        if model_verdict.cited:
            lines += [
                "Rests on: "
                + ", ".join(f"{md(c)} ({_cell(evidence[c].source_label, 80)})" if c in evidence else md(c) for c in model_verdict.cited),
                "",
            ]
        if model_verdict.stop_reason:
            lines += [f"Decided by {md(model_verdict.decided_by)}: {md(model_verdict.stop_reason)}", ""]
    interventions = [_describe_intervention(e) for e in run.interventions]
    if interventions:
        lines += ["## Checker's interventions (audit trail)", "", *interventions, ""]
    lines += ["## Transcript", ""]
    for e in events:
        match e:
            case RoundStarted(round=number):
                lines += [f"### Round {number}", ""]
            case QueryIssued(agent=agent, query=query, tool=tool, round=number):
                lines.append(f"- {md(agent)} searched {md(tool)} (round {number}): “{_cell(query, 300)}”")
            case TurnCompleted(turn=turn):
                label = f" — **{md(turn.label)}**" if turn.label else ""
                lines += ["", f"**{md(turn.agent)}**, round {turn.round}{label}", "", "> " + md(turn.text).replace("  \n", "  \n> "), ""]
            case StageFailed(stage=stage, reason=reason):
                lines.append(f"- ⚠️ {md(stage)} failed: {_cell(reason, 500)}")
            case RunFailed(reason=reason):
                lines.append(f"- ❌ the run failed ({_when(e.at)}): {_cell(reason, 500)}")
            case RunInterrupted(reason=reason):
                lines.append(f"- ⏸️ the run was interrupted ({_when(e.at)}): {_cell(reason, 500)}")
            case RunResumed(attempt=attempt):
                lines.append(f"- ▶️ resumed ({_when(e.at)}), attempt {attempt}")
            case _:
                pass
    lines += ["", "## Evidence", ""]
    if evidence:
        lines += ["| id | source | title | link | found by | query | round | score | cited by | status |", "| --- " * 10 + "|"]
        for ev in evidence.values():
            link = f"<{ev.url}>" if ev.url and public_http_url(ev.url) and not re.search(r"[\s<>\\`|]", ev.url) else ""
            score = f"{ev.retrieval_score:.3f}" if ev.retrieval_score is not None else ""
            status = f"struck: {_cell(struck[ev.id], 120)}" if ev.id in struck else "used"
            lines.append(
                f"| {md(ev.id)} | {md(ev.source_label if ev.source != 'web' else 'web')} | {_cell(ev.title, 80)} | {link} | {md(ev.found_by)} | "
                f"{_cell(ev.query, 80)} | {ev.round} | {score} | {md(', '.join(cited_by.get(ev.id, [])))} | {status} |"
            )
        lines.append("")
        for ev in evidence.values():
            lines += [f"**{md(ev.id)}** {_cell(ev.title, 120)}: {_cell(ev.text, 1500)}", ""]
    else:
        lines += ["No evidence was retrieved.", ""]
    calls = run.calls
    if calls:
        lines += [
            "## Model calls",
            "",
            "| # | role | model | tokens in | of which the server reused | tokens out | seconds |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {i} | {md(c.role)} | {md(c.model)} | {c.tokens_in} | {c.tokens_reused} | {c.tokens_out} | {c.seconds:.2f} |"
            for i, c in enumerate(calls, 1)
        ]
        lines.append("")
    lines.append(f"_Exported by DebateDesk {__version__} on {_when(time.time())}. Record format {FORMAT} v{SCHEMA_VERSION}._")
    return "\n".join(lines) + "\n"


def _card_lines(model: ModelSide) -> list[str]:
    """The verdict card in Markdown: the label in the common vocabulary, the confidence or why none, the exhibits with their quotes."""
    label = f"**{md(model.label.common)}**" + (
        f" (the protocol's word: {md(model.label.own)})" if model.label.own != model.label.common else ""
    )
    confidence = (
        f"{decimal(model.confidence)}, {md(model.confidence_note)}"
        if model.confidence is not None
        else f"not stated by this protocol: {md(model.confidence_note)}"
    )
    lines = ["## The model's verdict", "", f"{label} · confidence {confidence}", "", md(model.reason), ""]
    if model.rulings:
        lines += [f"Two rulings differ: {md(model.rulings)}.", ""]
    if model.exhibits:
        lines += ["What it rests on:", ""]
        for e in model.exhibits:
            link = f" <{e.url}>" if e.url and not re.search(r"[\s<>\\`|]", e.url) else ""
            stance = f" · {md(e.stance)}" if e.stance else ""
            lines.append(f"- **{md(e.id)}** {_cell(e.title, 120)} ({_cell(e.source, 120)}){stance}{link}")
            lines += [f"  > “{_cell(q, 600)}”" for q in e.quotes]
        lines.append("")
    if model.exhibits_note:
        lines += [md(model.exhibits_note), ""]
    return lines


def _describe_intervention(e: Event) -> str:
    return f"- {_when(e.at)} · {md(getattr(e, 'by', ''))} · {describe_intervention(e, _cell)}"


# --- CSV ---------------------------------------------------------------------------------------

CSV_FIELDS = (
    "run_id", "claim", "protocol", "status", "final_verdict", "model_verdict", "model_verdict_common", "confidence",
    "checker_verdict", "checker_by", "checker_at", "checker_note", "model_verdict_before_override", "audit_trail", "rests_on",
    "model_calls", "cached_calls", "tokens_in", "tokens_out", "model_seconds", "wall_seconds", "started", "finished",
)  # fmt: skip


def to_csv(summary: RunSummary, events: Sequence[Event]) -> str:
    """The run as one CSV row for a spreadsheet: both verdicts, the audit trail (who, when, what), what it rests on, its cost.

    Every cell goes through ``csv_cell``: a claim or a note like ``=HYPERLINK(..)`` stays text.
    """
    run = digest(events)
    cost = run.cost
    override = run.override
    trail = " | ".join(f"{_when(a.at)} · {a.by or '?'} · {a.what}" for a in audit_trail(run))
    row: dict[str, Any] = {
        "run_id": summary.id,
        "claim": summary.claim,
        "protocol": summary.protocol,
        "status": summary.status,
        "final_verdict": summary.final_verdict or "",
        "model_verdict": summary.verdict or "",
        "model_verdict_common": common_label(summary.verdict) if summary.verdict else "",
        "confidence": summary.confidence if summary.confidence is not None else "",
        "checker_verdict": summary.checker_verdict or "",
        "checker_by": summary.checker_by or "",
        "checker_at": _when(override.at) if override is not None and summary.checker_verdict else "",
        "checker_note": summary.checker_note or "",
        "model_verdict_before_override": override.model_verdict.label if override is not None and override.model_verdict else "",
        "audit_trail": trail,
        "rests_on": "; ".join(f"{e.id} ({e.source_label})" for e in run.cited_evidence()),
        "model_calls": cost.calls,
        "cached_calls": cost.cached_calls,
        "tokens_in": cost.tokens_in,
        "tokens_out": cost.tokens_out,
        "model_seconds": round(cost.model_seconds, 3),
        "wall_seconds": round(cost.wall_seconds, 3),
        "started": _when(summary.created_at),
        "finished": _when(summary.finished_at),
    }
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(CSV_FIELDS), lineterminator="\r\n")
    writer.writeheader()
    writer.writerow({name: csv_cell(terminal_text(value) if isinstance(value, str) else value) for name, value in row.items()})
    return buffer.getvalue()


# --- schema.org ClaimReview -------------------------------------------------------------------

# Verdict label -> (ratingValue on a 1-5 scale, the rating's name). 5 = true, 1 = false.
RATING_SCALE: dict[str, tuple[int, str]] = {
    "SUPPORTS": (5, "True"),
    "SUPPORTED": (5, "True"),
    "TRUE": (5, "True"),
    "MOSTLY-TRUE": (4, "Mostly true"),
    "HALF-TRUE": (3, "Half true"),
    "NOT ENOUGH INFO": (3, "Unproven"),
    "INCONCLUSIVE": (3, "Unproven"),
    "MOSTLY-FALSE": (2, "Mostly false"),
    "REFUTES": (1, "False"),
    "NOT SUPPORTED": (1, "False"),
    "FALSE": (1, "False"),
}
CLAIMREVIEW_REQUIRED = ("@context", "@type", "claimReviewed", "reviewRating", "itemReviewed", "author", "datePublished", "url")


def to_claimreview(summary: RunSummary, events: Sequence[Event], *, public_url: str = "", publisher: str = "DebateDesk") -> dict[str, Any]:
    """schema.org ClaimReview JSON-LD for the run's final verdict (the checker's when overridden)."""
    label = summary.checker_verdict or summary.verdict
    if not label:
        raise DebateDeskError(
            f"run {summary.id} has no verdict ({summary.status}); a ClaimReview needs one — resume the run or set a verdict"
        )
    value, name = RATING_SCALE.get(label.upper(), (3, label.title()))
    run = digest(events)
    rationale = run.verdict.rationale if run.verdict is not None else ""
    explanation = summary.checker_note if summary.checker_verdict and summary.checker_note else rationale
    sources = run.cited_evidence() or list(run.evidence.values())
    # Only public http(s) pages are cited: a javascript:, data: or intranet URL must not reach a published page.
    citations = [
        {"@type": "CreativeWork", "name": e.title or e.source_label, "url": e.url} for e in sources if e.url and public_http_url(e.url)
    ]
    published = datetime.fromtimestamp(summary.finished_at or summary.created_at, UTC).date().isoformat()
    url = f"{public_url.rstrip('/')}/{summary.id}" if public_url else f"urn:debatedesk:run:{summary.id}"
    doc: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": url,
        "claimReviewed": summary.claim,
        "datePublished": published,
        "author": {"@type": "Organization", "name": publisher},
        "reviewRating": {
            "@type": "Rating",
            "ratingValue": value,
            "bestRating": 5,
            "worstRating": 1,
            "alternateName": name,
            "ratingExplanation": " ".join(explanation.split())[:1000],
        },
        "itemReviewed": {"@type": "Claim", "text": summary.claim, "datePublished": published},
        "citation": citations,
    }
    if summary.checker_verdict and summary.checker_by:
        doc["editor"] = {"@type": "Person", "name": summary.checker_by}
        if run.override is not None:  # when the checker set the verdict published here
            doc["dateModified"] = datetime.fromtimestamp(run.override.at, UTC).date().isoformat()
    return doc


def claimreview_problems(doc: dict[str, Any]) -> list[str]:
    """What a ClaimReview lacks of the fields schema.org and fact-check indexes require."""
    problems = [f"{field}: missing" for field in CLAIMREVIEW_REQUIRED if not doc.get(field)]
    rating = doc.get("reviewRating") or {}
    for field in ("@type", "ratingValue", "bestRating", "worstRating", "alternateName"):
        if rating.get(field) in (None, ""):
            problems.append(f"reviewRating.{field}: missing")
    if rating and not (rating.get("worstRating", 0) <= rating.get("ratingValue", -1) <= rating.get("bestRating", -1)):
        problems.append("reviewRating.ratingValue: outside worstRating..bestRating")
    if doc.get("@type") != "ClaimReview":
        problems.append("@type: must be ClaimReview")
    if (doc.get("author") or {}).get("name") in (None, ""):
        problems.append("author.name: missing")
    if (doc.get("itemReviewed") or {}).get("@type") != "Claim":
        problems.append("itemReviewed.@type: must be Claim")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(doc.get("datePublished", ""))):
        problems.append("datePublished: must be an ISO date (YYYY-MM-DD)")
    return problems


def import_run(store: RunStore, data: str | bytes, *, origin: str = "imported") -> tuple[RunSummary, bool]:
    """Validate a JSON record and store it for audit; returns (the stored run, whether it was new).

    The same record imported twice is stored once; a different run under an id already
    taken gets a new id (``<id>-imported-2``...). A run still marked running is stored as
    interrupted: nothing runs it here.
    """
    summary, events = load_record(data)
    if store.has_run(summary.id):
        if [dump_event(e) for e in store.events(summary.id)] == [dump_event(e) for e in events]:
            existing = store.get_run(summary.id)
            assert existing is not None
            return existing, False
        n = 2
        while store.has_run(f"{summary.id}-imported-{n}"):
            n += 1
        new_id = f"{summary.id}-imported-{n}"
        first = events[0]
        assert isinstance(first, RunStarted)
        events = [first.model_copy(update={"run_id": new_id}), *events[1:]]
        summary = replace(summary, id=new_id)
    status = "interrupted" if summary.status == "running" else summary.status
    summary = replace(summary, status=status, origin=origin if summary.origin == "run" else summary.origin)
    store.insert_record(summary, events)
    stored = store.get_run(summary.id)
    assert stored is not None
    return stored, True


def export_run(summary: RunSummary, events: Sequence[Event], fmt: str, *, public_url: str = "") -> str:
    """The run in one of EXPORT_FORMATS, as text."""
    if fmt == "json":
        return to_json(summary, events)
    if fmt == "md":
        return to_markdown(summary, events)
    if fmt == "csv":
        return to_csv(summary, events)
    if fmt == "claimreview":  # pasted into a page's <script type="application/ld+json">: nothing in it may close the block
        return json_for_html(to_claimreview(summary, events, public_url=public_url)) + "\n"
    raise ValueError(f"unknown export format {fmt!r}; choose one of: {', '.join(EXPORT_FORMATS)}")


def export_filename(summary: RunSummary, fmt: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", summary.claim.lower()).strip("-")[:40] or "run"
    suffix = EXPORT_FORMATS[fmt][0]
    return f"debatedesk-{summary.id}-{slug}{'.claimreview' if fmt == 'claimreview' else ''}{suffix}"


__all__ = [
    "EXPORT_FORMATS",
    "RUN_STATUSES",
    "RecordError",
    "RunRecord",
    "claimreview_problems",
    "export_run",
    "import_run",
    "load_record",
    "record_schema",
    "to_claimreview",
    "to_csv",
    "to_json",
    "to_markdown",
    "to_record",
]

"""Export a stored run (JSON record, Markdown report, schema.org ClaimReview) and import a JSON record back.

Pure functions over a run's summary and events: the UI offers them as downloads, the CLI
writes them to files. The JSON record is the whole run with a versioned schema
(``format`` + ``schema_version``); ``load_record`` validates a file in that schema (ours or
written by hand) and lists every problem it finds instead of stopping at the first.

Since schema version 2 a record carries the hash chain of its events (``chain``: each
event's digest and link, ``pipelines.record.chain``) and the desk's ed25519 signature over
the rest (``signature``, ``pipelines.record.signing``). ``verify_record`` says whether a
file is intact, whose key signed it and where it was altered; ``import_run`` stores a
record with what that check said and who imported it, and what the file says its checkers
did stays the file's word (``RecordImported``), never this desk's verdict.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from pipelines import __version__
from pipelines.errors import DebateDeskError
from pipelines.events import (
    CheckerAddedEvidence,
    CheckerAdmittedEvidence,
    CheckerStruckEvidence,
    Event,
    EvidenceRetrieved,
    ModelServerRestarted,
    QueryIssued,
    RecordImported,
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
from pipelines.record import chain
from pipelines.record.claimreview import RATINGS, Review, build_claimreview
from pipelines.record.comments import Comment
from pipelines.record.digest import RunDigest, describe_intervention, digest
from pipelines.record.signing import DeskKey
from pipelines.record.store import RUN_STATUSES, RunStore, RunSummary
from pipelines.record.verdict_card import (
    AuditEntry,
    CardLabel,
    ModelSide,
    audit_trail,
    common_label,
    imported_summary,
    imported_trail,
    verdict_card,
)
from pipelines.record.verification import RecordCheck, signed_part, verify_record
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
from pipelines.text.times import to_the_second
from pipelines.text.urls import scrub_url

FORMAT = "debatedesk.run"
SCHEMA_VERSION = 2  # 2 added the chain and the signature
READS_VERSIONS = (1, 2)
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
    spent: float | None = Field(default=None, ge=0, description="money at the run's prices; absent when it had none")


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
    verdict: str | None = Field(default=None, description="the model's verdict, in the protocol's own word")
    final_verdict: str | None = Field(
        default=None,
        description="the verdict in the one vocabulary (SUPPORTED / REFUTED / NOT ENOUGH INFO): this desk's checker's when set, else the model's",
    )
    confidence: float | None = Field(default=None, ge=0, le=1)
    checker_verdict: str | None = None
    checker_note: str | None = None
    checker_by: str | None = None
    checker_at: float | None = Field(default=None, description="when the checker set their verdict (epoch seconds); from the events")
    attempts: int = Field(default=1, ge=1)
    origin: str = "run"
    totals: Totals | None = Field(default=None, description="recomputed from the events on import; must match when given")


class RecordChain(BaseModel):
    """The events' hash chain as exported: each event's SHA-256 and link, and the head (the last link)."""

    model_config = ConfigDict(extra="forbid")

    algorithm: Literal["sha256-chain/v1"] = "sha256-chain/v1"
    event_digests: list[str] = Field(description="SHA-256 of each event's canonical JSON, in order")
    links: list[str] = Field(description="each event's link: SHA-256 over the link before it and its digest; the store keeps the same")
    head: str = Field(description="the last link: it stands for every event in order")
    stored: str = Field(default="", description="what the exporting desk's store said of its own chain for this run")


class RecordSignature(BaseModel):
    """Who signed the record: an ed25519 signature over the record without its events and its signature."""

    model_config = ConfigDict(extra="forbid")

    algorithm: Literal["ed25519"] = "ed25519"
    public_key: str = Field(description="the signing desk's public key, base64 of its 32 raw bytes")
    fingerprint: str = Field(description="SHA256: and the unpadded base64 of the SHA-256 of the public key")
    value: str = Field(description="base64 signature over 'debatedesk.run/signature/v1\\n' + the canonical JSON of the rest")


class RunRecord(BaseModel):
    """A whole run as one JSON document (the export and import format)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["debatedesk.run"] = "debatedesk.run"
    schema_version: Literal[1, 2] = 2
    exported_at: float | None = None
    exported_by: str = Field(default="", description="the app version that wrote the file")
    run: RunInfo
    events: list[dict[str, Any]] = Field(min_length=1)
    comments: list[dict[str, Any]] = Field(
        default_factory=list, description="the desk's comments on the run and its exhibits: author, at, text, evidence_id"
    )
    chain: RecordChain | None = None
    signature: RecordSignature | None = None


def record_schema() -> dict[str, Any]:
    """The JSON Schema of the record (events are checked one by one against their own types)."""
    return RunRecord.model_json_schema()


# --- JSON -------------------------------------------------------------------------------------


def to_record(
    summary: RunSummary,
    events: Sequence[Event],
    comments: Sequence[Comment] = (),
    *,
    signer: DeskKey | None = None,
    stored_chain: str = "",
) -> dict[str, Any]:
    """The whole run as a JSON-ready dict in the versioned schema, with its chain and the desk's comments (signed with
    the rest of the record, outside the events); signed when ``signer`` is given."""
    derived = {"totals", "checker_at", "final_verdict"}  # read off the events, not the run's row
    same_name = {name: getattr(summary, name) for name in RunInfo.model_fields if name not in derived}  # the run's row
    read = digest(events)
    checker_at = read.override.at if read.override is not None and summary.checker_verdict else None  # a row stored before checker_at too
    final = read.final_label
    info = RunInfo(**same_name, totals=totals_of(read), checker_at=checker_at, final_verdict=common_label(final) if final else None)
    payloads = [dump_event(e) for e in events]
    digests = [chain.event_digest(p) for p in payloads]
    links = chain.links_of_digests(digests)
    record = RunRecord(
        exported_at=round(time.time(), 3),
        exported_by=f"DebateDesk {__version__}",
        run=info,
        events=payloads,
        comments=[c.to_dict() for c in comments],
        chain=RecordChain(event_digests=digests, links=links, head=links[-1] if links else chain.GENESIS, stored=stored_chain),
    ).model_dump(mode="json", exclude={"signature"})
    if signer is not None:
        record["signature"] = RecordSignature(
            public_key=signer.public_b64, fingerprint=signer.fingerprint, value=signer.sign(signed_part(record))
        ).model_dump(mode="json")
    return record


def to_json(
    summary: RunSummary, events: Sequence[Event], comments: Sequence[Comment] = (), *, signer: DeskKey | None = None, stored_chain: str = ""
) -> str:
    """The record as JSON text; ``<`` ``>`` ``&`` are \\u-escaped, so it is safe to embed in HTML and parses the same."""
    return json_for_html(to_record(summary, events, comments, signer=signer, stored_chain=stored_chain)) + "\n"


def totals_of(run: RunDigest) -> Totals:
    cost = run.cost
    return Totals(
        model_calls=cost.calls,
        tokens_in=cost.tokens_in,
        tokens_out=cost.tokens_out,
        model_seconds=round(cost.model_seconds, 4),
        events=run.events,
        spent=round(cost.spent, 8) if cost.priced else None,
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
    if raw.get("schema_version") not in READS_VERSIONS:
        problems.append(
            f"schema_version: this app reads versions {' and '.join(map(str, READS_VERSIONS))} (got {raw.get('schema_version')!r})"
        )
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
        **run.model_dump(exclude={"totals", "checker_at", "final_verdict"}),
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
    start = next(
        (i for i, e in enumerate(events) if not isinstance(e, RecordImported)), 0
    )  # a record imported before starts with that note
    first = events[start]
    if not isinstance(first, RunStarted):
        problems.append(f"events[{start}]: a run starts with RunStarted, not {type(first).__name__}")
    else:
        if first.run_id != run.id:
            problems.append(f"events[{start}].run_id: {first.run_id!r} does not match run.id {run.id!r}")
        if first.claim != run.claim:
            problems.append(f"events[{start}].claim: does not match run.claim")
        if first.protocol != run.protocol:
            problems.append(f"events[{start}].protocol: {first.protocol!r} does not match run.protocol {run.protocol!r}")
    for i, e in enumerate(events[start + 1 :], start=start + 1):
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
    final = read.final_label
    if run.final_verdict is not None and run.final_verdict != (common_label(final) if final else None):
        problems.append(f"run.final_verdict: {run.final_verdict!r} is not the events' final verdict in the one vocabulary")
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


def to_markdown(summary: RunSummary, events: Sequence[Event], comments: Sequence[Comment] = ()) -> str:
    """A readable report of the run: verdicts, interventions, rounds, evidence and cost."""
    run = digest(events)
    evidence, cited_by, struck, model_verdict = run.evidence, run.cited_by, run.struck, run.verdict
    config = summary.config
    lines = [f"# Fact-check: {md(summary.claim)}", ""]
    verdict_line = _label_md(summary.verdict) if summary.verdict else "none (the run did not reach one)"
    if summary.confidence is not None:
        verdict_line += f" (confidence {decimal(summary.confidence)})"
    rows = [("Model's verdict", verdict_line)]
    override = run.override  # this desk's own: what an imported file says a checker set is listed apart below
    if override is not None:
        rows.append(
            (
                "Checker's verdict",
                f"{_label_md(override.label)} by {md(override.by or '?')} at {to_the_second(override.at)}: {_cell(override.note, 500)}",
            )
        )
    if run.imported is not None:
        rows.append(("Imported", _cell(imported_summary(run), 1000)))
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
        (
            "Run",
            f"`{summary.id}` · {md(summary.status)} · started {to_the_second(summary.created_at)} · finished {to_the_second(summary.finished_at)}",
        ),
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
    if run.imported is not None:
        imported = run.imported
        lines += [
            "## Imported record (not this desk's audit trail)",
            "",
            f"Imported from {_cell(imported.source, 200)} by {md(imported.by)} on {to_the_second(imported.at)}. "
            f"The file's check: {_cell(imported.check, 600)}.",
            "",
        ]
        said = [_describe_intervention(e) for e in run.imported_interventions]
        lines += (
            ["What the file says its checkers did (the file's word; none of it is this desk's verdict):", "", *said, ""] if said else []
        )
    if comments:
        lines += ["## Comments", ""]
        lines += [f"- {to_the_second(c.at)}, {md(c.author)} on {md(c.about)}: {_cell(c.text, 4000)}" for c in comments]
        lines.append("")
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
                repeated = run.echoes.get(turn.id)
                if repeated is not None:
                    lines += [
                        f"*Nearly word for word {md(repeated.agent)}'s round {repeated.round} answer: the model repeated its opponent.*",
                        "",
                    ]
            case StageFailed(stage=stage, reason=reason):
                lines.append(f"- ⚠️ {md(stage)} failed: {_cell(reason, 500)}")
            case ModelServerRestarted(role=role, reason=reason, seconds=seconds):
                lines.append(
                    f"- 🔁 the model server stopped ({to_the_second(e.at)}: {_cell(reason, 300)}) and was started again "
                    f"in {seconds:.0f} s; the {md(role)}'s call it broke was asked again"
                )
            case RunFailed(reason=reason):
                lines.append(f"- ❌ the run failed ({to_the_second(e.at)}): {_cell(reason, 500)}")
            case RunInterrupted(reason=reason):
                lines.append(f"- ⏸️ the run was interrupted ({to_the_second(e.at)}): {_cell(reason, 500)}")
            case RunResumed(attempt=attempt):
                lines.append(f"- ▶️ resumed ({to_the_second(e.at)}), attempt {attempt}")
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
    lines.append(f"_Exported by DebateDesk {__version__} on {to_the_second(time.time())}. Record format {FORMAT} v{SCHEMA_VERSION}._")
    return "\n".join(lines) + "\n"


def _label_md(label: str) -> str:
    """A verdict in the one vocabulary, bold, with the protocol's own word beside it when it differs."""
    card = CardLabel.of(label)
    return f"**{md(card.common)}**" + (f" (the protocol's word: {md(card.own)})" if card.own != card.common else "")


def _card_lines(model: ModelSide) -> list[str]:
    """The verdict card in Markdown: the label in the common vocabulary, the confidence or why none, the exhibits with their quotes."""
    label = _label_md(model.label.own)
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
    return f"- {to_the_second(e.at)} · {md(getattr(e, 'by', ''))} · {describe_intervention(e, _cell)}"


# --- CSV ---------------------------------------------------------------------------------------

CSV_FIELDS = (
    "run_id", "claim", "protocol", "status", "final_verdict", "model_verdict", "model_verdict_protocol_word", "confidence",
    "checker_verdict", "checker_by", "checker_at", "checker_reason", "model_verdict_before_override", "audit_trail",
    "imported", "imported_audit_trail", "rests_on",
    "model_calls", "cached_calls", "tokens_in", "tokens_out", "spent", "model_seconds", "wall_seconds", "started", "finished",
)  # fmt: skip


def to_csv(summary: RunSummary, events: Sequence[Event]) -> str:
    """The run as one CSV row for a spreadsheet: both verdicts, the audit trail (who, when, what), what it rests on, its cost.

    Verdicts are in the one vocabulary (SUPPORTED / REFUTED / NOT ENOUGH INFO), the protocol's
    own word in a column of its own. The checker's columns and the audit trail are this desk's
    own; what an imported file says its checkers did has columns apart. Every cell goes
    through ``csv_cell``: a claim or a note like ``=HYPERLINK(..)`` stays text.
    """
    run = digest(events)
    cost = run.cost
    override = run.override
    final = run.final_label
    row: dict[str, Any] = {
        "run_id": summary.id,
        "claim": summary.claim,
        "protocol": summary.protocol,
        "status": summary.status,
        "final_verdict": common_label(final) if final else "",
        "model_verdict": common_label(summary.verdict) if summary.verdict else "",
        "model_verdict_protocol_word": summary.verdict or "",
        "confidence": summary.confidence if summary.confidence is not None else "",
        "checker_verdict": common_label(override.label) if override is not None else "",
        "checker_by": override.by if override is not None else "",
        "checker_at": to_the_second(override.at) if override is not None else "",
        "checker_reason": override.note if override is not None else "",
        "model_verdict_before_override": common_label(override.model_verdict.label)
        if override is not None and override.model_verdict
        else "",
        "audit_trail": _trail(audit_trail(run)),
        "imported": imported_summary(run),
        "imported_audit_trail": _trail(imported_trail(run)),
        "rests_on": "; ".join(f"{e.id} ({e.source_label})" for e in run.cited_evidence()),
        "model_calls": cost.calls,
        "cached_calls": cost.cached_calls,
        "tokens_in": cost.tokens_in,
        "tokens_out": cost.tokens_out,
        "spent": round(cost.spent, 6) if cost.priced else "",  # empty: the run had no prices (not zero)
        "model_seconds": round(cost.model_seconds, 3),
        "wall_seconds": round(cost.wall_seconds, 3),
        "started": to_the_second(summary.created_at),
        "finished": to_the_second(summary.finished_at),
    }
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(CSV_FIELDS), lineterminator="\r\n")
    writer.writeheader()
    writer.writerow({name: csv_cell(terminal_text(value) if isinstance(value, str) else value) for name, value in row.items()})
    return buffer.getvalue()


def _trail(entries: Sequence[AuditEntry]) -> str:
    return " | ".join(f"{to_the_second(a.at)} · {a.by or '?'} · {a.what}" for a in entries)


# --- schema.org ClaimReview -------------------------------------------------------------------


def claimreview_refusal(summary: RunSummary) -> str | None:
    """Why History offers no ClaimReview for this run, or None when it does: a fact-check is a claim a person of this desk
    reviewed (an override set here), never a run's model verdict nobody reviewed, nor an imported file's word."""
    if not summary.own:
        return "an imported run is the file's word, not a fact-check of this desk: no ClaimReview is offered for it"
    if not (summary.checker_verdict and summary.checker_by):
        return (
            "nobody on this desk has reviewed this run's verdict: an editor overrides it here (the verdict the desk stands by, "
            "with the reason), or reviews its claim on the claims queue and publishes it there"
        )
    return None


def to_claimreview(summary: RunSummary, events: Sequence[Event], *, public_url: str = "", publisher: str = "DebateDesk") -> dict[str, Any]:
    """schema.org ClaimReview JSON-LD for the run's final verdict: this desk's checker's when they set one, else the model's.

    Built by the one ClaimReview builder (``pipelines.record.claimreview``), the explanation whole;
    a verdict an imported file says someone set is never published as this desk's.
    """
    run = digest(events)
    override = run.override  # this desk's own
    label = override.label if override is not None else summary.verdict
    if not label:
        raise DebateDeskError(
            f"run {summary.id} has no verdict ({summary.status}); a ClaimReview needs one — resume the run or set a verdict"
        )
    name = common_label(label)
    if name not in RATINGS:
        raise DebateDeskError(
            f"run {summary.id}'s verdict {label[:40]!r} is not one a ClaimReview rates (SUPPORTED, REFUTED, NOT ENOUGH INFO)"
        )
    rationale = run.verdict.rationale if run.verdict is not None else ""
    if name != label:  # the protocol's own word, as a detail
        rationale = f"The protocol's word: {label}. {rationale}"
    explanation = override.note if override is not None and override.note else rationale
    published = datetime.fromtimestamp(summary.finished_at or summary.created_at, UTC).date().isoformat()
    checked = override is not None and bool(override.by)
    return build_claimreview(
        Review(
            claim=summary.claim,
            label=name,
            explanation=" ".join(explanation.split()),
            url=f"{public_url.rstrip('/')}/{summary.id}" if public_url else f"urn:debatedesk:run:{summary.id}",
            published_on=published,
            organisation=publisher,
            editor=override.by if checked and override is not None else "",
            modified_on=datetime.fromtimestamp(override.at, UTC).date().isoformat() if checked and override is not None else "",
            citations=run.cited_evidence() or list(run.evidence.values()),
        )
    )


@dataclass(frozen=True)
class ImportResult:
    """An imported run as stored, whether it was new, and what the check of the file said."""

    summary: RunSummary
    new: bool
    check: RecordCheck


def import_run(store: RunStore, data: str | bytes, *, source: str, by: str, desk: DeskKey | None = None) -> ImportResult:
    """Check a JSON record (signature and chain), validate it and store it for audit, kept as what the file says.

    ``by`` is the person importing (from the sign-in, never from the file); ``source`` the
    file's name. After the file's events the store gets a ``RecordImported`` event naming
    both and what ``verify_record`` said, so every override and intervention the file
    claims stays the file's word: shown apart, never this desk's verdict (the run's row
    keeps no checker's verdict from a file). The same record imported twice is stored once;
    a different run under an id already taken gets a new id (``<id>-imported-2``...). A run
    still marked running is stored as interrupted: nothing runs it here.
    """
    if not by.strip():
        raise ValueError("say who imports the record (sign in, or enter your name): the record keeps who brought it in")
    summary, events = load_record(data)  # first: it refuses a file over the size limit before anything reads it whole
    check = verify_record(data, desk_public_raw=desk.public_raw if desk is not None else None)
    try:
        return _store_import(store, summary, events, check, source=source, by=by)
    except SQLAlchemyError as exc:
        raise DebateDeskError(
            f"the run store could not take the record ({type(exc).__name__}); nothing was imported. Try again once the database is back"
        ) from exc


def _store_import(store: RunStore, summary: RunSummary, events: list[Event], check: RecordCheck, *, source: str, by: str) -> ImportResult:
    if store.has_run(summary.id):
        stored = store.events(summary.id)
        if stored and isinstance(stored[0], RecordImported):  # imported before: compare the file's part, not what this desk added
            stored = stored[1 : 1 + stored[0].events]
        if [dump_event(e) for e in stored] == [dump_event(e) for e in events]:
            existing = store.get_run(summary.id)
            assert existing is not None
            return ImportResult(existing, False, check)
        n = 2
        while store.has_run(f"{summary.id}-imported-{n}"):
            n += 1
        new_id = f"{summary.id}-imported-{n}"
        events = [e.model_copy(update={"run_id": new_id}) if isinstance(e, RunStarted) else e for e in events]
        summary = replace(summary, id=new_id)
    name = " ".join(source.split())[:200] or "a file"
    marker = RecordImported(
        source=name,
        by=" ".join(by.split()),
        events=len(events),
        check=check.summary(),
        intact=check.intact,
        signer=check.signer,
        this_desk=check.this_desk,
    )
    events = [marker, *events]
    status = "interrupted" if summary.status == "running" else summary.status
    summary = replace(
        summary,
        status=status,
        origin=f"imported from {name}",
        checker_verdict=None,  # what the file says a checker set is the file's word, kept in its events
        checker_note=None,
        checker_by=None,
        checker_at=None,
        started_by=None,
        event_count=len(events),
    )
    store.insert_record(summary, events)  # one transaction: the whole record and its import note, or nothing
    stored_run = store.get_run(summary.id)
    assert stored_run is not None
    return ImportResult(stored_run, True, check)


def export_run(
    summary: RunSummary,
    events: Sequence[Event],
    fmt: str,
    *,
    public_url: str = "",
    comments: Sequence[Comment] = (),
    signer: DeskKey | None = None,
    stored_chain: str = "",
) -> str:
    """The run in one of EXPORT_FORMATS, as text; the JSON record (signed with ``signer`` when given) and the Markdown
    report carry the desk's comments on it."""
    if fmt == "json":
        return to_json(summary, events, comments, signer=signer, stored_chain=stored_chain)
    if fmt == "md":
        return to_markdown(summary, events, comments)
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
    "ImportResult",
    "RecordCheck",
    "RecordError",
    "RunRecord",
    "claimreview_refusal",
    "export_run",
    "import_run",
    "load_record",
    "record_schema",
    "to_claimreview",
    "to_csv",
    "to_json",
    "to_markdown",
    "to_record",
    "verify_record",
]

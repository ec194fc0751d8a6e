"""The JSON run record, the desk's export and import format: its schema, writing it and reading it back.

Pure functions over a run's summary and events (nothing is stored here): ``to_record`` and ``to_json`` write the whole
run in a versioned schema (``format`` + ``schema_version``); ``load_record`` validates a file in that schema (ours or
written by hand) and lists every problem it finds instead of stopping at the first; ``record_schema`` is the schema
``python -m pipelines schema`` prints.

Since schema version 2 a record carries the hash chain of its events (``chain``: each event's digest and link,
``pipelines.record.chain``) and the desk's ed25519 signature over the rest (``signature``, ``pipelines.record.signing``);
``pipelines.record.verification.verify_record`` says whether a file is intact, whose key signed it and where it was
altered. Storing a record that was read is ``pipelines.record.importer``'s.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipelines import __version__
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import (
    CheckerAddedEvidence,
    CheckerAdmittedEvidence,
    CheckerStruckEvidence,
    Event,
    EvidenceRetrieved,
    RecordImported,
    RunStarted,
    TurnCompleted,
    dump_event,
    parse_event,
)
from pipelines.core.text.safety import (
    JsonTooDeepError,
    UnsafeTextError,
    check_claim_text,
    json_for_html,
    load_json,
)
from pipelines.core.text.urls import scrub_url
from pipelines.record import chain
from pipelines.record.comments import Comment
from pipelines.record.digest import RunDigest, digest
from pipelines.record.signing import DeskKey
from pipelines.record.store import RunSummary
from pipelines.record.verdict_card import (
    common_label,
)
from pipelines.record.verification import signed_part

FORMAT = "debatedesk.run"
SCHEMA_VERSION = 2  # 2 added the chain and the signature
READS_VERSIONS = (1, 2)
MAX_IMPORT_BYTES = 50 * 1024 * 1024


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

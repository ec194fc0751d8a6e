"""Import a JSON run record into the run store: checked (signature and chain), validated, then stored for audit.

The one place a record file writes to the store. What the file says its checkers did stays the file's word
(``RecordImported`` before its events, shown apart), never this desk's verdict; the same record imported twice is
stored once; the person importing comes from the sign-in, never from the file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy.exc import SQLAlchemyError

from pipelines.core.errors import DebateDeskError
from pipelines.core.events import (
    Event,
    RecordImported,
    RunStarted,
    dump_event,
)
from pipelines.record.record_file import load_record
from pipelines.record.signing import DeskKey
from pipelines.record.store import RunStore, RunSummary
from pipelines.record.verification import RecordCheck, verify_record


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

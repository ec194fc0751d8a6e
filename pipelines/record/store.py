"""The run store: every run and every event, persisted as it happens (SQLite or PostgreSQL).

Three tables: ``runs`` (one row per run: claim, config snapshot without secrets, app
version, status, verdicts, per-run totals), ``events`` (the ordered event log, the audit
trail and what replays render) and ``journal`` (every model answer and tool result, so an
interrupted run resumes without asking again). A run left ``running`` by a process that
died, or silent for longer than ``stale_after_s``, is marked ``interrupted`` by
``reconcile``. The tables are built, and older databases brought up, by the named migrations
in ``pipelines/core/database/migrations`` when a store opens; the tables are declared in ``pipelines/core/database/tables.py``.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

from sqlalchemy import (
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from pipelines import __version__
from pipelines.core.database import migrations
from pipelines.core.database.engine import connect
from pipelines.core.database.faults import is_store_fault
from pipelines.core.database.rows import from_columns
from pipelines.core.database.tables import DeskSettingChangeRow, DeskSettingRow, EventRow, JournalRow, RunRow
from pipelines.core.errors import RunBusyError, StoreUnavailableError
from pipelines.core.events import Event, RunInterrupted, RunResumed, dump_event, parse_event
from pipelines.record import chain
from pipelines.record.digest import Cost, digest
from pipelines.record.labels import COMMON_LABELS, common_label
from pipelines.record.outage import fault_message

RunStatus = Literal["running", "completed", "failed", "interrupted"]
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
RESUMABLE: frozenset[str] = frozenset({"failed", "interrupted"})
STALE_AFTER_S = 180.0  # a running run with no heartbeat for this long is taken as interrupted

# Which process owns a running run: host, pid and a token that tells this process from a later one with the same pid.
_PROCESS_TOKEN = uuid.uuid4().hex[:8]
OWNER = f"{socket.gethostname()}:{os.getpid()}:{_PROCESS_TOKEN}"
_ACTIVE: set[str] = set()  # run ids this process is executing right now (shared by every RunStore here)
_ACTIVE_LOCK = threading.Lock()


@dataclass(frozen=True)
class RunSummary:
    id: str
    claim: str
    protocol: str
    status: str
    verdict: str | None
    confidence: float | None
    created_at: float
    finished_at: float | None
    cost: Cost  # kept per run as it is stored; no wall time (the run's created_at and finished_at give it)
    config: dict[str, Any]
    app_version: str = __version__
    event_count: int = 0
    attempts: int = 1
    checker_verdict: str | None = None
    checker_note: str | None = None
    checker_by: str | None = None
    origin: str = "run"
    checker_at: float | None = None
    stop_reason: str | None = None  # why a run stopped short of a verdict without failing (a spend limit)
    source_run: str | None = None  # the stored run whose evidence this re-run used
    started_by: str | None = None
    decided_by: str | None = None  # who decided the verdict (the verdict's decided_by); None before it or before 0007

    @property
    def final_verdict(self) -> str | None:
        """The checker's verdict when they overrode the model's, else the model's."""
        return self.checker_verdict or self.verdict

    @property
    def resumable(self) -> bool:
        return self.status in RESUMABLE

    @property
    def own(self) -> bool:
        """Run here, by this desk (not imported from another desk's file): what the desk's own counts take."""
        return self.origin == "run"


@dataclass(frozen=True)
class RunFilter:
    """What the History page and ``python -m pipelines runs`` filter on; empty fields match everything."""

    claim: str = ""
    verdicts: tuple[
        str, ...
    ] = ()  # matches the final verdict (the checker's when overridden) in the one vocabulary: SUPPORTED takes SUPPORTS, TRUE...
    protocols: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    since: float | None = None  # created at or after (epoch seconds)
    until: float | None = None  # created before
    own_only: bool = False  # only the desk's own runs, no imported ones (what the desk's counts and wall times take)


class RunStore:
    """Runs, their events and their journal behind SQLAlchemy; one instance can be shared by threads."""

    def __init__(self, url: str) -> None:
        self.is_sqlite = url.startswith("sqlite")
        self.url = url
        self.engine = connect(url)
        try:
            migrations.upgrade(self.engine)  # a new database is built, an older one brought up (pipelines/core/database/migrations)
        except Exception as exc:  # away, full or read-only: said plainly, with where the store is (never the SQL)
            if not is_store_fault(exc):
                raise
            raise StoreUnavailableError(
                f"{fault_message(url, exc)}; start the database, free some space or make the data folder writable, then try again"
            ) from exc
        self._seq: dict[str, int] = {}
        self._head: dict[str, str] = {}  # run id -> the link of its last stored event (kept with _seq)
        self._lock = threading.Lock()

    # --- runs -------------------------------------------------------------------------------

    def create_run(self, run_id: str, claim: str, protocol: str, config: dict[str, Any], *, source_run: str = "", by: str = "") -> None:
        now = time.time()
        with Session(self.engine) as s, s.begin():
            s.add(
                RunRow(
                    id=run_id,
                    claim=claim,
                    protocol=protocol,
                    status="running",
                    created_at=now,
                    config=json.dumps(config),
                    app_version=__version__,
                    model_seconds=0.0,
                    event_count=0,
                    attempts=1,
                    owner=OWNER,
                    heartbeat_at=now,
                    origin="run",
                    source_run=source_run or None,
                    started_by=by or None,
                )
            )
        self._seq[run_id] = 0
        self._head[run_id] = chain.GENESIS

    def claim_run(self, run_id: str) -> None:
        """This process executes ``run_id`` from now on (a new run, or one being resumed); refused if it already does."""
        with _ACTIVE_LOCK:
            if run_id in _ACTIVE:
                raise RunBusyError(f"run {run_id} is already running in this app (another tab or session started it); wait for it to end")
            _ACTIVE.add(run_id)

    def release_run(self, run_id: str) -> None:
        with _ACTIVE_LOCK:
            _ACTIVE.discard(run_id)

    def reopen(self, run_id: str) -> int:
        """Take a stopped run over for a resume; returns the attempt number (2 for the first resume).

        A compare-and-set on the status, in one UPDATE: of two processes resuming the same
        run at once, the database lets exactly one change ``failed``/``interrupted`` to
        ``running`` (SQLite serialises writers; PostgreSQL re-checks the WHERE after the row
        lock); the other gets ``RunBusyError`` and replays nothing, calls no model.
        """
        with self.engine.begin() as conn:
            taken = conn.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status.in_(sorted(RESUMABLE)))
                .values(
                    status="running",
                    finished_at=None,
                    attempts=func.coalesce(RunRow.attempts, 1) + 1,
                    owner=OWNER,
                    heartbeat_at=time.time(),
                )
            )
            if taken.rowcount != 1:
                row = conn.execute(select(RunRow.status, RunRow.owner).where(RunRow.id == run_id)).first()
                if row is None:
                    raise KeyError(run_id)
                raise RunBusyError(busy_message(run_id, row.status, row.owner))
            return int(conn.scalar(select(RunRow.attempts).where(RunRow.id == run_id)) or 2)

    def finish(self, run_id: str, status: RunStatus, *, owner: str | None = None) -> None:
        """Record how the run ended; with ``owner``, only if that owner still holds it (a run taken over is not overwritten)."""
        query = update(RunRow).where(RunRow.id == run_id)
        if owner is not None:
            query = query.where(RunRow.owner == owner, RunRow.status == "running")
        with self.engine.begin() as conn:
            conn.execute(query.values(status=status, finished_at=time.time()))

    def keep_config(self, run_id: str, config: dict[str, Any]) -> None:
        """Replace the run's stored config snapshot (a resume keeps the limits it goes on under, so the next resume holds them)."""
        with self.engine.begin() as conn:
            conn.execute(update(RunRow).where(RunRow.id == run_id).values(config=json.dumps(config)))

    def touch(self, run_id: str) -> None:
        """A heartbeat: the run is alive (called while it waits on a model or on the checker)."""
        with Session(self.engine) as s, s.begin():
            s.execute(update(RunRow).where(RunRow.id == run_id).values(heartbeat_at=time.time()))

    def reconcile(self, stale_after_s: float = STALE_AFTER_S) -> list[str]:
        """Mark runs left ``running`` by a dead process (or silent too long) as ``interrupted``; returns their ids."""
        now = time.time()
        host = socket.gethostname()
        stopped: list[str] = []
        with Session(self.engine) as s, s.begin():
            for row in s.scalars(select(RunRow).where(RunRow.status == "running")).all():
                if _is_orphaned(row, host, now, stale_after_s):
                    row.status = "interrupted"
                    row.finished_at = row.heartbeat_at or row.created_at
                    stopped.append(row.id)
        return stopped

    def get_run(self, run_id: str) -> RunSummary | None:
        with Session(self.engine) as s:
            row = s.get(RunRow, run_id)
            return _summary(row) if row else None

    def list_runs(self, limit: int = 200, where: RunFilter | None = None) -> list[RunSummary]:
        """Newest first, filtered by claim text (case-insensitive substring), verdict, protocol, status and date."""
        where = where or RunFilter()
        query = select(RunRow)
        claim = where.claim.replace("\x00", "").strip()  # a NUL matches no stored claim (none can hold one)
        if claim:
            query = query.where(RunRow.claim.icontains(claim, autoescape=True))
        if where.verdicts:
            final = func.coalesce(RunRow.checker_verdict, RunRow.verdict)
            wanted = {common_label(v) for v in where.verdicts}
            with Session(self.engine) as s:  # every stored spelling that reads as a wanted word (SUPPORTS, TRUE... for SUPPORTED)
                present = [v for v in s.scalars(select(final).distinct()).all() if v]
            query = query.where(final.in_(sorted({v for v in present if common_label(v) in wanted} | set(where.verdicts))))
        if where.protocols:
            query = query.where(RunRow.protocol.in_(where.protocols))
        if where.statuses:
            query = query.where(RunRow.status.in_(where.statuses))
        if where.own_only:
            query = query.where(or_(RunRow.origin == "run", RunRow.origin.is_(None)))
        if where.since is not None:
            query = query.where(RunRow.created_at >= where.since)
        if where.until is not None:
            query = query.where(RunRow.created_at < where.until)
        with Session(self.engine) as s:
            rows = s.scalars(query.order_by(RunRow.created_at.desc(), RunRow.id).limit(limit)).all()
            return [_summary(r) for r in rows]

    def facets(self) -> dict[str, list[str]]:
        """The verdicts (in the one vocabulary), protocols and statuses present, for filter widgets."""
        with Session(self.engine) as s:
            final = func.coalesce(RunRow.checker_verdict, RunRow.verdict)
            words = {common_label(v) for v in s.scalars(select(final).distinct()).all() if v}
            return {
                "verdicts": [w for w in COMMON_LABELS if w in words] + sorted(words - set(COMMON_LABELS)),
                "protocols": sorted(s.scalars(select(RunRow.protocol).distinct()).all()),
                "statuses": sorted(s.scalars(select(RunRow.status).distinct()).all()),
            }

    def activity(self) -> tuple[tuple[str, int, float | None, float | None], ...]:
        """Per status, how many runs and the latest start and end: it changes whenever a run starts, ends or changes
        state, so what is read off the runs can be kept until it does (one small query, not the runs themselves)."""
        query = select(RunRow.status, func.count(), func.max(RunRow.created_at), func.max(RunRow.finished_at)).group_by(RunRow.status)
        with Session(self.engine) as s:
            return tuple(sorted((str(st), int(n), first, last) for st, n, first, last in s.execute(query).all()))

    def runs_with_claim(self, claim: str, exclude: str | None = None) -> list[RunSummary]:
        """Other runs of exactly this claim (for side-by-side comparison), newest first."""
        with Session(self.engine) as s:
            query = select(RunRow).where(RunRow.claim == claim)
            if exclude:
                query = query.where(RunRow.id != exclude)
            return [_summary(r) for r in s.scalars(query.order_by(RunRow.created_at.desc())).all()]

    def reruns_of(self, run_id: str) -> list[RunSummary]:
        """The runs made on this run's frozen evidence, oldest first."""
        with Session(self.engine) as s:
            rows = s.scalars(select(RunRow).where(RunRow.source_run == run_id).order_by(RunRow.created_at)).all()
            return [_summary(r) for r in rows]

    def owner_of(self, run_id: str) -> str | None:
        with Session(self.engine) as s:
            return s.scalar(select(RunRow.owner).where(RunRow.id == run_id))

    def heartbeat_of(self, run_id: str) -> float | None:
        with Session(self.engine) as s:
            return s.scalar(select(RunRow.heartbeat_at).where(RunRow.id == run_id))

    def has_run(self, run_id: str) -> bool:
        with Session(self.engine) as s:
            return s.get(RunRow, run_id) is not None

    # --- events -----------------------------------------------------------------------------

    def append(self, run_id: str, evt: Event) -> int:
        """Persist one event now; returns its sequence number in the run."""
        return self.append_many(run_id, [evt])

    def append_many(
        self, run_id: str, events: Sequence[Event], *, owner: str | None = None, journal: Sequence[tuple[str, str, str]] = ()
    ) -> int:
        """Persist events in order in one transaction (the runner's writer stores what queued up at once); returns the last seq.

        With ``owner`` (the runner's writer), the events are stored only while that owner holds
        the run: a process whose run was taken over after it went silent stores nothing more.
        ``journal`` entries (kind, key, payload) go in the same transaction: a model call's
        accounting and its answer are stored together or not at all, so a resume after a kill
        never pays for a call whose cost is in the record but whose answer is not.
        """
        with self._lock:
            seq, head = self._seq.get(run_id), self._head.get(run_id)
            if seq is None or head is None:
                seq, head = self._last_link(run_id)
            if not events:
                if journal:
                    self._put_journal(run_id, journal)
                return seq
            rows = []
            for evt in events:
                seq += 1
                payload = dump_event(evt)
                head = chain.link(head, chain.event_digest(payload))
                rows.append(
                    {"run_id": run_id, "seq": seq, "type": type(evt).__name__, "at": evt.at, "payload": json.dumps(payload), "chain": head}
                )
            added = digest(events)  # what these events add to the run's row
            values: dict[str, Any] = {
                "event_count": func.coalesce(RunRow.event_count, 0) + len(events),
                "heartbeat_at": time.time(),
            }
            if added.verdict is not None:
                values.update(verdict=added.verdict.label, confidence=added.verdict.confidence, decided_by=added.verdict.decided_by)
            for evt in events:  # the last stop (or resume) in these events says whether the run now stands stopped by a limit
                if isinstance(evt, RunInterrupted) and evt.stop_reason is not None:
                    values["stop_reason"] = evt.stop_reason
                elif isinstance(evt, RunResumed):
                    values["stop_reason"] = None
            if added.override is not None:
                override = added.override
                values.update(checker_verdict=override.label, checker_note=override.note, checker_by=override.by, checker_at=override.at)
            cost = added.cost
            if cost.calls:
                values.update(
                    model_calls=RunRow.model_calls + cost.calls,
                    tokens_in=RunRow.tokens_in + cost.tokens_in,
                    tokens_out=RunRow.tokens_out + cost.tokens_out,
                    model_seconds=func.coalesce(RunRow.model_seconds, 0.0) + cost.model_seconds,
                    cached_calls=func.coalesce(RunRow.cached_calls, 0) + cost.cached_calls,
                )
                if cost.priced:
                    values["spent"] = func.coalesce(RunRow.spent, 0.0) + cost.spent
            guard = update(RunRow).where(RunRow.id == run_id)
            if owner is not None:
                guard = guard.where(RunRow.owner == owner, RunRow.status == "running")
            try:
                with self.engine.begin() as conn:  # Core, not the ORM: this runs for every streamed chunk
                    if conn.execute(guard.values(**values)).rowcount != 1 and owner is not None:
                        raise RunBusyError(f"run {run_id} was taken over by another process; this one stops writing to it")
                    conn.execute(insert(EventRow), rows)
                    if journal:
                        now = time.time()
                        conn.execute(
                            insert(JournalRow),
                            [{"run_id": run_id, "kind": k, "key": key, "payload": p, "at": now} for k, key, p in journal],
                        )
            except Exception:
                self._seq.pop(run_id, None)  # read the last seq and link again next time, not a cached guess
                self._head.pop(run_id, None)
                raise
            self._seq[run_id], self._head[run_id] = seq, head
            return seq

    def head(self, run_id: str, *, fresh: bool = False) -> str:
        """The link of the run's last stored event (GENESIS when none, or stored before chaining); ``fresh`` reads the database."""
        with self._lock:
            cached = None if fresh else self._head.get(run_id)
            if cached is not None:
                return cached
            seq, head = self._last_link(run_id)
            if run_id in self._seq or fresh:  # another process may have stored events: the next append follows on from the database
                self._seq[run_id], self._head[run_id] = seq, head
            return head

    def events(self, run_id: str) -> list[Event]:
        with Session(self.engine) as s:
            payloads = s.scalars(select(EventRow.payload).where(EventRow.run_id == run_id).order_by(EventRow.seq)).all()
            return [parse_event(p) for p in payloads]

    def stored_chain(self, run_id: str) -> chain.StoredChain:
        """Check the run's stored hash chain: intact, not chained (stored before chaining), or where it breaks."""
        with Session(self.engine) as s:
            rows = s.execute(
                select(EventRow.seq, EventRow.payload, EventRow.chain).where(EventRow.run_id == run_id).order_by(EventRow.seq)
            ).all()
        return chain.check_stored([(seq, json.loads(payload), link) for seq, payload, link in rows])

    def events_of_type(self, run_id: str, type_name: str) -> list[Event]:
        """A run's events of one type, in order (a live page reads the checker's overrides this way, not the whole run)."""
        with Session(self.engine) as s:
            query = select(EventRow.payload).where(EventRow.run_id == run_id, EventRow.type == type_name).order_by(EventRow.seq)
            return [parse_event(p) for p in s.scalars(query).all()]

    # --- journal ----------------------------------------------------------------------------

    def journal_put(self, run_id: str, kind: str, key: str, payload: str) -> None:
        self._put_journal(run_id, [(kind, key, payload)])

    def _put_journal(self, run_id: str, entries: Sequence[tuple[str, str, str]]) -> None:
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(insert(JournalRow), [{"run_id": run_id, "kind": k, "key": key, "payload": p, "at": now} for k, key, p in entries])

    def journal(self, run_id: str) -> dict[tuple[str, str], list[str]]:
        """Every journalled answer of a run: (kind, key) -> payloads in the order they were produced."""
        found: dict[tuple[str, str], list[str]] = {}
        with Session(self.engine) as s:
            rows = s.execute(
                select(JournalRow.kind, JournalRow.key, JournalRow.payload).where(JournalRow.run_id == run_id).order_by(JournalRow.id)
            ).all()
        for kind, key, payload in rows:
            found.setdefault((kind, key), []).append(payload)
        return found

    # --- import -----------------------------------------------------------------------------

    def insert_record(self, summary: RunSummary, events: Sequence[Event]) -> None:
        """Store a whole run at once (an imported transcript); its events keep their order."""
        same_name = {f.name: getattr(summary, f.name) for f in fields(summary) if f.name not in ("cost", "config", "event_count")}
        cost = summary.cost
        with Session(self.engine) as s, s.begin():
            s.add(
                RunRow(
                    **same_name,
                    config=json.dumps(summary.config),
                    model_calls=cost.calls,
                    tokens_in=cost.tokens_in,
                    tokens_out=cost.tokens_out,
                    model_seconds=cost.model_seconds,
                    cached_calls=cost.cached_calls,
                    spent=cost.spent if cost.priced else None,
                    event_count=len(events),
                )
            )
            s.flush()
            s.add_all(_event_rows(summary.id, events))

    def _last_link(self, run_id: str) -> tuple[int, str]:
        """The run's last seq and its link (GENESIS when it has none: no events yet, or stored before chaining)."""
        with Session(self.engine) as s:
            row = s.execute(
                select(EventRow.seq, EventRow.chain).where(EventRow.run_id == run_id).order_by(EventRow.seq.desc()).limit(1)
            ).first()
        return (int(row.seq), row.chain or chain.GENESIS) if row is not None else (0, chain.GENESIS)


def busy_message(run_id: str, status: str, owner: str | None, heartbeat_at: float | None = None) -> str:
    """Why a run cannot be resumed now, and when it can."""
    if status not in ("running", *RESUMABLE):
        return f"run {run_id} is {status}; only failed or interrupted runs can be resumed"
    where = f" by {owner.rsplit(':', 1)[0]}" if owner else ""
    heard = f", last heard from {time.time() - heartbeat_at:.0f} s ago" if heartbeat_at else ""
    return (
        f"run {run_id} is being run{where}{heard}; one process runs a run at a time. Wait for it to finish, "
        f"or resume it once that process has stopped (a run silent for {STALE_AFTER_S:.0f} s is taken as stopped)"
    )


def _event_rows(run_id: str, events: Iterable[Event]) -> list[EventRow]:
    rows, head = [], chain.GENESIS
    for i, e in enumerate(events, start=1):
        payload = dump_event(e)
        head = chain.link(head, chain.event_digest(payload))
        rows.append(EventRow(run_id=run_id, seq=i, type=type(e).__name__, at=e.at, payload=json.dumps(payload), chain=head))
    return rows


def _is_orphaned(row: RunRow, host: str, now: float, stale_after_s: float) -> bool:
    owner_host, _, rest = (row.owner or "").partition(":")
    pid_text, _, token = rest.partition(":")
    with _ACTIVE_LOCK:
        active_here = row.id in _ACTIVE
    if active_here:
        return False
    if row.owner == OWNER:
        return True  # started by this process, which no longer runs it
    if owner_host == host and pid_text.isdigit() and token != _PROCESS_TOKEN and not _pid_alive(int(pid_text)):
        return True
    last = row.heartbeat_at or row.created_at
    return now - last > stale_after_s


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _summary(row: RunRow) -> RunSummary:
    """The run as its row holds it: the cost has columns of its own, and a column added later is NULL in older rows."""
    cost = Cost(
        calls=row.model_calls,
        cached_calls=int(row.cached_calls or 0),
        tokens_in=row.tokens_in,
        tokens_out=row.tokens_out,
        model_seconds=float(row.model_seconds or 0.0),
        spent=float(row.spent or 0.0),
        priced=row.spent is not None,
    )
    return from_columns(
        RunSummary,
        row,
        cost=cost,
        config=json.loads(row.config or "{}"),
        event_count=int(row.event_count or 0),
        attempts=int(row.attempts or 1),
        origin=row.origin or "run",
    )


__all__ = [
    "OWNER",
    "RESUMABLE",
    "RUN_STATUSES",
    "DeskSettingChangeRow",
    "DeskSettingRow",
    "RunFilter",
    "RunStatus",
    "RunStore",
    "RunSummary",
    "busy_message",
]

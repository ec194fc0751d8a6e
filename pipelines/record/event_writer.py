"""Stores a run's events and journal entries on a thread of its own, in the order the run produced them.

The runner puts every event here as it happens and the journal its entries (``JournalSink``);
the run's event loop never waits on the database. When the database goes away the writer
waits for it (retrying with backoff, reconnecting); when it stays away, the writer keeps what
it could not store in a spill file (``spill.py``) and says so, and the runner pauses the run.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_delay, wait_exponential

from pipelines.core.database.faults import is_store_fault
from pipelines.core.errors import StoreUnavailableError
from pipelines.core.events import Event, ModelCallCompleted
from pipelines.record.outage import fault_message
from pipelines.record.spill import Spill, replay_spills
from pipelines.record.store import OWNER, RunStatus, RunStore

log = logging.getLogger(__name__)

# How long the writer waits for a store that stopped answering before it pauses the run: a
# database restart or a failover takes seconds; longer than this is an outage someone must see.
STORE_PATIENCE_S = 20.0


class StorePaused(BaseException):
    """Raised by the runner's emit to stop the protocol once the store stayed away (the writer's ``down`` says why).

    Not an Exception: the stages turn a DebateDeskError into an event and go on, and this must
    reach the runner through them, as a cancellation would.
    """


class EventWriter:
    """Stores a run's events and journal entries in order on a thread of its own, so the run's event loop never waits on the database.

    Writing inline cost the loop 1-2 ms an event and 1.5-4.5 ms a journal entry (more on a busy
    machine), and a streamed answer emits dozens of events: time the protocol's next step
    could not start in. Items are stored in the order they were put, the events that queued
    up during a write together in the next transaction; ``close`` waits for the last one, so
    a finished run's record is complete before its status changes and its stream ends.

    A write the store refuses for want of a connection or of disk space is retried with
    backoff for ``patience_s`` (the run goes on meanwhile; its events wait in order). After
    that the writer is ``down``: what it holds and everything after goes to a spill file, in
    order, to be stored when the store is back, and the runner stops the run at its next step.
    Any other failed write is kept and raised by ``flush`` (the run then fails); nothing more
    is written after one.
    """

    _STOP = object()

    def __init__(self, store: RunStore, run_id: str, *, data_dir: Path | None = None, patience_s: float | None = None) -> None:
        self._store = store
        self._run_id = run_id
        self._data_dir = data_dir
        self._head: str | None = None  # the run's chain link as last stored (a spill continues from it)
        try:
            self._head = store.head(run_id, fresh=True)  # read once, while the store answers (one row)
        except Exception as exc:
            if not is_store_fault(exc):
                raise
        self._patience_s = STORE_PATIENCE_S if patience_s is None else patience_s
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._idle = threading.Condition()
        self._pending = 0
        self.error: BaseException | None = None
        self.down: StoreUnavailableError | None = None  # set once the store stayed away too long: the run must pause
        self.spill: Spill | None = None
        self.retries = 0  # writes that failed and were tried again (the soak counts them)
        self._thread = threading.Thread(target=self._drain, name=f"events-{run_id}", daemon=True)
        self._thread.start()

    def put(self, evt: Event) -> None:
        self._enqueue(evt)

    def journal_put(self, run_id: str, kind: str, key: str, payload: str) -> None:
        """The run journal's sink (the RunStore method of the same name, queued)."""
        if run_id != self._run_id:
            raise ValueError(f"the writer of run {self._run_id} keeps no journal of run {run_id}")
        self._enqueue(_JournalEntry(run_id, kind, key, payload))

    def _enqueue(self, item: Event | _JournalEntry) -> None:
        with self._idle:
            self._pending += 1
        self._queue.put(item)

    def flush(self) -> None:
        """Wait until every event put so far is stored (or spilled); raise the error of a failed write, or the outage."""
        with self._idle:
            self._idle.wait_for(lambda: self._pending == 0)
        if self.error is not None:
            raise self.error
        if self.down is not None:
            raise self.down

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(self._STOP)
            self._thread.join()

    def finish(self, status: RunStatus) -> None:
        """Record how the run ended (after ``close``): in the store, or in the spill when the store is away."""
        if self.down is None:
            try:
                self._retrying(lambda: self._store.finish(self._run_id, status, owner=OWNER))
                return
            except Exception as exc:
                if not is_store_fault(exc):
                    raise
                try:
                    self._go_down(exc)
                except StoreUnavailableError as down:
                    log.error("run %s: its end (%s) could not be kept: %s", self._run_id, status, down)
        if self.spill is not None:
            try:
                self.spill.finish(status)
            except OSError as exc:
                log.error("run %s: its end (%s) could not be kept: %s", self._run_id, status, exc)
            self.spill.close()
            # An outage of seconds may be over by now: store the spill at once (each line once), not at the next start.
            replay_spills(self._store, self._data_dir)

    def _drain(self) -> None:
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            while True:  # what queued up while the last batch was written goes in one transaction
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    if not _answer_follows(batch[-1]):
                        break
                    try:  # a paid call's answer is put right after its accounting: both go in this transaction, or neither
                        batch.append(self._queue.get(timeout=ANSWER_WAIT_S))
                    except queue.Empty:
                        break
            stopping = any(item is self._STOP for item in batch)
            items = [item for item in batch if item is not self._STOP]
            if self.error is None:
                try:
                    self._write(items)
                except Exception as exc:  # handed to the run's thread by flush
                    log.error("storing events of run %s failed: %s", self._run_id, exc)
                    self.error = exc
            with self._idle:
                self._pending -= len(items)
                self._idle.notify_all()

    def _write(self, items: list[object]) -> None:
        # One batch is one transaction; a batch stored is never written again, so a retry doubles nothing.
        if not items:
            return
        unit = _Unit.of(items)
        if self.spill is None:
            try:
                self._retrying(lambda: self._store_unit(unit))
                return
            except Exception as exc:
                if not is_store_fault(exc):
                    raise
                self._go_down(exc)
        self._spill_unit(unit)

    def _store_unit(self, unit: _Unit) -> None:
        # Stored only while this process owns the run; the events and the journal entries of one batch in one transaction.
        self._store.append_many(self._run_id, unit.events, owner=OWNER, journal=unit.journal)
        if unit.events:
            self._head = self._store.head(self._run_id)  # the store's own link, as it just stored it (no second hashing)

    def _spill_unit(self, unit: _Unit) -> None:
        assert self.spill is not None
        try:
            self.spill.events(unit.events)
            for kind, key, payload in unit.journal:
                self.spill.journal(self._run_id, kind, key, payload)
        except OSError as exc:  # the spill's disk filled too: say so plainly; what is in the spill and the store stays
            self.down = StoreUnavailableError(
                f"{self.down or 'the run store is away'}; and the spill file {self.spill.path} could not take more "
                f"({exc.strerror or exc}): the run's later events are not kept. Free some space, then resume the run"
            )
            raise self.down from exc

    def _retrying(self, write: Callable[[], None]) -> None:
        for attempt in Retrying(
            retry=retry_if_exception(is_store_fault),
            wait=wait_exponential(multiplier=0.05, max=2.0),
            stop=stop_after_delay(self._patience_s),
            before_sleep=self._note_retry,
            reraise=True,
        ):
            with attempt:
                write()

    def _note_retry(self, state: RetryCallState) -> None:
        self.retries += 1
        if state.attempt_number == 1:
            exc = state.outcome.exception() if state.outcome else None
            log.warning(
                "run %s: %s; waiting up to %.0f s for it",
                self._run_id,
                fault_message(self._store.url, exc or Exception()),
                self._patience_s,
            )

    def _go_down(self, exc: BaseException) -> None:
        """The store stayed away: open the spill (raises OSError when no folder takes it) and say why the run pauses."""
        what = fault_message(self._store.url, exc)
        try:
            if self._head is None:
                raise OSError("where the run's record stands could not be read from the store")
            self.spill = Spill.open(self._data_dir, self._store, self._run_id, OWNER, self._head)
        except Exception as spill_exc:  # no spill folder of the desk's own: no shared fallback, the run stops here
            if not isinstance(spill_exc, OSError) and not is_store_fault(spill_exc):
                raise
            self.down = StoreUnavailableError(
                f"{what}, and its events cannot be kept on disk: {spill_exc}. The run is paused: what was stored before stays. "
                f"Free some space or make the data folder writable, then resume it from History or with "
                f"`python -m pipelines resume {self._run_id}`"
            )
            raise self.down from exc
        self.down = StoreUnavailableError(
            f"{what}; the run is paused and will resume: its events are kept in {self.spill.path} and stored "
            f"when the store is back. Resume it from History or with `python -m pipelines resume {self._run_id}`"
        )
        log.error("run %s: %s", self._run_id, self.down)


ANSWER_WAIT_S = 0.5  # how long the writer waits for a paid call's answer to follow its accounting (it is put microseconds later)


def _answer_follows(item: object) -> bool:
    """A live model call's accounting: its answer's journal entry comes next, and goes in the same transaction."""
    return isinstance(item, ModelCallCompleted) and not item.cached and not item.cancelled


@dataclass(frozen=True)
class _Unit:
    """One transaction: the events of a batch in order, and its journal entries (kind, key, payload) in order."""

    events: list[Event]
    journal: list[tuple[str, str, str]]

    @classmethod
    def of(cls, items: Sequence[object]) -> _Unit:
        events = [item for item in items if isinstance(item, Event)]
        journal = [(item.kind, item.key, item.payload) for item in items if isinstance(item, _JournalEntry)]
        return cls(events, journal)


@dataclass(frozen=True)
class _JournalEntry:
    run_id: str
    kind: str
    key: str
    payload: str

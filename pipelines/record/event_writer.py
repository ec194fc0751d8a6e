"""Stores a run's events and journal entries on a thread of its own, in the order the run produced them.

The runner puts every event here as it happens and the journal its entries (``JournalSink``);
the run's event loop never waits on the database.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass

from pipelines.events import Event
from pipelines.record.store import OWNER, RunStore

log = logging.getLogger(__name__)


class EventWriter:
    """Stores a run's events and journal entries in order on a thread of its own, so the run's event loop never waits on the database.

    Writing inline cost the loop 1-2 ms an event and 1.5-4.5 ms a journal entry (more on a busy
    machine), and a streamed answer emits dozens of events: time the protocol's next step
    could not start in. Items are stored in the order they were put, the events that queued
    up during a write together in the next transaction; ``close`` waits for the last one, so
    a finished run's record is complete before its status changes and its stream ends.
    A failed write is kept and raised by ``flush`` (the run then fails, as it did when the
    write was inline); nothing more is written after one failed.
    """

    _STOP = object()

    def __init__(self, store: RunStore, run_id: str) -> None:
        self._store = store
        self._run_id = run_id
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._idle = threading.Condition()
        self._pending = 0
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name=f"events-{run_id}", daemon=True)
        self._thread.start()

    def put(self, evt: Event) -> None:
        self._enqueue(evt)

    def journal_put(self, run_id: str, kind: str, key: str, payload: str) -> None:
        """The run journal's sink (the RunStore method of the same name, queued)."""
        self._enqueue(_JournalEntry(run_id, kind, key, payload))

    def _enqueue(self, item: Event | _JournalEntry) -> None:
        with self._idle:
            self._pending += 1
        self._queue.put(item)

    def flush(self) -> None:
        """Wait until every event put so far is stored; raise the error of a failed write."""
        with self._idle:
            self._idle.wait_for(lambda: self._pending == 0)
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(self._STOP)
            self._thread.join()

    def _drain(self) -> None:
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            while True:  # what queued up while the last batch was written goes in one transaction
                try:
                    batch.append(self._queue.get_nowait())
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
        events: list[Event] = []
        for item in items:
            if isinstance(item, Event):
                events.append(item)
                continue
            if events:
                self._store.append_many(self._run_id, events, owner=OWNER)
                events = []
            assert isinstance(item, _JournalEntry)
            self._store.journal_put(item.run_id, item.kind, item.key, item.payload)
        if events:
            self._store.append_many(self._run_id, events, owner=OWNER)  # stored only while this process owns the run


@dataclass(frozen=True)
class _JournalEntry:
    run_id: str
    kind: str
    key: str
    payload: str

"""A run's life on its thread: where each event goes, and how the run ends.

``EmitPipeline`` is the one road every event of a run takes, in order: redacted as a stream (a key split across
streamed chunks is caught whole), let through only if a resumed run has not stored it already, stored by the
event writer, handed to the page's ``RunHandle``. Once the store has stayed away past the writer's patience,
``step`` (the protocol's emit) stops the run at the next event that ends a piece of work.

``RunLife`` runs ``execute`` (runner.py) on a thread of its own and turns how it ended into the run's status and
its last event.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pipelines.core.database.faults import is_store_fault
from pipelines.core.errors import DebateDeskError, StoreUnavailableError
from pipelines.core.events import ArgumentDelta, Event, ModelCallCompleted, RunFailed, RunInterrupted
from pipelines.record.event_writer import EventWriter, StorePaused
from pipelines.record.journal import EventDeduper, Journal
from pipelines.record.outage import fault_message
from pipelines.record.redaction import Redactor, StreamRedactor
from pipelines.record.store import RunStore
from pipelines.run.llm.limits import Budget, BudgetExhaustedError
from pipelines.run.services import Services
from pipelines.run.step_gate import PauseFreedError, RunInterruptedError
from pipelines.run.tools.frozen import FrozenEvidence

if TYPE_CHECKING:
    from pipelines.run.runner import RunHandle

log = logging.getLogger(__name__)


class EmitPipeline:
    """Redact, deduplicate, store, deliver: each event of one run, from the loop's thread or the run's own."""

    def __init__(
        self, redact: Redactor, *, recorded: Sequence[Event], writer: EventWriter | None, deliver: Callable[[Event], None]
    ) -> None:
        self.stream = StreamRedactor(redact.secrets, redact.text, redact.event)
        self.dedupe = EventDeduper(recorded)
        self.writer = writer
        self.deliver = deliver
        self.lock = threading.Lock()  # the stream redactor holds state; events come from the loop and from the run's thread

    def emit(self, evt: Event) -> None:
        with self.lock:
            for safe in self.stream.feed(evt):
                self._pass_on(safe)

    def flush(self) -> None:
        """What the stream redactor held back (a turn's last characters) goes out, redacted."""
        with self.lock:
            for safe in self.stream.flush():
                self._pass_on(safe)

    def step(self, evt: Event) -> None:
        """The protocol's emit: once the store stayed away past the writer's patience, the run stops at the next event
        that ends a piece of work (not a streamed chunk, not a call's accounting, which precede its answer's journal entry)."""
        self.emit(evt)
        if self.writer is not None and self.writer.down is not None and not isinstance(evt, ModelCallCompleted | ArgumentDelta):
            raise StorePaused()

    def _pass_on(self, evt: Event) -> None:
        kept = self.dedupe.admit(evt)
        if kept is None:
            return
        if self.writer is not None:
            self.writer.put(kept)
        self.deliver(kept)


class RunLife:
    """One attempt of a run on its own thread: its events through an ``EmitPipeline``, its end recorded."""

    def __init__(
        self,
        handle: RunHandle,
        services: Services,
        *,
        recorded: Sequence[Event] = (),
        answers: dict[tuple[str, str], list[str]] | None = None,
        budget: Budget | None = None,
        frozen: FrozenEvidence | None = None,
    ) -> None:
        self.handle = handle
        self.services = services
        self.store: RunStore | None = services.store
        self.recorded = recorded
        self.budget = budget
        self.frozen = frozen
        self.redact = Redactor(handle.config.secrets())
        self.writer = EventWriter(self.store, handle.run_id, data_dir=services.settings.data_dir) if self.store is not None else None
        self.pipeline = EmitPipeline(self.redact, recorded=recorded, writer=self.writer, deliver=handle.push)
        self.journal = Journal(self.writer, handle.run_id, answers)
        self.journal.redact = self.redact.text

    def start(self, attempt_events: Sequence[Event], *, claimed: bool = False) -> None:
        """Claim the run (unless a resume did already), emit this attempt's first events, start the thread."""
        if self.store is not None and not claimed:
            self.store.claim_run(self.handle.run_id)
        for evt in attempt_events:
            self.pipeline.emit(evt)
        self.handle.thread = threading.Thread(target=self.run, name=f"run-{self.handle.run_id}", daemon=True)
        self.handle.thread.start()

    def run(self) -> None:
        from pipelines.run.runner import execute

        handle, run_id, store = self.handle, self.handle.run_id, self.store
        stop_beat = threading.Event()
        if store is not None:
            threading.Thread(target=_heartbeat, args=(store, run_id, stop_beat), name=f"beat-{run_id}", daemon=True).start()
        status, error = "failed", None
        try:
            asyncio.run(
                execute(
                    handle.claim,
                    handle.config,
                    self.services,
                    self.pipeline.step,
                    run_id,
                    journal=self.journal,
                    gate=handle.gate,
                    recorded=self.recorded,
                    budget=self.budget,
                    frozen=self.frozen,
                )
            )
            if self.writer is not None:
                self.writer.flush()  # a store that failed to take an event fails the run, as when events were written inline
            status = "completed"
        except (Exception, StorePaused) as exc:  # StorePaused is a BaseException: the stages must not swallow it
            status, error = self.ended(exc)
        finally:
            try:
                self.pipeline.flush()  # what a stream cut short held back (redacted) is kept, before the record closes
                stop_beat.set()
                if self.writer is not None:
                    self.writer.close()  # every event is stored (or spilled) before the run is marked finished and its stream ends
                    self.writer.finish(status)  # type: ignore[arg-type]
            finally:
                if store is not None:
                    store.release_run(run_id)
                handle.close(status, error)  # whatever the store did: the page and the CLI learn the run ended

    def ended(self, exc: BaseException) -> tuple[str, BaseException | None]:
        """The run's status after ``exc`` and its last event; a bug is also handed back, for the caller to raise."""
        emit = self.pipeline.emit
        match exc:
            case StorePaused() | StoreUnavailableError():  # the store stayed away: stopped between two steps, kept, resumable
                down = self.writer.down if self.writer is not None else None
                emit(RunInterrupted(reason=str(down if down is not None else exc)))
            case PauseFreedError():  # the page went away: stopped at the pause, free for anyone to take over
                emit(RunInterrupted(reason=str(exc), paused_round=exc.round))
            case RunInterruptedError():
                emit(RunInterrupted(reason=str(exc)))
            case BudgetExhaustedError():  # stopped between two calls: what it did so far is kept, and it can be resumed
                emit(RunInterrupted(reason=f"{exc}; raise the limit on the Settings page to go on", budget=exc.stop))
            case DebateDeskError():
                emit(RunFailed(reason=str(exc)))
                return "failed", None
            case _:  # a bug: record it, then hand it to the caller to raise
                log.error("run %s crashed:\n%s", self.handle.run_id, self.redact.text(traceback.format_exc()))
                emit(RunFailed(reason=f"internal error (please report): {type(exc).__name__}: {exc}"))
                return "failed", exc
        return "interrupted", None


def _heartbeat(store: RunStore, run_id: str, stop: threading.Event, every_s: float = 30.0) -> None:
    # A long model call emits nothing for minutes; the heartbeat tells other processes the run is alive.
    while not stop.wait(every_s):
        try:
            store.touch(run_id)
        except Exception as exc:  # the store away: the event writer waits for it and says so; the beat tries again later
            if not is_store_fault(exc):
                raise
            log.warning("run %s: heartbeat not stored: %s", run_id, fault_message(store.url, exc))

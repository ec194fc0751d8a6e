"""A run has one owner at a time: two resumes of one run, in two sessions or two processes, never both proceed."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import pytest
from sqlalchemy import text

from pipelines.core.errors import RunBusyError
from pipelines.core.events import ModelCallCompleted, RunFailed, RunResumed, StageStarted, VerdictReached
from pipelines.record.store import RunStore
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import Services, resume_run, stream_run
from tests.fakes import fake_config

CLAIM = "Masks reduce transmission of respiratory viruses"
T = TypeVar("T")


def failed_run(services: Services) -> str:
    services.chat_override = FakeChatModel(fail_after=1)
    events = list(stream_run(CLAIM, fake_config(protocol="single"), services))
    assert isinstance(events[-1], RunFailed)
    return events[0].run_id  # type: ignore[attr-defined,no-any-return]


def other_process(services: Services, chat: FakeChatModel) -> Services:
    again = Services(settings=services.settings, index=services.index, embedder=services.embedder, web=services.web)
    again.store = RunStore(services.store.url)  # type: ignore[union-attr]
    again.chat_override = chat
    return again


def race(attempt: Callable[[T], object], contenders: Sequence[T], timeout: float = 60) -> list[object]:
    """Run ``attempt`` for every contender at once, each on its own thread; what each returned, or the RunBusyError it raised."""
    results: list[object] = []

    def one(contender: T) -> None:
        try:
            results.append(attempt(contender))
        except RunBusyError as exc:
            results.append(exc)

    threads = [threading.Thread(target=one, args=(c,)) for c in contenders]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    return results


def test_the_store_lets_exactly_one_of_two_takeovers_win(fresh: Services) -> None:
    """The compare-and-set itself, raced from two connections (two processes' stores) on SQLite and PostgreSQL."""
    run_id = failed_run(fresh)
    stores = [RunStore(fresh.store.url) for _ in range(2)]  # type: ignore[union-attr]
    start = threading.Barrier(2)

    def take(store: RunStore) -> int:
        start.wait()
        return store.reopen(run_id)

    outcomes = race(take, stores)
    assert sorted(map(type, outcomes), key=str) == sorted([int, RunBusyError], key=str), outcomes
    assert fresh.store.get_run(run_id).attempts == 2  # type: ignore[union-attr]
    refusal = next(o for o in outcomes if isinstance(o, RunBusyError))
    assert "is being run" in str(refusal) and "one process runs a run at a time" in str(refusal)


def test_two_resumes_racing_past_the_status_check_one_is_refused_and_calls_no_model(
    fresh: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both resumes read 'failed' before either takes the run (the race the issue found); only one may go on."""
    run_id = failed_run(fresh)
    models = [FakeChatModel(latency_s=0.05), FakeChatModel(latency_s=0.05)]
    sessions = [other_process(fresh, m) for m in models]
    both_checked = threading.Barrier(2)
    for session in sessions:
        get_run = session.store.get_run  # type: ignore[union-attr]

        def checked(rid: str, get_run=get_run):  # type: ignore[no-untyped-def]
            summary = get_run(rid)
            both_checked.wait(timeout=10)  # neither takes the run before both have seen it resumable
            return summary

        monkeypatch.setattr(session.store, "get_run", checked)
    results = race(lambda session: list(resume_run(run_id, session).stream()), sessions)
    refused = [r for r in results if isinstance(r, RunBusyError)]
    finished = [r for r in results if isinstance(r, list)]
    assert len(refused) == 1 and len(finished) == 1, results
    assert isinstance(finished[0][-1], VerdictReached)
    assert sorted(m.calls > 0 for m in models) == [False, True], "the refused resume called no model"
    run = fresh.store.get_run(run_id)  # type: ignore[union-attr]
    assert run is not None and run.status == "completed" and run.attempts == 2
    record = fresh.store.events(run_id)  # type: ignore[union-attr]
    assert sum(isinstance(e, RunResumed) for e in record) == 1


def test_a_resume_while_another_process_runs_it_is_refused_with_who_and_when(fresh: Services) -> None:
    run_id = failed_run(fresh)
    with fresh.store.engine.begin() as conn:  # type: ignore[union-attr]
        conn.execute(
            text("UPDATE runs SET status = 'running', owner = 'desk-2:4242:abcd1234', heartbeat_at = :t WHERE id = :id"),
            {"t": time.time() - 5, "id": run_id},
        )
    with pytest.raises(RunBusyError, match=r"is being run by desk-2:4242, last heard from \d+ s ago.*silent for 180 s"):
        resume_run(run_id, other_process(fresh, FakeChatModel()))


def test_a_lease_left_by_a_dead_process_expires(fresh: Services) -> None:
    run_id = failed_run(fresh)
    with fresh.store.engine.begin() as conn:  # type: ignore[union-attr]
        conn.execute(  # another host's process that went silent 10 minutes ago
            text("UPDATE runs SET status = 'running', owner = 'desk-2:4242:abcd1234', heartbeat_at = :t WHERE id = :id"),
            {"t": time.time() - 600, "id": run_id},
        )
        conn.execute(  # and one on this host whose pid is gone
            text("UPDATE runs SET owner = :o WHERE id = :id"), {"o": f"{socket.gethostname()}:999999:dead", "id": run_id}
        )
    events = list(resume_run(run_id, other_process(fresh, FakeChatModel())).stream())
    assert isinstance(events[-1], VerdictReached)


def test_a_process_whose_run_was_taken_over_stores_nothing_more(fresh: Services) -> None:
    run_id = failed_run(fresh)
    store = fresh.store
    assert store is not None
    store.reopen(run_id)  # this process owns it now ...
    with store.engine.begin() as conn:  # ... until another process takes it over
        conn.execute(text("UPDATE runs SET owner = 'desk-2:1:x' WHERE id = :id"), {"id": run_id})
    from pipelines.record.store import OWNER

    before = len(store.events(run_id))
    with pytest.raises(RunBusyError, match="taken over"):
        store.append_many(run_id, [StageStarted(stage="late", detail="")], owner=OWNER)
    assert len(store.events(run_id)) == before
    store.finish(run_id, "failed", owner=OWNER)
    assert store.get_run(run_id).status == "running"  # type: ignore[union-attr]  # the new owner's status stands
    store.append_many(run_id, [ModelCallCompleted(role="judge", model="m")])  # no owner: the checker's override path

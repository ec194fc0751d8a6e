"""Kill a run mid-way (a fake that raises after N calls), reopen the store, resume: every event once, in order."""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from pipelines.core.events import (
    ArgumentDelta,
    Event,
    EvidenceRetrieved,
    ModelCallCompleted,
    RunFailed,
    RunResumed,
    RunStarted,
    TurnCompleted,
    VerdictReached,
)
from pipelines.record.journal import fingerprint
from pipelines.record.store import RunStore
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import resume_run, stream_run
from pipelines.run.services import Services
from tests.fakes import CannedWeb, fake_config, with_settings
from tests.pipelines.protocols import rounds_protocol

CLAIM = "Masks reduce transmission of respiratory viruses"
LIFECYCLE = (RunStarted, RunFailed, RunResumed)


@pytest.fixture
def rounds() -> Iterator[None]:
    with rounds_protocol.registered():
        yield


def reopen(services: Services, chat: FakeChatModel) -> Services:
    """A new process's view of the same store: a new RunStore on the same database, a healthy model."""
    again = Services(settings=services.settings, index=services.index, embedder=services.embedder, web=services.web)
    again.store = RunStore(services.store.url)  # type: ignore[union-attr]
    again.chat_override = chat
    return again


def comparable(events: list[Event]) -> list[str]:
    """Each event as content without time, lifecycle markers or the run id (which differ between two runs)."""
    return [fingerprint(e) for e in events if not isinstance(e, LIFECYCLE)]


def test_single_resumed_after_a_crash_equals_an_uninterrupted_run(fresh: Services) -> None:
    fresh.chat_override = FakeChatModel()
    reference = list(stream_run(CLAIM, fake_config(protocol="single"), fresh))
    assert isinstance(reference[-1], VerdictReached)

    fresh.chat_override = FakeChatModel(fail_after=1)  # the query call succeeds, the answer call dies
    crashed = list(stream_run(CLAIM, fake_config(protocol="single"), fresh))
    run_id = crashed[0].run_id  # type: ignore[attr-defined]
    assert isinstance(crashed[-1], RunFailed) and fresh.store.get_run(run_id).status == "failed"  # type: ignore[union-attr]

    model = FakeChatModel()
    again = reopen(fresh, model)
    resumed = list(resume_run(run_id, again).stream())
    record = again.store.events(run_id)  # type: ignore[union-attr]
    assert record == resumed
    assert record[: len(crashed)] == crashed, "what was stored before the crash is kept as it was"
    assert isinstance(record[len(crashed)], RunResumed) and record[len(crashed)].replayed == len(crashed)
    assert comparable(record) == comparable(reference), "every event once, in order"
    assert model.calls == 3, "the query call came from the journal; only the answer and the belief's 2 calls were made again"
    run = again.store.get_run(run_id)  # type: ignore[union-attr]
    assert run is not None and run.status == "completed" and run.attempts == 2 and run.verdict == reference[-1].verdict.label  # type: ignore[attr-defined]
    assert run.cost.calls == 4 and run.event_count == len(record)


@pytest.mark.parametrize("fail_after", [1, 4, 7, 10])
def test_concurrent_protocol_resumes_with_every_event_once(rounds: None, fresh: Services, fail_after: int) -> None:
    config = fake_config(protocol="rounds-test")
    counter = FakeChatModel()
    reference = list(stream_run(CLAIM, config, fresh.__class__(**{**fresh.__dict__, "chat_override": counter})))
    total_calls = counter.calls

    fresh.chat_override = FakeChatModel(fail_after=fail_after)
    crashed = list(stream_run(CLAIM, config, fresh))
    run_id = crashed[0].run_id  # type: ignore[attr-defined]
    assert isinstance(crashed[-1], RunFailed)

    journaled = sum(len(v) for (kind, _), v in fresh.store.journal(run_id).items() if kind == "llm")  # type: ignore[union-attr]
    assert journaled <= fail_after  # a call cut off by the crash of a concurrent one was never answered
    model = FakeChatModel()
    again = reopen(fresh, model)
    list(resume_run(run_id, again).stream())
    record = again.store.events(run_id)  # type: ignore[union-attr]

    assert isinstance(record[-1], VerdictReached)
    assert record[: len(crashed)] == crashed
    assert model.calls == total_calls - journaled, "no call answered before the crash is made again"
    # A call the crash cut off on its way reached the model all the same: it is recorded as cancelled, and made again.
    answered = [e for e in record if not (isinstance(e, ModelCallCompleted) and e.cancelled)]
    kinds = Counter(type(e).__name__ for e in answered if not isinstance(e, (*LIFECYCLE, ArgumentDelta)))
    assert kinds == Counter(type(e).__name__ for e in reference if not isinstance(e, (*LIFECYCLE, ArgumentDelta)))
    ids = [e.evidence.id for e in record if isinstance(e, EvidenceRetrieved)]
    assert len(ids) == len(set(ids)), "each evidence item retrieved once, with one id"
    turns = {e.turn.id: e.turn.text for e in record if isinstance(e, TurnCompleted)}
    streamed: dict[str, str] = {}
    for e in record:
        if isinstance(e, ArgumentDelta):
            streamed[e.turn_id] = streamed.get(e.turn_id, "") + e.text
    assert streamed == turns, "the streamed chunks add up to each answer exactly once"
    calls = [e for e in answered if isinstance(e, ModelCallCompleted)]
    assert len(calls) == total_calls and not any(c.cached for c in calls)


def test_resume_replays_web_results_without_the_network(fresh: Services) -> None:
    web = CannedWeb()
    fresh.web = web  # type: ignore[assignment]
    config = fake_config(protocol="single")
    config = with_settings(config, "retrieval", web_search=True)
    fresh.chat_override = FakeChatModel(fail_after=1)
    crashed = list(stream_run(CLAIM, config, fresh))
    run_id = crashed[0].run_id  # type: ignore[attr-defined]
    assert web.calls == 1
    again = reopen(fresh, FakeChatModel())
    again.web = CannedWeb(results=[])  # the web has changed since: the replay must not see it
    list(resume_run(run_id, again).stream())
    assert again.web.calls == 0  # type: ignore[union-attr]
    urls = [e.evidence.url for e in again.store.events(run_id) if isinstance(e, EvidenceRetrieved)]  # type: ignore[union-attr]
    assert "https://example.org/masks" in urls


def test_a_completed_run_is_not_resumed(fresh: Services) -> None:
    fresh.chat_override = FakeChatModel()
    events = list(stream_run(CLAIM, fake_config(protocol="single"), fresh))
    with pytest.raises(Exception, match="is completed; only failed or interrupted runs can be resumed"):
        resume_run(events[0].run_id, fresh)  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="no run 'nope'"):
        resume_run("nope", fresh)


def test_a_run_left_running_by_a_dead_process_is_marked_interrupted(fresh: Services) -> None:
    store = fresh.store
    assert store is not None
    store.create_run("orphan", CLAIM, "single", fake_config(protocol="single").snapshot())
    store.append("orphan", RunStarted(run_id="orphan", claim=CLAIM, protocol="single", config=fake_config(protocol="single").snapshot()))
    with store.engine.begin() as conn:  # as if a process on this host with a pid that no longer exists had started it
        conn.execute(text("UPDATE runs SET owner = :o WHERE id = 'orphan'"), {"o": f"{socket.gethostname()}:999999:dead"})
    assert store.reconcile() == ["orphan"]
    assert store.get_run("orphan").status == "interrupted"  # type: ignore[union-attr]
    fresh.chat_override = FakeChatModel()
    list(resume_run("orphan", fresh).stream())
    record = store.events("orphan")
    assert [type(e).__name__ for e in record[:2]] == ["RunStarted", "RunResumed"] and isinstance(record[-1], VerdictReached)
    assert json.dumps([e.model_dump(mode="json") for e in record]).count('"RunStarted"') == 1


@pytest.mark.parametrize("killed_after", [1, 2, 3])
def test_a_call_stored_just_before_a_kill_is_read_back_not_paid_twice(
    fresh: Services, monkeypatch: pytest.MonkeyPatch, killed_after: int
) -> None:
    """Issue 46: a kill right after a paid call's accounting reached the store, before its answer did, paid the call twice."""
    assert fresh.store is not None
    counter = FakeChatModel()
    list(stream_run(CLAIM, fake_config(protocol="single"), fresh.__class__(**{**fresh.__dict__, "chat_override": counter})))
    total = counter.calls
    real_append, real_journal = RunStore.append_many, RunStore.journal_put
    state = {"paid": 0, "dead": False}

    def append_many(self: RunStore, run_id: str, events: list[Event], **kwargs: object) -> int:
        if state["dead"]:
            return 0  # the process is gone: nothing more reaches the database
        paid = [i for i, e in enumerate(events) if isinstance(e, ModelCallCompleted) and not e.cached]
        if paid and state["paid"] + len(paid) >= killed_after:
            state["dead"] = True  # killed just after this transaction, which stored the call's accounting, committed
        state["paid"] += len(paid)
        return real_append(self, run_id, events, **kwargs)  # type: ignore[arg-type]

    def journal_put(self: RunStore, *args: str) -> None:
        if not state["dead"]:
            real_journal(self, *args)

    monkeypatch.setattr(RunStore, "append_many", append_many)
    monkeypatch.setattr(RunStore, "journal_put", journal_put)
    monkeypatch.setattr(RunStore, "finish", lambda self, *a, **k: None)  # nor its end
    fresh.chat_override = FakeChatModel()
    handle = stream_run(CLAIM, fake_config(protocol="single"), fresh)
    run_id = next(handle).run_id  # type: ignore[attr-defined]
    list(handle)
    monkeypatch.undo()
    with fresh.store.engine.begin() as conn:  # what the next start says of a run whose process died
        conn.execute(text("UPDATE runs SET status = 'interrupted' WHERE id = :r"), {"r": run_id})

    paid_before = fresh.store.get_run(run_id).cost.calls  # type: ignore[union-attr]
    model = FakeChatModel()
    again = reopen(fresh, model)
    list(resume_run(run_id, again).stream())
    assert killed_after <= paid_before <= total  # (calls that end together are stored in one transaction)
    assert model.calls == total - paid_before, "a call whose cost is in the record was paid again on resume"
    run = again.store.get_run(run_id)  # type: ignore[union-attr]
    assert run is not None and run.status == "completed" and run.cost.calls == total


def test_a_limit_set_in_the_environment_holds_on_resume_from_a_shell_without_it(fresh: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46: a run stopped by a call limit set only in the environment ran unlimited when resumed from a shell without it."""
    assert fresh.store is not None
    monkeypatch.setenv("DEBATEDESK_BUDGET__MAX_CALLS", "1")
    fresh.chat_override = FakeChatModel()
    stopped = list(stream_run(CLAIM, fake_config(protocol="single"), fresh))
    run_id = stopped[0].run_id  # type: ignore[attr-defined]
    assert fresh.store.get_run(run_id).status == "interrupted"  # type: ignore[union-attr]

    monkeypatch.delenv("DEBATEDESK_BUDGET__MAX_CALLS")  # another shell, which sets no limit
    model = FakeChatModel()
    again = reopen(fresh, model)
    resumed = list(resume_run(run_id, again).stream())
    assert model.calls == 0, "the run went past the limit it was stopped by"
    assert resumed[-1].type == "RunInterrupted" and "limit" in resumed[-1].reason  # type: ignore[attr-defined]
    run = again.store.get_run(run_id)  # type: ignore[union-attr]
    assert run is not None and run.status == "interrupted" and run.config["budget"]["max_calls"] == 1

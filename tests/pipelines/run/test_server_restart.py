"""A local model server that dies mid-run is started again and the broken call asked again; the run loses nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from pipelines.core.config import ROLES, RunConfig
from pipelines.core.events import (
    ArgumentDelta,
    Event,
    ModelCallCompleted,
    ModelServerRestarted,
    RunFailed,
    StageCompleted,
    StageFailed,
    StageStarted,
    TurnCompleted,
    VerdictReached,
)
from pipelines.record.export import export_run
from pipelines.run.llm.registry import BACKENDS, backend_names
from pipelines.run.runner import stream_run
from pipelines.run.server_restart import STARTING, STARTING_HUNG, ServerRestarts
from pipelines.run.services import Services
from tests.fakes import LocalServer, LostConnection, fake_config, local_server_backend

CLAIM = "Masks reduce transmission of respiratory viruses"


@pytest.fixture
def on_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """Registers a backend on a ``LocalServer`` the test gives; yields the function that does it."""
    backend_names()  # the built-in backends first, so registering one does not hide them

    def register(server: LocalServer) -> None:
        monkeypatch.setitem(BACKENDS, "local-fake", local_server_backend(server))

    yield register


def config_on_server(protocol: str) -> RunConfig:
    config = fake_config(protocol=protocol)
    return config.model_copy(update={role: config.role(role).model_copy(update={"backend": "local-fake"}) for role in ROLES})


def run(services: Services, protocol: str) -> list[Event]:
    return list(stream_run(CLAIM, config_on_server(protocol), services))


def what_was_argued(events: list[Event]) -> tuple[object, ...]:
    turns = tuple(e.turn.text for e in events if isinstance(e, TurnCompleted))
    verdict = next(e.verdict for e in events if isinstance(e, VerdictReached))
    return turns, verdict.label, verdict.confidence


# How a server fails, as a LocalServer argument, and what the record and the status line then say.
FAULTS = {
    "dies": ("die_at_call", "LostConnection", STARTING),
    "hangs": ("hang_at_call", "hung: ", STARTING_HUNG),  # it runs, but answers nothing: killed, then started again
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("protocol", ["toolmad", "desk"])
def test_a_server_dying_or_hanging_mid_run_is_started_again_and_the_run_ends_as_it_would_have(
    services: Services, on_server: object, protocol: str, fault: str
) -> None:
    at_call, reason, status = FAULTS[fault]
    steady = LocalServer()
    on_server(steady)  # type: ignore[operator]
    expected = run(services, protocol)
    assert steady.starts == 1 and not any(isinstance(e, ModelServerRestarted) for e in expected)

    failing = LocalServer(**{at_call: steady.calls // 2})  # type: ignore[arg-type]
    on_server(failing)  # type: ignore[operator]
    events = run(services, protocol)

    assert isinstance(events[-1], VerdictReached), events[-1]
    assert failing.starts == 2, "started once, then once again after it died or hung"
    restarts = [e for e in events if isinstance(e, ModelServerRestarted)]
    assert len(restarts) == 1 and restarts[0].reason.startswith(reason), restarts
    at = events.index(restarts[0])  # other roles' events may come between (their calls were under way)
    assert any(isinstance(e, StageStarted) and e.detail == status for e in events[:at])
    assert any(isinstance(e, StageCompleted) and e.stage == "model" for e in events[at:])
    assert what_was_argued(events) == what_was_argued(expected), "the same turns and the same verdict"
    assert sum(isinstance(e, ModelCallCompleted) for e in events) == sum(isinstance(e, ModelCallCompleted) for e in expected)
    run_id = events[0].run_id  # type: ignore[attr-defined]
    stored = services.store.events(run_id)  # type: ignore[union-attr]
    assert [e.type for e in stored if isinstance(e, ModelServerRestarted)] == ["ModelServerRestarted"], "the record says so"
    report = export_run(services.store.get_run(run_id), stored, "md")  # type: ignore[union-attr,arg-type]
    assert "the model server stopped" in report and "was started again" in report, "and so does the report an auditor reads"


@pytest.mark.parametrize("fault", FAULTS)
def test_a_server_dying_or_hanging_mid_answer_streams_the_answer_once(services: Services, on_server: object, fault: str) -> None:
    steady = LocalServer()
    on_server(steady)  # type: ignore[operator]
    expected = run(services, "single")
    streamed_call = next(i for i, e in enumerate(e for e in expected if isinstance(e, ModelCallCompleted)) if e.role == "debater") + 1

    failing = LocalServer(**{FAULTS[fault][0]: streamed_call}, mid_stream=True)  # type: ignore[arg-type]
    on_server(failing)  # type: ignore[operator]
    events = run(services, "single")

    assert isinstance(events[-1], VerdictReached) and failing.starts == 2
    for turn in (e.turn for e in events if isinstance(e, TurnCompleted)):
        chunks = [e.text for e in events if isinstance(e, ArgumentDelta) and e.turn_id == turn.id]
        assert len(chunks) > 1 and "".join(chunks) == turn.text, "the part shown before the break or stall is not shown twice"
    assert what_was_argued(events) == what_was_argued(expected)


def test_a_server_that_cannot_start_again_fails_the_run_with_its_reason(services: Services, on_server: object) -> None:
    server = LocalServer(die_at_call=3, can_start=False)
    on_server(server)  # type: ignore[operator]
    events = run(services, "toolmad")
    assert isinstance(events[-1], RunFailed)
    assert "model file missing" in events[-1].reason
    assert not any(isinstance(e, ModelServerRestarted) for e in events)


def test_a_lost_connection_to_a_server_that_still_runs_starts_nothing(services: Services, on_server: object) -> None:
    server = LocalServer()
    on_server(server)  # type: ignore[operator]
    real_call = server.call

    def flaky(generation: int, *, streamed: bool = False) -> bool:
        if server.calls == 2:
            server.calls += 1
            raise LostConnection("Connection reset by peer (test)")
        return real_call(generation, streamed=streamed)

    server.call = flaky  # type: ignore[method-assign]
    events = run(services, "toolmad")
    failed = [e for e in events if isinstance(e, StageFailed)]
    assert len(failed) == 1 and "cannot reach the endpoint" in failed[0].reason, "the call fails as before (toolmad goes on without it)"
    assert server.starts == 1 and not any(isinstance(e, ModelServerRestarted) for e in events)


def test_a_call_that_timed_out_on_a_server_that_still_answers_starts_nothing(services: Services, on_server: object) -> None:
    server = LocalServer(slow_at_call=2)
    on_server(server)  # type: ignore[operator]
    events = run(services, "toolmad")
    failed = [e for e in events if isinstance(e, StageFailed)]
    assert len(failed) == 1 and "cannot reach the endpoint" in failed[0].reason, "the call fails as before (toolmad goes on without it)"
    assert server.health_checks == 1, "the server was asked whether it still answers"
    assert server.starts == 1 and not any(isinstance(e, ModelServerRestarted) for e in events)


class _Services:
    """Only what ServerRestarts asks of the services: the model built for a spec, and a new one."""

    def __init__(self, server: LocalServer) -> None:
        self.backend = local_server_backend(server)
        self.built: dict[str, object] = {}
        self.builds = 0

    def built_chat_model(self, spec: object) -> object | None:
        chat = self.built.get(str(spec))
        return chat if chat is not None and self.backend.serves(chat, None) else None  # type: ignore[arg-type]

    def chat_model(self, spec: object) -> object:
        self.builds += 1
        self.built[str(spec)] = self.backend.build(spec, None)  # type: ignore[arg-type]
        return self.built[str(spec)]


def test_roles_that_lose_the_server_at_once_get_one_restart_and_one_notice() -> None:
    server = LocalServer()
    services = _Services(server)
    config = config_on_server("toolmad")
    judge, pro = config.role("judge").model_copy(update={"logprobs": True}), config.role("debater")
    old_judge, old_pro = services.chat_model(judge), services.chat_model(pro)
    server.alive = False
    emitted: list[Event] = []
    restarts = ServerRestarts(services, emitted.append)  # type: ignore[arg-type]

    async def both() -> list[object]:
        error = LostConnection("gone")
        return list(await asyncio.gather(restarts.hook("judge", judge)(old_judge, error), restarts.hook("debater", pro)(old_pro, error)))  # type: ignore[arg-type]

    new_judge, new_pro = asyncio.run(both())
    assert server.starts == 2 and restarts.count == 1
    assert [type(e).__name__ for e in emitted] == ["StageStarted", "ModelServerRestarted", "StageCompleted"]
    assert new_judge is not old_judge and new_pro is not old_pro
    assert new_judge.generation == new_pro.generation == server.generation  # type: ignore[attr-defined]
    # the server runs: a lost connection is another fault, and nothing is started
    assert asyncio.run(restarts.hook("debater", pro)(new_pro, LostConnection("reset"))) is None  # type: ignore[arg-type]
    assert server.starts == 2 and len(emitted) == 3


@pytest.mark.parametrize(("slots", "most"), [(1, 1), (None, 3)])
def test_calls_beyond_what_the_server_answers_at_once_wait_in_the_app(
    services: Services, on_server: object, slots: int | None, most: int
) -> None:
    """A local server with one slot queues the others' calls, and their timeouts ran while they waited (proclaim's panel timed out)."""
    server = LocalServer(slots=slots)
    on_server(server)  # type: ignore[operator]
    events = run(services, "proclaim")  # a panel of three judges, asked at once
    assert isinstance(events[-1], VerdictReached)
    if slots == 1:
        assert server.most_at_once == 1, "one at a time where the server answers one"
    else:  # the panel's three together, and another role's call (a belief reading) may overlap them
        assert server.most_at_once >= most, "the panel's three at once where the server sets no bound"

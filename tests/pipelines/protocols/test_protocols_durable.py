"""The round-based protocols on main (toolmad, proclaim) survive a crash and honour step mode, through the same machinery."""

from __future__ import annotations

from collections import Counter

import pytest

from pipelines.core.events import (
    ArgumentDelta,
    CheckerEditedQuery,
    CheckerStruckEvidence,
    EvidenceRetrieved,
    ModelCallCompleted,
    QueryIssued,
    RunFailed,
    RunResumed,
    RunStarted,
    StepPaused,
    TurnCompleted,
    VerdictReached,
)
from pipelines.protocols.base import protocol_names
from pipelines.run.context import Review
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import resume_run, start_run, stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"
LIFECYCLE = (RunStarted, RunFailed, RunResumed, ArgumentDelta)
ROUND_PROTOCOLS = [p for p in ("toolmad", "proclaim") if p in protocol_names()]


class KilledChat(FakeChatModel):
    """Like fail_after, but the failure is not one a protocol may recover from: the process is as good as killed."""

    kill_after: int = 0

    def reply(self, messages, response_format=None):  # type: ignore[no-untyped-def]
        if self.calls >= self.kill_after:
            raise RuntimeError("simulated kill")
        return super().reply(messages, response_format)


def kinds(events: list) -> Counter:  # type: ignore[type-arg]
    """The events by kind, leaving out the run's lifecycle and any call cancelled when a parallel branch crashed: it was
    sent (and is recorded, tokens estimated), and the resumed run makes it again."""
    return Counter(
        type(e).__name__ for e in events if not isinstance(e, LIFECYCLE) and not (isinstance(e, ModelCallCompleted) and e.cancelled)
    )


@pytest.mark.parametrize("protocol", ROUND_PROTOCOLS)
def test_a_crashed_round_protocol_resumes_with_every_event_once(services: Services, protocol: str) -> None:
    counter = FakeChatModel()
    services.chat_override = counter
    reference = list(stream_run(CLAIM, fake_config(protocol=protocol), services))
    assert isinstance(reference[-1], VerdictReached)
    total = counter.calls

    services.chat_override = KilledChat(kill_after=total // 2)  # toolmad and proclaim ride out a failing backend: kill instead
    crashed = []
    with pytest.raises(RuntimeError, match="simulated kill"):
        for evt in stream_run(CLAIM, fake_config(protocol=protocol), services):
            crashed.append(evt)
    assert isinstance(crashed[-1], RunFailed)
    run_id = crashed[0].run_id  # type: ignore[attr-defined]
    assert services.store is not None
    journaled = sum(len(v) for (kind, _), v in services.store.journal(run_id).items() if kind == "llm")

    model = FakeChatModel()
    services.chat_override = model
    list(resume_run(run_id, services).stream())
    record = services.store.events(run_id)
    assert isinstance(record[-1], VerdictReached) and record[: len(crashed)] == crashed
    assert model.calls == total - journaled, "no answered call is made again"
    assert kinds(record) == kinds(reference), "every event once"
    ids = [e.evidence.id for e in record if isinstance(e, EvidenceRetrieved)]
    assert len(ids) == len(set(ids))
    assert record[-1].verdict.label == reference[-1].verdict.label  # type: ignore[attr-defined]


@pytest.mark.parametrize("protocol", ROUND_PROTOCOLS)
def test_step_mode_edits_and_strikes_reach_a_round_protocol(services: Services, protocol: str) -> None:
    services.chat_override = FakeChatModel()
    config = fake_config(protocol=protocol)
    config = with_settings(config, "pauses", step_mode=True)
    if protocol == "toolmad":  # the fake debaters agree at once: without this the debate ends before the first pause
        config = with_settings(config, "toolmad", early_stop=False)
    handle = start_run(CLAIM, config, services, interactive=True)
    edited: dict[str, str] = {}
    struck: list[str] = []
    seen = 0
    while not handle.done:
        handle.wait(seen, timeout=0.05)
        seen = len(handle.events)
        pending = handle.pending
        if pending is None:
            continue
        review = Review()
        if not edited and pending.next_queries:
            agent = next(iter(pending.next_queries))
            edited[agent] = "surgical masks household influenza trial"
            cited = [c for e in handle.events if isinstance(e, TurnCompleted) for c in e.turn.cited]
            struck.extend(cited[:1])
            review = Review(queries=dict(edited), struck={c: "retracted" for c in struck})
        handle.submit(review, by="Ana")
    events = list(handle.stream())
    assert isinstance(events[-1], VerdictReached)
    assert any(isinstance(e, StepPaused) for e in events)
    if not edited:
        pytest.skip(f"{protocol} planned no next query on this claim before it stopped")
    edit_at = next(i for i, e in enumerate(events) if isinstance(e, CheckerEditedQuery))
    later_queries = [e.query for e in events[edit_at:] if isinstance(e, QueryIssued)]
    assert any("surgical masks household influenza trial" in q for q in later_queries), later_queries
    if struck:
        strike_at = next(i for i, e in enumerate(events) if isinstance(e, CheckerStruckEvidence))
        later = [e.turn for e in events[strike_at:] if isinstance(e, TurnCompleted)]
        assert all(struck[0] not in t.cited for t in later)

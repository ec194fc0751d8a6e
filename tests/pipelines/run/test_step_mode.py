"""Step mode on the fake backend: the run pauses after each round and honours the checker's review."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest

from pipelines.core.events import (
    CheckerAddedEvidence,
    CheckerEditedQuery,
    CheckerStruckEvidence,
    Event,
    QueryIssued,
    RunInterrupted,
    RunResumed,
    StepPaused,
    StepResumed,
    TurnCompleted,
    VerdictOverridden,
    VerdictReached,
)
from pipelines.record.export import to_markdown
from pipelines.record.record_file import load_record, to_json
from pipelines.run.context import Review
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import RunHandle, resume_run, start_run
from pipelines.run.services import Services
from pipelines.run.step_gate import PauseFreedError, PendingReview, RunInterruptedError, override_verdict, pasted_evidence
from tests.fakes import fake_config, with_settings
from tests.pipelines.protocols import rounds_protocol

CLAIM = "Masks reduce transmission of respiratory viruses"
Decide = Callable[[PendingReview, list[Event]], Review]


@pytest.fixture
def rounds() -> Iterator[None]:
    with rounds_protocol.registered():
        yield


def step_config(protocol: str = "single", timeout_min: float = 1.0):  # type: ignore[no-untyped-def]
    config = fake_config(protocol=protocol)
    return with_settings(config, "pauses", step_mode=True, pause_timeout_min=timeout_min)


def drive(handle: RunHandle, decide: Decide, by: str = "Ana", pauses: list[PendingReview] | None = None) -> list[Event]:
    """Act as the page: wait for each pause and submit the checker's review; returns every event (and adds each pause to ``pauses``)."""
    seen = 0
    while not handle.done:
        handle.wait(seen, timeout=0.05)
        seen = len(handle.events)
        pending = handle.pending
        if pending is not None:
            if pauses is not None:
                pauses.append(pending)
            handle.submit(decide(pending, list(handle.events)), by=by, note=f"round {pending.round} checked")
    return list(handle.stream())


def test_single_pauses_before_the_search_and_before_the_answer(services: Services) -> None:
    services.chat_override = FakeChatModel()
    pauses: list[PendingReview] = []

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        if pending.round == 0:
            return Review(queries={"Analyst": "surgical masks influenza trial"})
        pasted = pasted_evidence(
            "new", "Masks reduce transmission of respiratory viruses in a 2024 cluster trial.", title="My note", round=1, by="Ana"
        )
        return Review(added=(pasted,))

    events = drive(start_run(CLAIM, step_config(), services, interactive=True), decide, pauses=pauses)
    assert [p.round for p in pauses] == [0, 1]
    assert pauses[0].next_queries == {"Analyst": "masks reduce transmission respiratory viruses"}
    queries = [e.query for e in events if isinstance(e, QueryIssued) and e.tool == "corpus"]
    assert queries == ["surgical masks influenza trial"], "the edited query is the one used"
    edit = next(e for e in events if isinstance(e, CheckerEditedQuery))
    assert (edit.before, edit.after, edit.by) == ("masks reduce transmission respiratory viruses", "surgical masks influenza trial", "Ana")
    assert edit.at > 0
    added = next(e.evidence for e in events if isinstance(e, CheckerAddedEvidence))
    assert added.id.startswith("E") and added.source == "user" and added.found_by == "checker Ana"
    turn = next(e.turn for e in events if isinstance(e, TurnCompleted))
    assert added.id in turn.cited, "the pasted evidence reached the agent"
    assert [e.action for e in events if isinstance(e, StepResumed)] == ["continue", "continue"]
    assert isinstance(events[-1], VerdictReached)


def test_an_edited_query_is_used_and_a_struck_item_is_not_cited_after_the_strike(rounds: None, services: Services) -> None:
    services.chat_override = FakeChatModel()
    struck: list[str] = []

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        if pending.round != 1:
            return Review()
        cited = [c for e in events if isinstance(e, TurnCompleted) for c in e.turn.cited]
        struck.append(cited[0])
        return Review(queries={"Pro": "cloth masks laboratory filtration"}, struck={cited[0]: "retracted study"})

    events = drive(start_run(CLAIM, step_config("rounds-test"), services, interactive=True), decide)
    assert struck, "round 1 cited something to strike"
    strike_at = next(i for i, e in enumerate(events) if isinstance(e, CheckerStruckEvidence))
    assert events[strike_at].evidence_id == struck[0] and events[strike_at].reason == "retracted study"  # type: ignore[attr-defined]
    later_turns = [e.turn for e in events[strike_at:] if isinstance(e, TurnCompleted)]
    assert len(later_turns) == 4 and all(struck[0] not in t.cited for t in later_turns)
    assert all(struck[0] not in t.text for t in later_turns), "the struck item is not even shown to the agents"
    pro_round2 = next(e for e in events if isinstance(e, QueryIssued) and e.agent == "Pro" and e.round == 2)
    assert pro_round2.query == "cloth masks laboratory filtration"
    con_round2 = next(e for e in events if isinstance(e, QueryIssued) and e.agent == "Con" and e.round == 2)
    assert con_round2.query.endswith("round 2"), "the unedited agent keeps its own query"
    assert [e.round for e in events if isinstance(e, StepPaused)] == [1, 2, 3]


def test_the_interventions_are_in_the_export(rounds: None, services: Services) -> None:
    services.chat_override = FakeChatModel()

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        if pending.round == 1:
            first = next(e.turn.cited[0] for e in events if isinstance(e, TurnCompleted) and e.turn.cited)
            return Review(
                queries={"Con": "mask mandates no effect"},
                extra_queries=("N95 respirators healthcare workers",),
                struck={first: "off topic"},
            )
        return Review(stop=True)

    events = drive(start_run(CLAIM, step_config("rounds-test"), services, interactive=True), decide)
    run_id = events[0].run_id  # type: ignore[attr-defined]
    override_verdict(services.store, run_id, "REFUTES", "The key trial was retracted.", "Ana")  # type: ignore[arg-type]
    store = services.store
    assert store is not None
    record = json.loads(to_json(store.get_run(run_id), store.events(run_id)))  # type: ignore[arg-type]
    kinds = [e["type"] for e in record["events"]]
    for kind in ("StepPaused", "CheckerEditedQuery", "CheckerAddedQuery", "CheckerStruckEvidence", "StepResumed", "VerdictOverridden"):
        assert kind in kinds
    assert all(e["by"] == "Ana" and e["at"] > 0 for e in record["events"] if e["type"].startswith("Checker"))
    assert [e["action"] for e in record["events"] if e["type"] == "StepResumed"] == ["continue", "stop"]
    assert kinds.count("RoundStarted") == 2, "stop ended the debate after round 2"
    override = next(e for e in record["events"] if e["type"] == "VerdictOverridden")
    model = next(e for e in record["events"] if e["type"] == "VerdictReached")
    assert override["model_verdict"]["label"] == model["verdict"]["label"] and override["label"] == "REFUTED", "one vocabulary"
    assert record["run"]["checker_verdict"] == "REFUTED" and record["run"]["verdict"] == model["verdict"]["label"]
    report = to_markdown(*load_record(json.dumps(record)))
    assert "Checker's interventions" in report and "off topic" in report and "N95 respirators healthcare workers" in report
    assert "set the verdict to **REFUTED**" in report


def test_a_pause_nobody_answers_interrupts_the_run_and_resume_asks_again(services: Services) -> None:
    services.chat_override = FakeChatModel()
    handle = start_run(CLAIM, step_config(timeout_min=0.2 / 60), services, interactive=True)
    events = list(handle.stream())
    assert isinstance(events[-1], RunInterrupted) and "no review came" in events[-1].reason
    run_id = handle.run_id
    assert services.store.get_run(run_id).status == "interrupted"  # type: ignore[union-attr]

    resumed = resume_run(run_id, services, interactive=True)
    assert resumed.gate is not None
    resumed.gate.timeout_s = 60
    drive(resumed, lambda p, e: Review(queries={"Analyst": "mask trial"}) if p.round == 0 else Review())
    record = services.store.events(run_id)  # type: ignore[union-attr]
    assert [e.round for e in record if isinstance(e, StepPaused)] == [0, 1], "the pause before the resume is not repeated"
    assert [e.query for e in record if isinstance(e, QueryIssued) and e.tool == "corpus"] == ["mask trial"]
    assert services.store.get_run(run_id).status == "completed"  # type: ignore[union-attr]


def test_a_resumed_step_mode_run_replays_the_checkers_decisions(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_after=1)  # the answer call dies after the checker's edits
    handle = start_run(CLAIM, step_config(), services, interactive=True)
    drive(
        handle,
        lambda p, e: Review(queries={"Analyst": "masks influenza household"}) if p.round == 0 else Review(struck={"E1": "duplicate"}),
    )
    assert handle.status == "failed"
    services.chat_override = FakeChatModel()
    resumed = resume_run(handle.run_id, services)  # from the CLI: no one to ask, and no need
    list(resumed.stream())
    record = services.store.events(handle.run_id)  # type: ignore[union-attr]
    assert [e.query for e in record if isinstance(e, QueryIssued) and e.tool == "corpus"] == ["masks influenza household"]
    assert sum(isinstance(e, CheckerStruckEvidence) for e in record) == 1
    turn = next(e.turn for e in record if isinstance(e, TurnCompleted))
    assert "E1" not in turn.cited and isinstance(record[-1], VerdictReached)


def test_without_a_page_step_mode_does_not_pause(services: Services) -> None:
    services.chat_override = FakeChatModel()
    events = list(start_run(CLAIM, step_config(), services).stream())  # the CLI: interactive=False
    assert not any(isinstance(e, StepPaused) for e in events) and isinstance(events[-1], VerdictReached)


def test_override_needs_a_name_a_verdict_and_a_reason(services: Services) -> None:
    services.chat_override = FakeChatModel()
    events = list(start_run(CLAIM, fake_config(protocol="single"), services).stream())
    run_id = events[0].run_id  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="say who overrides"):
        override_verdict(services.store, run_id, "REFUTES", "", " ")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="choose the verdict"):
        override_verdict(services.store, run_id, " ", "", "Ana")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="give a reason for your verdict"):
        override_verdict(services.store, run_id, "REFUTES", " \n ", "Ana")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'maybe' is not a verdict here: choose SUPPORTED, REFUTED or NOT ENOUGH INFO"):
        override_verdict(services.store, run_id, "maybe", "a reason", "Ana")  # type: ignore[arg-type]
    assert services.store.events_of_type(run_id, "VerdictOverridden") == [], "nothing refused was recorded"  # type: ignore[union-attr]
    evt = override_verdict(services.store, run_id, "refutes", "note", "Ana")  # type: ignore[arg-type]
    assert isinstance(evt, VerdictOverridden) and evt.label == "REFUTED" and evt.model_verdict is not None, (
        "a protocol's word, in the one vocabulary"
    )


def test_a_pause_whose_page_went_away_is_freed_within_minutes_and_anyone_may_take_it_over(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 26: a pause left in a closed tab showed "running" for up to an hour, and nobody could take it over.
    from pipelines.run import step_gate

    # a few minutes in the app; here long enough that a loaded machine's stall between two signs of life cannot free it
    monkeypatch.setattr(step_gate, "PAGE_GONE_AFTER_S", 1.5)
    services.chat_override = FakeChatModel()
    handle = start_run(CLAIM, step_config(timeout_min=60), services, interactive=True, by="Ana")
    assert handle.gate is not None and handle.gate.page_gone_after_s == 1.5
    # The page is open: it says so (each rerun, and its fragment every few seconds), and the pause holds.
    held_until = time.monotonic() + 3.0  # twice the time a silent page is given
    while time.monotonic() < held_until:
        handle.page_alive()
        time.sleep(0.05)
    assert handle.pending is not None and not handle.done, "a pause whose page is open is held"
    # The tab is closed: nothing more from the page. The pause is freed, not held for the hour.
    events = list(handle.stream())
    stop = events[-1]
    assert isinstance(stop, RunInterrupted) and stop.paused_round == 0 and "free" in stop.reason
    store = services.store
    assert store is not None
    row = store.get_run(handle.run_id)
    assert row is not None and row.status == "interrupted" and row.stop_reason == "paused at round 0, free to take over"

    # Bo takes it over (recorded: who and when), reviews the round and the run goes on to its verdict.
    taken = resume_run(handle.run_id, services, interactive=True, by="Bo")
    record = drive(taken, lambda p, e: Review(), by="Bo")
    resumed = [e for e in store.events(handle.run_id) if isinstance(e, RunResumed)]
    assert [(e.by, e.attempt) for e in resumed] == [("Bo", 2)] and resumed[0].at > stop.at
    assert [e.by for e in record if isinstance(e, StepResumed)] == ["Bo", "Bo"]
    final = store.get_run(handle.run_id)
    assert final is not None and final.status == "completed" and final.stop_reason is None


def test_a_gate_with_no_page_to_watch_waits_for_its_timeout() -> None:
    import asyncio

    from pipelines.run.step_gate import StepGate

    gate = StepGate(timeout_s=0.3, heartbeat_every_s=0.05)  # the command line: no page, no freeing
    with pytest.raises(RunInterruptedError, match="no review came") as caught:
        asyncio.run(gate.wait(1, {}))
    assert not isinstance(caught.value, PauseFreedError)


def test_desk_stopped_before_its_search_and_a_checkers_far_query_read_all_the_same(services: Services) -> None:
    from pipelines.core.events import EvidenceRetrieved, ExhibitStanceRead, VerdictAggregated
    from pipelines.core.personas import HUMAN_CHECKER

    stopped = drive(start_run(CLAIM, step_config("desk"), services, interactive=True), lambda pending, events: Review(stop=True))
    assert isinstance(stopped[-1], VerdictReached) and stopped[-1].verdict.label == "NOT ENOUGH INFO", "stopped before it searched"

    far = "lightning strikes the same place twice"  # nothing like the claim: the clerk's search would set it aside

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        return Review(extra_queries=(far,)) if pending.round == 0 else Review()

    events = drive(start_run(CLAIM, with_settings(step_config("desk"), "desk", min_likeness=0.9), services, interactive=True), decide)
    found = {e.evidence.id: e.evidence for e in events if isinstance(e, EvidenceRetrieved)}
    read = {e.evidence_id for e in events if isinstance(e, ExhibitStanceRead)}
    checkers = {i for i, e in found.items() if e.found_by == HUMAN_CHECKER}
    assert read and read <= checkers, "at 0.9 nothing the clerk found is read; what the checker searched for is, however far"
    aside = [e for e in events if isinstance(e, VerdictAggregated)][-1].set_aside
    assert aside > 0 and aside + len(read) == 25, "of the 25 exhibits (desk.exhibits) the clerk's are set aside, the checker's read"


def test_a_checkers_query_is_read_in_the_searchs_order_not_after_the_clerks(services: Services) -> None:
    from pipelines.core.events import EvidenceRetrieved, ExhibitStanceRead
    from pipelines.core.personas import HUMAN_CHECKER

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        return Review(extra_queries=("N95 respirators healthcare workers",)) if pending.round == 0 else Review()

    events = drive(start_run(CLAIM, with_settings(step_config("desk"), "desk", exhibits=10), services, interactive=True), decide)
    by = {e.evidence.id: e.evidence.found_by for e in events if isinstance(e, EvidenceRetrieved)}
    order = [by[e.evidence_id] for e in events if isinstance(e, ExhibitStanceRead) and e.round == 1]  # not a debate's rereading
    assert HUMAN_CHECKER in order and order.index(HUMAN_CHECKER) < len(order) - 1 - order[::-1].index("Clerk"), (
        "the checker's finds are interleaved with the clerk's, best first, so reading that stops early still reaches them"
    )

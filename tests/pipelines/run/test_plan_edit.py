"""Editing the plan in step mode: proclaim's premises and mermaid's triplets, before any search, kept in the audit trail."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.core.events import (
    CheckerEditedPlan,
    ClaimDecomposed,
    Event,
    PremisesDecomposed,
    QueryIssued,
    RunResumed,
    StepPaused,
    VerdictReached,
)
from pipelines.record.digest import describe_intervention, digest
from pipelines.record.store import RunStore
from pipelines.run.context import Review
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import resume_run, start_run
from pipelines.run.services import Services
from pipelines.run.step_gate import PendingReview
from pipelines.run.tools.embeddings import Embedder
from tests.fakes import ScriptedFake, fake_config, make_services, with_settings
from tests.pipelines.run.test_step_mode import drive

CLAIM = "Masks reduce transmission of respiratory viruses"


def step_config(protocol: str, **settings: object):  # type: ignore[no-untyped-def]
    config = with_settings(fake_config(protocol=protocol), "pauses", step_mode=True, pause_timeout_min=1.0)
    return with_settings(config, protocol, **settings) if settings else config


def test_proclaim_pauses_on_its_premises_and_searches_the_checker_s_rewrite(services: Services) -> None:
    services.chat_override = FakeChatModel()
    pauses: list[PendingReview] = []

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        if pending.round == 0:
            assert not any(isinstance(e, QueryIssued) for e in events), "the plan pause comes before any search"
            return Review(plan=("Cloth masks cut influenza spread in schools", "  ", "Surgical masks filter droplets"))
        return Review(stop=True)

    events = drive(start_run(CLAIM, step_config("proclaim", max_rounds=1), services, interactive=True), decide, pauses=pauses)
    first = pauses[0]
    assert first.round == 0 and first.plan is not None and first.plan.kind == "premises" and first.plan.items
    paused = next(e for e in events if isinstance(e, StepPaused))
    assert paused.plan_kind == "premises" and paused.plan == first.plan.items
    edit = next(e for e in events if isinstance(e, CheckerEditedPlan))
    assert edit.before == first.plan.items and edit.by == "Ana"
    assert edit.after == ("Cloth masks cut influenza spread in schools", "Surgical masks filter droplets"), "blank lines dropped"
    premises = [e.premises for e in events if isinstance(e, PremisesDecomposed)]
    assert premises[-1] == edit.after, "the court record carries the checker's premises"
    premise_queries = [e.query for e in events if isinstance(e, QueryIssued) and e.agent.startswith("Premise ")]
    assert premise_queries == list(edit.after), "each rewritten premise is searched, and only those"
    assert isinstance(events[-1], VerdictReached)
    said = describe_intervention(edit, lambda text, limit: text[:limit])
    assert "rewrote the premises" in said and "Surgical masks filter droplets" in said


def test_mermaid_honours_step_mode_with_its_triplets_and_after_each_tool_call(services: Services) -> None:
    services.chat_override = fake = ScriptedFake()
    pauses: list[PendingReview] = []

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        if pending.round == 0:
            return Review(plan=("cloth masks | reduce | influenza in schools",))
        return Review(stop=True)

    config = with_settings(step_config("mermaid", use_memory=False, remember=False), "retrieval", web_search=False)
    events = drive(start_run(CLAIM, config, services, interactive=True), decide, pauses=pauses)
    assert pauses[0].plan is not None and pauses[0].plan.kind == "triplets"
    assert all(" | " in line for line in pauses[0].plan.items)
    decomposed = [e for e in events if isinstance(e, ClaimDecomposed)]
    assert decomposed[-1].source == "checker" and str(decomposed[-1].triplets[0]) == "(cloth masks; reduce; influenza in schools)"
    assert any(isinstance(e, CheckerEditedPlan) and e.kind == "triplets" for e in events)
    assert isinstance(events[-1], VerdictReached)
    # the fake researcher calls a tool first: a pause after it, where "stop" makes it answer at once
    assert [p.round for p in pauses] == [0, 1] and pauses[1].plan is None
    assert events[-1].verdict.stop_reason == "the checker asked for the answer after 1 tool call"  # type: ignore[attr-defined]
    (asked,) = fake.prompts_for("ForcedAnswer")
    assert "The checker asks for your answer now" in asked and "used up" not in asked, "the researcher is told why it must answer"


def test_a_bad_triplet_line_keeps_the_model_s_triplets_and_says_why(services: Services) -> None:
    services.chat_override = FakeChatModel()

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        return Review(plan=("not a triplet",)) if pending.round == 0 else Review(stop=True)

    config = with_settings(step_config("mermaid", use_memory=False, remember=False), "retrieval", web_search=False)
    events = drive(start_run(CLAIM, config, services, interactive=True), decide)
    assert [e.source for e in events if isinstance(e, ClaimDecomposed)] == ["model"]
    run = digest(events)
    assert run.verdict is not None
    failed = [e for e in events if type(e).__name__ == "StageFailed" and "the checker's triplets were not used" in e.reason]  # type: ignore[attr-defined]
    assert failed and "is not a triplet" in failed[0].reason  # type: ignore[attr-defined]


def test_an_edited_plan_is_replayed_on_resume(tmp_path: Path, demo_data_dir: Path, embedder: Embedder) -> None:
    services = make_services(demo_data_dir, embedder)
    services.store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    services.chat_override = FakeChatModel()

    def decide(pending: PendingReview, events: list[Event]) -> Review:
        if pending.round == 0:
            return Review(plan=("Cloth masks cut influenza spread in schools",))
        handle.abandon("closed the tab")  # the checker leaves at the next pause
        raise _Left

    class _Left(Exception):
        pass

    handle = start_run(CLAIM, step_config("proclaim", max_rounds=1), services, interactive=True)
    with pytest.raises(_Left):
        drive(handle, decide)
    list(handle.stream())
    run_id = handle.run_id
    assert services.store.get_run(run_id).status == "interrupted"  # type: ignore[union-attr]
    list(resume_run(run_id, services).stream())  # not interactive: the recorded plan edit is replayed, the rest goes on
    record = services.store.events(run_id)
    assert any(isinstance(e, RunResumed) for e in record) and isinstance(record[-1], VerdictReached)
    assert len([e for e in record if isinstance(e, CheckerEditedPlan)]) == 1, "the edit is in the record once"
    assert [e.premises for e in record if isinstance(e, PremisesDecomposed)][-1] == ("Cloth masks cut influenza spread in schools",)

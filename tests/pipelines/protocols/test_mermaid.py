"""`mermaid` on the fake backend: triplets, the capped ReAct loop, memory across claims."""

import re
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from pipelines.core.errors import ToolUnavailableError
from pipelines.core.events import (
    BeliefRead,
    ClaimDecomposed,
    MemoryRecalled,
    MemoryUpdated,
    ModelCallCompleted,
    QueryIssued,
    ReasoningStepTaken,
    StageFailed,
    VerdictReached,
    WebSearchUnavailable,
)
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.tools.memory import EvidenceMemory
from pipelines.stages.decomposition import parse_triplets
from tests.fakes import ScriptedFake, make_services, protocol_config, with_settings
from tests.faults import StoreOutage

CLAIM = "Masks reduce transmission of respiratory viruses"
UNSETTLED = "Vitamin D supplements cure baldness in cats"  # no exhibit of the demo corpus settles it: the researcher searches
RELATED = "Cloth masks reduce transmission of respiratory viruses a little"


def tool_calls(events: list[object]) -> int:
    return sum(isinstance(e, QueryIssued) for e in events)


@pytest.fixture
def fresh(services: Services) -> Services:
    assert services.memory is not None
    services.memory.clear()
    return services


def test_decompose_search_answer_and_keep(fresh: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("mermaid"), fresh))

    decomposed = next(e for e in events if isinstance(e, ClaimDecomposed))
    assert decomposed.source == "model" and decomposed.triplets[0].subject == "Masks" and decomposed.triplets[0].relation == "reduce"
    steps = [e for e in events if isinstance(e, ReasoningStepTaken)]
    assert [(s.action, s.forced) for s in steps] == [("corpus_search", False), ("answer", False)]
    assert steps[0].reason and steps[0].query
    kept = next(e for e in events if isinstance(e, MemoryUpdated))
    assert kept.added == 3 and fresh.memory.count() == 3  # type: ignore[union-attr]
    assert events[-1].verdict.label == "SUPPORTS"  # type: ignore[attr-defined]


def test_memory_saves_tool_calls_on_a_related_claim(fresh: Services) -> None:
    first = list(stream_run(CLAIM, protocol_config("mermaid"), fresh))
    second = list(stream_run(RELATED, protocol_config("mermaid"), fresh))
    fresh.memory.clear()  # type: ignore[union-attr]
    cold = list(stream_run(RELATED, protocol_config("mermaid", use_memory=False), fresh))

    recalled = [e for e in second if isinstance(e, MemoryRecalled)]
    assert recalled and all(r.for_claim == CLAIM and r.match for r in recalled)
    assert tool_calls(first) >= 1 and tool_calls(second) == 0 and tool_calls(cold) >= 1
    verdict = second[-1].verdict  # type: ignore[attr-defined]
    assert set(verdict.cited) <= {r.evidence.id for r in recalled}, "the answer rests on recalled items"
    model_calls = [sum(isinstance(e, ModelCallCompleted) for e in run) for run in (second, cold)]
    assert model_calls[0] < model_calls[1]


def test_the_checkers_triplets_replace_the_models(fresh: Services) -> None:
    config = protocol_config("mermaid", triplets="masks | cut | viral spread; respirators | filter | particles", topic="masks")
    events = list(stream_run(CLAIM, config, fresh))

    decomposed = next(e for e in events if isinstance(e, ClaimDecomposed))
    assert decomposed.source == "checker" and decomposed.topic == "masks"
    assert [t.subject for t in decomposed.triplets] == ["masks", "respirators"]


def test_the_cap_forces_an_answer(fresh: Services) -> None:
    events = list(stream_run("Quantum chromodynamics explains stock prices", protocol_config("mermaid", max_steps=2), fresh))

    steps = [e for e in events if isinstance(e, ReasoningStepTaken)]
    assert [(s.step, s.action, s.forced) for s in steps] == [(1, "corpus_search", False), (2, "answer", True)]
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert "forced answer" in verdict.stop_reason and verdict.label == "NOT ENOUGH INFO"


def test_every_tool_is_tried_once_before_giving_up(fresh: Services) -> None:
    events = list(stream_run("Quantum chromodynamics explains stock prices", protocol_config("mermaid"), fresh))

    actions = [e.action for e in events if isinstance(e, ReasoningStepTaken)]
    assert actions == ["corpus_search", "web_search", "memory_lookup", "answer"]
    assert any(isinstance(e, WebSearchUnavailable) and e.fallback for e in events), "offline, the web query goes to the corpus"


def test_without_a_store_the_run_says_memory_is_unavailable(fresh: Services) -> None:
    fresh.memory = None
    events = list(stream_run(CLAIM, protocol_config("mermaid"), fresh))

    assert any(isinstance(e, StageFailed) and e.stage == "memory" for e in events)
    assert not any(isinstance(e, MemoryUpdated) for e in events)


def test_bad_triplets_get_a_message_that_says_how_to_write_them() -> None:
    with pytest.raises(ValueError, match="subject \\| relation \\| object"):
        parse_triplets("masks reduce transmission")
    assert len(parse_triplets("a | b | c\n(d | e | f)")) == 2


def test_recall_only_keeps_the_memory_lookup_tool_out_of_the_loop(fresh: Services) -> None:
    events = list(stream_run("Quantum chromodynamics explains stock prices", protocol_config("mermaid", memory_tool=False), fresh))

    actions = [e.action for e in events if isinstance(e, ReasoningStepTaken)]
    assert "memory_lookup" not in actions and actions[-1] == "answer"


def test_the_belief_after_a_step_reads_what_that_step_found_first(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    # Grounded, the researcher starts from desk's exhibits: in the order first seen they filled the belief's
    # places and no find of a search step was ever read, so every step's reading was the same.
    def first_step(prompt: str) -> dict | None:  # type: ignore[type-arg]
        if "Step 1:" in prompt:
            return None  # the fake's own steps from here
        return {"thought": "t", "action": "corpus_search", "query": "lightning strikes the same place twice", "reason": "r", "label": None, "answer": "", "cited": []}  # fmt: skip

    fake = ScriptedFake(answers={"ReactStep": first_step})
    config = with_settings(protocol_config("mermaid", use_memory=False), "belief", grounded="on", evidence=3)
    events = list(stream_run(UNSETTLED, config, make_services(demo_data_dir, embedder, chat=fake)))
    step = next(e for e in events if isinstance(e, ReasoningStepTaken) and e.action == "corpus_search")
    told = re.search(rf"^Step {step.step}: corpus_search\(.*\) -> found (.+)$", fake.prompts_for("ReactStep")[-1], re.MULTILINE)
    assert told, "the next step's prompt lists what the search found"
    found = told.group(1).split(", ")
    reading = next(e for e in events if isinstance(e, BeliefRead) and e.round == step.step)
    assert list(reading.evidence_ids) == found[:3]


def test_the_forced_answer_is_the_last_step_prompt_with_the_order_to_answer(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    # Asked in a prompt of its own, the forced answer was read whole by the server (1,300 tokens on one dev claim);
    # as the step prompt with the order at its end, all but the newest step and the order were read by the last step.
    fake = ScriptedFake()
    config = protocol_config("mermaid", max_steps=3, use_memory=False)
    events = list(stream_run("Quantum chromodynamics explains stock prices", config, make_services(demo_data_dir, embedder, chat=fake)))

    assert [e.forced for e in events if isinstance(e, ReasoningStepTaken)][-1]
    last_step, forced = fake.prompts_for("ReactStep")[-1], fake.prompts_for("ForcedAnswer")[-1]
    before_the_steps = last_step[: last_step.index("Steps so far:")]
    assert forced.startswith(before_the_steps) and len(before_the_steps) > 400
    assert "Step 2: " in forced and forced.rstrip().endswith("from the evidence you have.")
    assert "Step 3 of 3. Your steps are used up" in forced


def test_the_memory_away_mid_run_leaves_the_run_going_and_says_what_was_not_recalled_or_kept(fresh: Services) -> None:
    # The memory lives in the desk's database; when it was away a recall raised out of the protocol and the run ended
    # "internal error (please report)". It is an aid: the run goes on without it, and the page says what was missed.
    list(stream_run(CLAIM, protocol_config("mermaid"), fresh))
    kept = fresh.memory.count()  # type: ignore[union-attr]
    fresh.memory = EvidenceMemory(create_engine(fresh.memory.engine.url), fresh.memory._embedder)  # type: ignore[union-attr]
    outage = StoreOutage(fresh.memory.engine)  # the memory's own connection: the run store keeps taking events
    outage.start()
    try:
        events = list(stream_run(RELATED, protocol_config("mermaid"), fresh))
    finally:
        outage.stop()
        outage.remove()

    assert isinstance(events[-1], VerdictReached)
    said = [e.reason for e in events if isinstance(e, StageFailed) and e.stage == "memory"]
    assert any("could not be read" in r and "goes on without it" in r for r in said), said
    assert any("could not be kept" in r and "not kept for later claims" in r for r in said), said
    assert not any(isinstance(e, MemoryUpdated | MemoryRecalled) for e in events)
    assert all("Traceback" not in r and "SELECT" not in r for r in said)
    assert fresh.memory.count() == kept, "what was kept before is still there"


def test_a_use_count_that_cannot_be_written_leaves_what_was_kept_said_as_kept(fresh: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    list(stream_run(CLAIM, protocol_config("mermaid"), fresh))

    def away(keys: object) -> None:
        raise ToolUnavailableError("the evidence memory could not be updated: the desk's database is unreachable or cannot be written")

    monkeypatch.setattr(fresh.memory, "mark_used", away)
    events = list(stream_run(RELATED, protocol_config("mermaid"), fresh))

    assert events[-1].verdict.cited, "(the answer rests on recalled items, so their use is counted)"  # type: ignore[attr-defined]
    said = [e.reason for e in events if isinstance(e, StageFailed) and e.stage == "memory"]
    assert said == [
        "the evidence memory could not be updated: the desk's database is unreachable or cannot be written; the recalled items "
        "the answer used are not counted as used"
    ]
    assert any(isinstance(e, MemoryUpdated) for e in events), "what was kept is said to be kept"

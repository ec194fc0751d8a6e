"""The judge's belief after a round: both option orders averaged, an event per reading, every protocol reading it on the fake."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pipelines.calibration.files import Calibration, belief_prompt_sha
from pipelines.core.domain import Evidence, Turn
from pipelines.core.events import BeliefRead, StageFailed, dump_event, parse_event
from pipelines.protocols.base import protocol_names
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.stages import belief as belief_stage
from pipelines.stages.belief import ORDERS, read_belief, reliability_words, shown_evidence
from tests.fakes import ScriptedFake, fake_config, make_context, make_services, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"


def _turn(agent: str, round: int, label: str, cited: tuple[str, ...] = ()) -> Turn:
    return Turn(id=f"{agent}-{round}", agent=agent, round=round, text=f"I argue.\nLabel: {label}", label=label, cited=cited)  # type: ignore[arg-type]


def test_the_two_orders_are_averaged_and_the_letter_pull_cancels_between_the_sides(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    ctx, events = make_context(make_services(demo_data_dir, embedder), fake_config(), CLAIM)
    belief = asyncio.run(read_belief(ctx, round=1, turns=[_turn("A", 1, "SUPPORTS")], what="after round 1"))  # type: ignore[arg-type]
    assert belief is not None
    read = [e for e in events if isinstance(e, BeliefRead)]
    assert len(read) == 1 and read[0].round == 1 and len(read[0].per_order) == len(ORDERS) == 2
    first, second = read[0].per_order
    # The fake adds mass to option A whatever it means: SUPPORTS holds A in the first order, REFUTES in the second.
    assert first["SUPPORTS"] - second["SUPPORTS"] == pytest.approx(second["REFUTES"] - first["REFUTES"], abs=0.02)
    assert read[0].probabilities == pytest.approx({k: (first[k] + second[k]) / 2 for k in first}, abs=1e-3)
    assert sum(read[0].probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    assert read[0].over.startswith("after round 1: 1 turn")
    assert parse_event(dump_event(read[0])) == read[0], "stored and replayed like every other event"


def test_a_turns_label_moves_the_fakes_belief_so_tests_see_which_round_moved_it(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    ctx, _events = make_context(make_services(demo_data_dir, embedder), fake_config(), CLAIM)
    before = asyncio.run(read_belief(ctx, round=0, turns=[], what="before"))  # type: ignore[arg-type]
    after = asyncio.run(read_belief(ctx, round=1, turns=[_turn("A", 1, "REFUTES"), _turn("B", 1, "REFUTES")], what="after"))  # type: ignore[arg-type]
    assert before is not None and after is not None
    assert after.probabilities["REFUTES"] > before.probabilities["REFUTES"] + 0.1


def test_switched_off_it_reads_nothing(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    chat = ScriptedFake()
    config = with_settings(fake_config(), "belief", per_round=False)
    ctx, events = make_context(make_services(demo_data_dir, embedder, chat=chat), config, CLAIM)
    assert asyncio.run(read_belief(ctx, round=1, turns=[], what="after round 1")) is None  # type: ignore[arg-type]
    assert not chat.prompts and not events


def test_a_model_that_names_no_option_is_a_stage_failure_and_the_run_goes_on(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    mute = FakeChatModel(script=["I would rather not say."] * 12)  # no token probabilities, and no option in any sampled answer
    services = make_services(demo_data_dir, embedder, chat=mute)
    ctx, events = make_context(services, fake_config(), CLAIM)
    assert asyncio.run(read_belief(ctx, round=2, turns=[], what="after round 2")) is None  # type: ignore[arg-type]
    failed = [e for e in events if isinstance(e, StageFailed)]
    assert failed and failed[0].stage == "belief" and "after round 2" in failed[0].reason
    assert not any(isinstance(e, BeliefRead) for e in events)


def test_the_evidence_the_debaters_cited_comes_first() -> None:
    items = [Evidence(id=f"E{i}", source="corpus", title="", text=f"text {i}") for i in range(1, 6)]
    turns = [_turn("A", 1, "SUPPORTS", cited=("E4",)), _turn("B", 1, "REFUTES", cited=("E2", "E9"))]
    assert [e.id for e in shown_evidence(items, turns, 3)] == ["E2", "E4", "E1"]


EXPECTED_ROUNDS = {  # on the fake's first golden claim: which readings each protocol takes
    "desk": [0, 1],  # the exhibits alone, then after its debate (the fake's exhibits conflict on this claim)
    "single": [1],
    "mad": [1, 2, 3],  # after each of its 3 rounds (the fake's debaters disagree: no early stop)
    "toolmad": [1],
    "radar": [1, 2],
    "madke": [1],
    "mermaid": [1, 2],  # after its one search step, then at its answer
    "proclaim": [1, 2, 3],  # after each of its 2 rounds, then after the role switch
}


@pytest.mark.parametrize("protocol", sorted(EXPECTED_ROUNDS))
def test_every_protocol_reads_its_belief_on_the_fake(protocol: str, demo_data_dir: Path, tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    assert set(EXPECTED_ROUNDS) == set(protocol_names()), "every registered protocol is listed here"
    # mermaid's evidence memory lives in the data folder: a fresh one, so earlier tests' claims are not recalled
    services = make_services(tmp_path if protocol == "mermaid" else demo_data_dir, embedder)
    services.ensure_corpus("demo")
    config = with_settings(fake_config(protocol=protocol), "retrieval", web_search=False)
    events = list(stream_run(CLAIM, config, services))
    readings = [e for e in events if isinstance(e, BeliefRead)]
    assert [r.round for r in readings] == EXPECTED_ROUNDS[protocol]
    assert all(abs(sum(r.probabilities.values()) - 1.0) < 1e-3 for r in readings)
    off = with_settings(config, "belief", per_round=False)
    assert not [e for e in stream_run(CLAIM, off, services) if isinstance(e, BeliefRead)]


def test_a_belief_that_told_the_sides_apart_no_better_than_chance_says_so_and_which_way_to_read_it() -> None:
    weak = reliability_words(0.45, 16, "of Check-COVID train")
    assert "no better than chance (AUC 0.45 over 16 claims of Check-COVID train; 0.5 is chance)" in weak
    assert "read which way a round moves it, not its level" in weak
    assert "little better than chance (AUC 0.60" in reliability_words(0.6, 40)
    strong = reliability_words(0.88, 116)
    assert "told supported from refuted claims apart (AUC 0.88 over 116 claims)" in strong and "not its level" not in strong


def test_the_measure_is_said_only_for_the_belief_prompt_it_was_taken_with(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder
) -> None:  # type: ignore[no-untyped-def]
    ctx, _events = make_context(make_services(demo_data_dir, embedder), fake_config(), CLAIM)
    measured = {"auc": 0.45, "claims": 16, "prompt_sha": belief_prompt_sha()}
    fit = Calibration(name="fit", model="fake", bias=0.0, weights={}, decide_at=0.5, settings={"belief": measured})
    monkeypatch.setattr(belief_stage, "load_calibration", lambda model, reader="separate", data_dir=None: fit)
    assert "AUC 0.45 over 16 claims" in belief_stage.reliability(ctx)  # type: ignore[arg-type]
    fit.settings["belief"] = {**measured, "prompt_sha": "another"}
    assert belief_stage.reliability(ctx) == ""  # type: ignore[arg-type]
    monkeypatch.setattr(belief_stage, "load_calibration", lambda model, reader="separate", data_dir=None: None)
    assert belief_stage.reliability(ctx) == ""  # type: ignore[arg-type]

"""Debates grounded in desk's exhibits, and the calibrated ruling beside a debate's own (belief.grounded, belief.verdict)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.calibration.files import Calibration
from pipelines.core.domain import Ruling, Verdict
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import (
    AdmissibilityAssessed,
    BeliefRead,
    DebateStopped,
    EvidenceRetrieved,
    ExhibitStanceRead,
    StageCompleted,
    StageFailed,
    VerdictAggregated,
    VerdictReached,
)
from pipelines.protocols.base import find_protocol
from pipelines.record.digest import digest
from pipelines.record.verdict_card import CALIBRATED_HOW, rulings_line, verdict_card
from pipelines.run import grounding
from pipelines.run.grounding import CALIBRATED, grounded, published_says
from pipelines.run.runner import stream_run
from pipelines.stages import admissibility, exhibit_reading, weighing
from pipelines.stages import belief as belief_stage
from tests.fakes import ScriptedFake, fake_config, make_services, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"
FITTED = Calibration(name="test fit", model="fake", bias=0.0, weights={"net": 1.0, "gap": 1.0, "top": 2.0}, decide_at=0.55)


def _config(protocol: str, **belief: object):  # type: ignore[no-untyped-def]
    config = with_settings(fake_config(protocol=protocol), "retrieval", web_search=False)
    return with_settings(config, "belief", **belief)


@pytest.fixture
def calibrated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake model with a desk calibration, as the embedded model has one."""
    monkeypatch.setattr(exhibit_reading, "load_calibration", lambda model, reader="separate", data_dir=None: FITTED)
    monkeypatch.setattr(grounding, "load_calibration", lambda model, reader="separate", data_dir=None: FITTED)


def test_auto_grounds_only_the_shared_evidence_debates_on_the_embedded_model() -> None:
    assert not grounded(_config("radar"))  # the fake is not the embedded model
    assert grounded(_config("radar").with_backend("embedded"))
    assert not grounded(_config("desk").with_backend("embedded")), "desk reads its exhibits anyway"
    assert not grounded(_config("mad").with_backend("embedded")), "mad argues from what the model knows"
    assert grounded(_config("toolmad", grounded="on")) and not grounded(_config("toolmad", grounded="off").with_backend("embedded"))


@pytest.mark.parametrize("protocol", ["radar", "madke", "toolmad"])
def test_a_grounded_debate_argues_from_desks_exhibits(protocol: str, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    events = list(stream_run(CLAIM, _config(protocol, grounded="on"), make_services(demo_data_dir, embedder)))
    read = [e.evidence_id for e in events if isinstance(e, ExhibitStanceRead)]
    assert read, "desk's exhibits are read for their stance before the debate"
    grounding_done = next(i for i, e in enumerate(events) if isinstance(e, StageCompleted) and e.stage == "grounding")
    found = [e for e in events[grounding_done:] if isinstance(e, EvidenceRetrieved)]
    later = [e.evidence.id for e in found]
    if protocol == "toolmad":  # the Search debater still searches; the RAG debater's round 1 is desk's exhibits
        assert not [e for e in found if e.agent == "RAG" and e.round == 1]
    else:
        assert not later, "the shared evidence is desk's exhibits: nothing else is searched for it"
    cited = {c for e in events if isinstance(e, VerdictReached) for c in e.verdict.cited}
    assert cited <= set(read) | set(later)


def test_off_the_debate_searches_as_published(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    events = list(stream_run(CLAIM, _config("radar", grounded="off"), make_services(demo_data_dir, embedder)))
    assert not any(isinstance(e, ExhibitStanceRead) for e in events)


def test_the_calibrated_ruling_is_the_verdict_and_the_judges_rides_beside_it(calibrated: None, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    events = list(stream_run(CLAIM, _config("radar"), make_services(demo_data_dir, embedder)))
    verdict = next(e.verdict for e in events if isinstance(e, VerdictReached))
    assert verdict.decided_by == CALIBRATED and verdict.confidence is not None
    assert verdict.beside is not None and verdict.beside.decided_by == "judge" and verdict.beside.label in ("TRUE", "HALF-TRUE", "FALSE")
    aggregated = [e for e in events if isinstance(e, VerdictAggregated)]
    assert aggregated and aggregated[-1].label == verdict.label and aggregated[-1].calibration == "test fit"
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None
    reading, radar = find_protocol("desk"), find_protocol("radar")
    assert reading is not None and radar is not None
    assert f"from {reading.card.confidence_source}" in card.model.confidence_note, "the number is the reading's, said so"
    assert radar.card.confidence_source not in card.model.confidence_note
    assert card.model.reason.startswith(f"{radar.card.how_decided} {CALIBRATED_HOW}")


def test_published_keeps_the_protocols_ruling_and_the_calibrated_one_beside(calibrated: None, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    events = list(stream_run(CLAIM, _config("radar", verdict="published"), make_services(demo_data_dir, embedder)))
    verdict = next(e.verdict for e in events if isinstance(e, VerdictReached))
    assert verdict.decided_by == "judge"
    assert verdict.beside is not None and verdict.beside.decided_by == CALIBRATED
    card = verdict_card(digest(events))
    radar = find_protocol("radar")
    assert card is not None and card.model is not None and radar is not None
    assert f"from {radar.card.confidence_source}" in card.model.confidence_note and CALIBRATED_HOW not in card.model.reason


def test_no_calibration_or_no_evidence_leaves_the_verdict_alone(calibrated: None, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    services = make_services(demo_data_dir, embedder)
    mad = next(e.verdict for e in stream_run(CLAIM, _config("mad"), services) if isinstance(e, VerdictReached))
    assert mad.decided_by == "judge" and mad.beside is None, "mad gathers no evidence to weigh"
    off = next(e.verdict for e in stream_run(CLAIM, _config("radar", calibrated_ruling=False), services) if isinstance(e, VerdictReached))
    assert off.decided_by == "judge" and off.beside is None


def test_the_card_says_both_rulings_when_they_differ() -> None:
    panel = Verdict(label="NOT SUPPORTED", confidence=0.64, decided_by="panel of 3 judges (2 NOT SUPPORTED, 1 SUPPORTED)")
    said = published_says(panel)
    assert said == "the panel voted NOT SUPPORTED, 64% (2 NOT SUPPORTED, 1 SUPPORTED)"
    own = Ruling(label=panel.label, confidence=panel.confidence, decided_by=panel.decided_by, says=said)
    calibrated = Verdict(
        label="SUPPORTS",
        confidence=0.81,
        decided_by=CALIBRATED,
        stop_reason=f"{said}; the evidence read after the debate says SUPPORTS, 81%. The calibrated ruling is the verdict (setting: belief.verdict)",
        beside=own,
    )
    assert rulings_line(calibrated) == f"{said}; the evidence read after the debate says SUPPORTS, 81%"
    agreeing = calibrated.model_copy(update={"beside": own.model_copy(update={"label": "SUPPORTED"})})
    assert rulings_line(agreeing) == "", "SUPPORTED and SUPPORTS are one ruling"


def test_a_grounded_court_opens_its_case_on_desks_exhibits(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    events = list(stream_run(CLAIM, _config("proclaim", grounded="on"), make_services(demo_data_dir, embedder)))
    read = {e.evidence_id for e in events if isinstance(e, ExhibitStanceRead)}
    assert read, "desk's exhibits are read for their stance before the case opens"
    grounding_done = next(i for i, e in enumerate(events) if isinstance(e, StageCompleted) and e.stage == "grounding")
    opening = [e for e in events[grounding_done:] if isinstance(e, EvidenceRetrieved) and e.round == 0]
    assert not opening, "the premise and side searches of the opening are replaced by desk's exhibits"
    rated = {e.evidence_id for e in events[grounding_done:] if isinstance(e, AdmissibilityAssessed) and e.round == 0}
    assert rated and rated <= read, "the presiding judge rates desk's exhibits for admissibility"


def test_a_grounded_researcher_starts_from_desks_exhibits(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    config = _config("mermaid", grounded="on")
    events = list(stream_run(CLAIM, with_settings(config, "mermaid", max_steps=1), make_services(demo_data_dir, embedder)))
    read = [e.evidence_id for e in events if isinstance(e, ExhibitStanceRead)]
    assert read
    last = [e for e in events if isinstance(e, BeliefRead)][-1]
    assert last.evidence_ids and set(last.evidence_ids) <= set(read), "what it answered over is desk's exhibits"


def test_with_a_calibration_desks_belief_is_its_weighing_of_the_exhibits_and_asks_the_judge_nothing(
    calibrated: None, demo_data_dir: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # Asked over six exhibits at once the embedded model's belief told the sides apart no better than chance (AUC 0.45 on train),
    # where desk's calibrated weighing of the same exhibits reached 0.92: with a calibration, that weighing is desk's belief.
    questions = asked_the_judge(monkeypatch)
    events = list(stream_run(CLAIM, _config("desk"), make_services(demo_data_dir, embedder)))
    readings = [e for e in events if isinstance(e, BeliefRead)]
    weighed = [e for e in events if isinstance(e, VerdictAggregated)]
    assert readings and all(r.method == "exhibits" and not r.per_order for r in readings)
    assert readings[0].round == 0 and readings[0].probabilities == pytest.approx(weighed[0].probabilities)
    assert readings[-1].probabilities == pytest.approx(weighed[-1].probabilities), "after the debate: the weighing it ruled on"
    assert not questions, "no belief question was asked"
    asked = [
        e
        for e in stream_run(CLAIM, _config("desk", desk_weighed=False), make_services(demo_data_dir, embedder))
        if isinstance(e, BeliefRead)
    ]
    assert asked and len(questions) == 2 * len(asked), "(and asking is seen: 2 orders a reading)"
    verdict = next(e.verdict for e in events if isinstance(e, VerdictReached))
    assert verdict.confidence == weighed[-1].confidence


def asked_the_judge(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every belief question put to the judge (each option order), collected."""
    questions: list[object] = []
    real = belief_stage.estimate_label_probabilities

    async def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        questions.append(args[1])
        return await real(*args, **kwargs)

    monkeypatch.setattr(belief_stage, "estimate_label_probabilities", counting)
    return questions


@pytest.mark.parametrize("protocol", ["toolmad", "madke", "radar", "mermaid"])
def test_a_weighed_debate_belief_reads_again_what_each_round_cites_with_its_arguments(
    protocol: str, calibrated: None, demo_data_dir: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    asked: list[tuple[str, tuple[tuple[str, str], ...]]] = []  # (item, arguments) of each reading the belief made
    real = weighing.read_desk_stance

    async def spy(llm, cfg, claim, exhibit, **kwargs):  # type: ignore[no-untyped-def]
        asked.append((exhibit.id, tuple(kwargs.get("arguments", ()))))
        return await real(llm, cfg, claim, exhibit, **kwargs)

    monkeypatch.setattr(weighing, "read_desk_stance", spy)
    questions = asked_the_judge(monkeypatch)
    chat = ScriptedFake()
    config = _config(protocol, grounded="on", reread=2)  # weighed: the default, with a calibration
    events = list(stream_run(CLAIM, config, make_services(demo_data_dir, embedder, chat=chat)))
    readings = [e for e in events if isinstance(e, BeliefRead)]
    assert readings and all(r.method == "exhibits" and not r.per_order for r in readings)
    assert all(abs(sum(r.probabilities.values()) - 1.0) < 1e-3 for r in readings)
    assert all(len(r.evidence_ids) <= 2 for r in readings[1:]), "at most belief.reread items read a round"
    turns = [e.turn for e in events if type(e).__name__ == "TurnCompleted" and e.turn.round > 0]  # type: ignore[attr-defined]
    cited = {c for t in turns for c in t.cited}
    argued = [r for r in readings if "read again with the arguments" in r.over]
    assert [i for r in readings[1:] for i in r.evidence_ids] == [i for i, _ in asked], "each reading names what it read"
    if cited:
        assert argued, "a round that cites evidence has it read again"
        with_arguments = [(i, a) for i, a in asked if a]
        assert with_arguments and all(i in cited and all(who in {t.agent for t in turns} for who, _ in a) for i, a in with_arguments)
    assert not questions, "the judge is not asked over the evidence"
    asking = _config(protocol, grounded="on", debate_reader="letters")
    letters = [e for e in stream_run(CLAIM, asking, make_services(demo_data_dir, embedder)) if isinstance(e, BeliefRead)]
    assert [r.round for r in readings] == [0, *(r.round for r in letters)], "the same readings, read another way, and where it started"
    exhibits = {e.evidence_id for e in events if isinstance(e, ExhibitStanceRead)}
    assert readings[0].over.startswith("before the debate") and set(readings[0].evidence_ids) == exhibits, "desk's exhibits weighed"
    assert all(r.method == "logprobs" for r in letters)
    assert len(questions) == 2 * len(letters), "(and asking is seen: 2 orders a reading)"


def test_without_a_calibration_a_debate_asks_the_judge_as_before(demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    config = _config("toolmad", grounded="on")
    readings = [e for e in stream_run(CLAIM, config, make_services(demo_data_dir, embedder)) if isinstance(e, BeliefRead)]
    assert readings and all(r.method == "logprobs" for r in readings), "nothing to weigh with: the letters"


def test_an_item_is_read_again_with_every_sides_argument_of_the_round_or_only_the_citing_ones() -> None:
    from pipelines.core.domain import Turn

    rag = Turn(id="RAG-r2", agent="RAG", round=2, text="E1 shows it [E1].\nLabel: SUPPORTS", cited=("E1",))
    search = Turn(id="Search-r2", agent="Search", round=2, text="Nothing settles it.\nLabel: NOT ENOUGH INFO")
    every = weighing._arguments_about("E1", [rag, search], "every side")
    assert [who for who, _ in every] == ["RAG", "Search"], "the citing side first, the other side's answer beside it"
    assert [who for who, _ in weighing._arguments_about("E1", [rag, search], "citing")] == ["RAG"]
    both_cite = Turn(id="Search-r2", agent="Search", round=2, text="E1 says otherwise [E1].", cited=("E1",))
    assert [who for who, _ in weighing._arguments_about("E1", [rag, both_cite], "every side")] == ["RAG", "Search"], "no side twice"


def test_a_grounded_weighed_court_takes_relevance_from_desks_reading_and_reads_each_exhibit_once(
    calibrated: None, demo_data_dir: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # The judge's admissibility rating ranked the deciding exhibit at chance on the embedded model (AUC 0.53) while desk's
    # reading of the same exhibits, already made before the court opens, reached 0.80: the court rules from that reading.
    reads: list[tuple[str, str, bool]] = []  # (who read, exhibit, with arguments)

    def spying(module, who):  # type: ignore[no-untyped-def]
        real = module.read_desk_stance

        async def spy(llm, cfg, claim, exhibit, **kwargs):  # type: ignore[no-untyped-def]
            reads.append((who, exhibit.id, bool(kwargs.get("arguments"))))
            return await real(llm, cfg, claim, exhibit, **kwargs)

        monkeypatch.setattr(module, "read_desk_stance", spy)

    spying(admissibility, "court")
    spying(weighing, "belief")
    chat = ScriptedFake()
    config = _config("proclaim", grounded="on", debate_when="always", reread=1)  # the belief reads one item again a round
    config = with_settings(config, "proclaim", max_rounds=3, plateau_delta=0.0, critic_can_resolve=False)
    events = list(stream_run(CLAIM, config, make_services(demo_data_dir, embedder, chat=chat)))
    assert isinstance(events[-1], VerdictReached)
    assert not chat.prompts_for("AdmissibilityRating"), "the judge is asked to rate nothing"
    before_the_court = [text for _, text in chat.prompts if "Exhibits before the court" in text]
    assert before_the_court and all("c not rated" in t and not re.search(r"; c=\d", t) for t in before_the_court), (
        "the court line does not show a credibility of 1.00 nobody rated"
    )
    stances = {e.evidence_id: e.probabilities for e in events if isinstance(e, ExhibitStanceRead)}
    rulings = [e for e in events if isinstance(e, AdmissibilityAssessed)]
    opening = [r for r in rulings if r.round == 0]
    assert opening and {r.evidence_id for r in opening} <= set(stances)
    for r in opening:
        p_unrelated = stances[r.evidence_id]["UNRELATED"]
        assert r.admissibility.relevance == pytest.approx(max(0.0, 1 - 2 * p_unrelated), abs=1e-6)
        assert r.admissibility.credibility == 1.0 and "desk's reading" in r.admissibility.reason
    joined_later = {r.evidence_id for r in rulings if r.round > 0}
    assert joined_later, "(exhibits join in later rounds too)"
    assert {i for w, i, _ in reads if w == "court"} == joined_later, "the court reads only what joined after desk's reading"
    plain = [i for w, i, argued in reads if w == "belief" and not argued]
    assert not set(plain) & joined_later and len(plain) == len(set(plain)), "nothing is read twice without arguments"
    stopped_at = next(e.round for e in events if isinstance(e, DebateStopped))
    for number in range(1, stopped_at + 1):  # the belief after each round weighs desk's exhibits and every exhibit admitted since
        kept = {r.evidence_id for r in rulings if 0 < r.round <= number and r.admissibility.status != "discarded"}
        (belief,) = [b for b in events if isinstance(b, BeliefRead) and b.round == number]
        assert f"; {len(stances) + len(kept)} items weighed" in belief.over, belief.over
    judge = ScriptedFake()
    judged = [
        e
        for e in stream_run(
            CLAIM, with_settings(config, "proclaim", relevance_from="judge"), make_services(demo_data_dir, embedder, chat=judge)
        )
        if isinstance(e, AdmissibilityAssessed)
    ]
    assert judged and all("desk's reading" not in e.admissibility.reason for e in judged), "the paper's rating, when asked for"
    rated = [text for _, text in judge.prompts if "Exhibits before the court" in text]
    assert rated and all("c not rated" not in t for t in rated) and any(re.search(r"; c=\d", t) for t in rated)


def test_an_exhibit_the_court_cannot_read_is_left_out_and_the_run_goes_on(
    calibrated: None, demo_data_dir: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    async def malformed(llm, cfg, claim, exhibit, **kwargs):  # type: ignore[no-untyped-def]
        raise ModelOutputError("no option named")

    monkeypatch.setattr(admissibility, "read_desk_stance", malformed)  # only what joins after desk's reading is read here
    config = _config("proclaim", grounded="on", debate_when="always", reread=1)
    config = with_settings(config, "proclaim", max_rounds=3, plateau_delta=0.0, critic_can_resolve=False)
    events = list(stream_run(CLAIM, config, make_services(demo_data_dir, embedder, chat=ScriptedFake())))
    assert isinstance(events[-1], VerdictReached)
    failed = [e for e in events if isinstance(e, StageFailed) and e.stage.startswith("admissibility of")]
    assert failed and all("the exhibit is left out" in e.reason for e in failed)
    later = {e.evidence_id for e in events if isinstance(e, AdmissibilityAssessed) and e.round > 0}
    assert not later & {e.stage.removeprefix("admissibility of ") for e in failed}, "unassessed, so out of the arguments"

"""The desk protocol: stances read from probabilities with option orders averaged, aggregation, debate only on conflict."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from typing import Any

import pytest

from pipelines.calibration.files import Calibration, calibration_key, load_calibration
from pipelines.core.config import RunConfig
from pipelines.core.domain import Evidence
from pipelines.core.events import (
    ArgumentDelta,
    EvidenceRetrieved,
    ExhibitStanceRead,
    RoundStarted,
    StageCompleted,
    TurnCompleted,
    VerdictAggregated,
    VerdictReached,
)
from pipelines.record.digest import digest
from pipelines.record.verdict_card import verdict_card
from pipelines.run.llm.client import Reply, TokenLogprob
from pipelines.run.runner import Services, stream_run
from pipelines.run.tools.web import WebResult
from pipelines.stages.stance import STANCES, Stance, option_orders, read_stance
from pipelines.stages.stance_aggregation import aggregate, stance_features
from tests.fakes import CannedWeb, fake_config, protocol_config, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"
EXHIBIT = Evidence(id="E1", source="corpus", title="Masks", text="Trials found masks reduce transmission.")
_OPTION = re.compile(r"^([ABC])\. The passage (supports|contradicts|does not address) the claim\.$", re.MULTILINE)
_WORD = {"supports": "SUPPORTS", "contradicts": "REFUTES", "does not address": "UNRELATED"}


class PositionBiasedModel:
    """A stand-in LLM whose letter probabilities are a true stance times a pull towards position A (as Qwen 1.5B has)."""

    model_name = "biased"

    def __init__(self, truth: dict[str, float], pull: float = 3.0) -> None:
        self.truth = truth
        self.pull = pull
        self.prompts: list[str] = []

    def weights(self, text: str) -> dict[str, float]:
        return {letter: self.truth[_WORD[word]] * (self.pull if letter == "A" else 1.0) for letter, word in _OPTION.findall(text)}

    async def reply(self, messages: Sequence[Any], **params: Any) -> Reply:
        text = "\n".join(str(m.content) for m in messages)
        self.prompts.append(text)
        weights = self.weights(text)
        total = sum(weights.values())
        top = tuple((letter, math.log(w / total)) for letter, w in weights.items())
        best = max(top, key=lambda t: t[1])
        return Reply(text=best[0], tokens=(TokenLogprob(best[0], best[1], top),))


def read(model: PositionBiasedModel, orders: int) -> Stance:
    return asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=orders))  # type: ignore[arg-type]


def test_averaging_option_orders_cancels_the_pull_of_a_position() -> None:
    truth = {"SUPPORTS": 0.3, "REFUTES": 0.45, "UNRELATED": 0.25}
    one = read(PositionBiasedModel(truth), orders=1)
    assert one.leaning == "SUPPORTS", "asked once, the option in position A wins although the truth leans REFUTES"
    three = read(PositionBiasedModel(truth), orders=3)
    assert three.leaning == "REFUTES"
    assert not three.orders_agree, "the orders disagreed, and the stance says so"
    assert sum(three.probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    # Each answer stood in each position once, so the pull lifted every answer alike: the truth's order is kept.
    assert sorted(STANCES, key=three.p) == sorted(STANCES, key=truth.__getitem__)


def test_the_orders_of_one_exhibit_differ_only_in_their_last_lines() -> None:
    model = PositionBiasedModel({"SUPPORTS": 0.5, "REFUTES": 0.3, "UNRELATED": 0.2})
    read(model, orders=3)
    assert len(model.prompts) == 3
    prefix = model.prompts[0].split("A. The passage")[0]
    assert all(p.startswith(prefix) for p in model.prompts), "instructions, claim and exhibit come first: the server reuses them"
    assert len(set(model.prompts)) == 3
    assert {tuple(w for _, w in _OPTION.findall(p)) for p in model.prompts} == {tuple(o) for o in []} | {
        tuple({"SUPPORTS": "supports", "REFUTES": "contradicts", "UNRELATED": "does not address"}[s] for s in order)
        for order in option_orders(3)
    }


def test_every_answer_takes_every_position_once_in_three_orders() -> None:
    orders = option_orders(3)
    for position in range(3):
        assert {order[position] for order in orders} == set(STANCES)
    with pytest.raises(ValueError, match="option orders"):
        option_orders(4)


def test_a_letter_option_is_not_read_from_a_word_that_starts_with_it() -> None:
    from pipelines.stages.label_probability import distribution_from_logprobs, match_option

    token = TokenLogprob("Answer", math.log(0.6), (("Answer", math.log(0.6)), ("B", math.log(0.3)), ("A", math.log(0.1))))
    probabilities, covered = distribution_from_logprobs([token], ("A", "B", "C"))  # type: ignore[misc]
    assert probabilities == pytest.approx({"A": 0.25, "B": 0.75, "C": 0.0})
    assert covered == pytest.approx(0.4)
    assert match_option("Answer: B", ("A", "B", "C")) is None or match_option("Answer: B", ("A", "B", "C")) == "B"
    assert match_option("A. It supports", ("A", "B", "C")) == "A"


def stance(eid: str, s: float, r: float) -> Stance:
    p = {"SUPPORTS": s, "REFUTES": r, "UNRELATED": round(1 - s - r, 6)}
    return Stance(exhibit_id=eid, probabilities=p, per_order=(p,), method="logprobs")  # type: ignore[arg-type]


def test_agreeing_exhibits_support_the_claim_and_name_what_it_rests_on() -> None:
    result = aggregate([stance("E1", 0.8, 0.1), stance("E2", 0.1, 0.05), stance("E3", 0.7, 0.2)], None)
    assert result.label == "SUPPORTS" and not result.conflict
    assert result.rests_on[:2] == ("E1", "E3")
    assert "2 of 3 exhibits point towards supported (E1, E3)" in result.reason
    assert result.points_to == {"E1": "supported", "E2": "unrelated", "E3": "supported"}
    assert result.calibration == "uncalibrated" and result.calibrated == result.raw
    assert sum(result.probabilities.values()) == pytest.approx(1.0, abs=1e-3)


def test_an_uncalibrated_verdict_is_not_watered_down_by_exhibits_on_other_subjects() -> None:
    bearing = [stance("E1", 0.7, 0.2), stance("E2", 0.6, 0.3)]
    others = [stance(f"E{i}", 0.2, 0.2) for i in range(3, 29)]  # 26 passages more likely unrelated than not, yet weighed 0.4 each
    alone, deep = aggregate(bearing, None), aggregate(bearing + others, None)
    assert deep.label == alone.label == "SUPPORTS"
    assert deep.raw == pytest.approx(alone.raw)
    assert stance_features(bearing + others)["net"] < 0.1 < stance_features(bearing + others)["net_addressed"], (
        "the calibrated features keep net as fitted"
    )
    assert stance_features(others)["net_addressed"] == stance_features(others)["net"], "when none addresses the claim: net over all"


def test_strong_exhibits_on_both_sides_are_a_conflict() -> None:
    result = aggregate([stance("E1", 0.8, 0.1), stance("E2", 0.1, 0.75)], None)
    assert result.conflict and set(result.contested) == {"E1", "E2"}


def test_nothing_that_addresses_the_claim_is_not_enough_info() -> None:
    result = aggregate([stance("E1", 0.1, 0.05), stance("E2", 0.05, 0.1)], None)
    assert result.label == "NOT ENOUGH INFO"
    assert "None of the 2 exhibits addresses the claim" in result.reason
    assert aggregate([], None).label == "NOT ENOUGH INFO"


def test_the_calibration_maps_features_and_sets_the_least_confidence() -> None:
    calibration = Calibration(name="test@1", model="m", bias=-1.0, weights={"net": 4.0}, decide_at=0.7)
    stances = [stance("E1", 0.6, 0.3)]
    features = stance_features(stances)
    result = aggregate(stances, calibration)
    assert result.calibrated == pytest.approx(1 / (1 + math.exp(-(-1.0 + 4.0 * features["net"]))), abs=1e-4)
    assert result.label == "NOT ENOUGH INFO" and "Neither side is strong enough" in result.reason
    assert aggregate(stances, calibration, decide_at=0.5).label == "SUPPORTS", "the run's own threshold wins over the file's"


def test_exhibits_point_against_the_models_usual_lean() -> None:
    # A model that reads most passages as contradicting: the calibration's decision point sits at net = -0.25.
    leaning = Calibration(name="lean@1", model="m", bias=5.0, weights={"net": 20.0}, decide_at=0.5)
    stances = [stance("E1", 0.3, 0.45), stance("E2", 0.2, 0.6), stance("E3", 0.3, 0.4)]
    result = aggregate(stances, leaning)
    assert result.points_to == {"E1": "supported", "E2": "refuted", "E3": "supported"}, "E1 and E3 are above the model's usual lean"
    assert result.label == "SUPPORTS" and result.rests_on == ("E3", "E1")
    assert result.reason.startswith(
        "Read against this model's usual lean, 2 of 3 exhibits point towards supported (E1, E3); 1 towards refuted (E2)"
    )


def test_the_shipped_calibration_is_found_by_model_name() -> None:
    assert calibration_key("/models/Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf") == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert load_calibration("no-such-model") is None


def test_each_stance_question_has_its_own_shipped_calibration() -> None:
    from pipelines.calibration.files import calibration_mismatch

    model = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    separate, contrast = load_calibration(model), load_calibration(model, "contrast")
    assert separate is not None and contrast is not None and separate.name != contrast.name
    assert calibration_key(model, "contrast").endswith("--contrast")
    defaults = RunConfig().desk
    assert defaults.reader == "contrast", "the default reads many exhibits with the contrast question"
    run = {"exhibits": defaults.exhibits, "unit": defaults.unit, "negation": True, "shots": 0}
    assert calibration_mismatch(contrast, reader="contrast", orders=defaults.orders, **run) == "", "the default is calibrated as shipped"
    assert "orders 2 (this run: 3)" in calibration_mismatch(contrast, reader="contrast", orders=3, **run)
    assert "exhibits 25 (this run: 5)" in calibration_mismatch(contrast, reader="contrast", orders=2, **{**run, "exhibits": 5})
    five = {**run, "exhibits": 5}  # the separate and the 'both' questions are fitted on 5 exhibits in 3 orders
    assert calibration_mismatch(separate, reader="separate", orders=3, **five) == ""
    both = load_calibration(model, "both")
    assert both is not None
    assert calibration_mismatch(both, reader="both", orders=3, contrast_share=defaults.contrast_share, **five) == ""
    assert "contrast_share" in calibration_mismatch(both, reader="both", orders=3, contrast_share=0.5, **five)


def desk_config(**desk: object) -> RunConfig:
    """desk on the fake, reading passages: the fake judges a whole document by any negation in it, a passage by its own words."""
    return protocol_config("desk", **{"unit": "passage", "exhibits": 8, **desk})


def test_agreeing_exhibits_rule_without_a_debate_and_say_why(services: Services) -> None:
    config = desk_config(exhibits=3)  # the demo's top 3 agree
    events = list(stream_run(CLAIM, config, services))
    stances = [e for e in events if isinstance(e, ExhibitStanceRead)]
    exhibits = {e.evidence.id for e in events if isinstance(e, EvidenceRetrieved)}
    assert stances and {s.evidence_id for s in stances} <= exhibits
    assert all(len(s.per_order) == 2 and s.method == "logprobs" for s in stances), "the contrast question, in its 2 orders"
    assert all(s.quoted for s in stances), "every exhibit quotes the sentences closest to the claim"
    aggregated = [e for e in events if isinstance(e, VerdictAggregated)]
    assert len(aggregated) == 1 and not aggregated[0].debated
    assert any(isinstance(e, StageCompleted) and e.stage == "debate" and e.detail.startswith("no debate") for e in events)
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None and "advocates argued" not in card.model.reason
    assert not any(isinstance(e, TurnCompleted) for e in events), "no argument without a conflict"
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert isinstance(events[-1], VerdictReached) and verdict.label == "SUPPORTS"
    assert verdict.confidence is not None and set(verdict.cited) <= {s.evidence_id for s in stances}


def test_exhibits_that_conflict_are_argued_over_and_read_again(services: Services) -> None:
    services.web = CannedWeb(
        [
            WebResult(
                title="A contrary report",
                url="https://example.org/contrary",
                snippet="Masks do not reduce transmission of respiratory viruses.",
            )
        ]
    )
    config = desk_config()
    config = with_settings(config, "retrieval", web_search=True)
    events = list(stream_run(CLAIM, config, services))
    first = [e for e in events if isinstance(e, VerdictAggregated) and e.round == 1]
    assert first and first[0].conflict
    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1], "the debate is the one round"
    turns = [e.turn for e in events if isinstance(e, TurnCompleted)]
    assert [t.agent for t in turns] == ["Advocate for", "Advocate against"]
    assert any(isinstance(e, ArgumentDelta) for e in events), "the arguments stream"
    again = [e for e in events if isinstance(e, ExhibitStanceRead) and e.round == 2]
    assert again and {e.evidence_id for e in again} == set(first[0].rests_on) | {e.evidence_id for e in again}
    final = [e for e in events if isinstance(e, VerdictAggregated)][-1]
    assert final.round == 2 and final.debated
    assert isinstance(events[-1], VerdictReached)
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None and "two advocates argued over them" in card.model.reason, (
        "the one verdict box says a debate took place and changed the reading"
    )


def test_switching_the_debate_off_keeps_the_first_reading(services: Services) -> None:
    services.web = CannedWeb(
        [WebResult(title="Contrary", url="https://example.org/c", snippet="Masks do not reduce transmission of respiratory viruses.")]
    )
    config = desk_config(debate=False)
    config = with_settings(config, "retrieval", web_search=True)
    events = list(stream_run(CLAIM, config, services))
    assert not any(isinstance(e, TurnCompleted) for e in events)
    assert any(isinstance(e, StageCompleted) and e.stage == "debate" and "switched off" in e.detail for e in events)


def test_an_exhibit_read_as_its_document_keeps_every_sentence_once(services: Services) -> None:
    passages = services.index.document("demo", "masks-6")
    assert len(passages) >= 2 and [p.index for p in passages] == sorted(p.index for p in passages)
    from pipelines.stages.exhibits import _document_text

    text = _document_text(passages)
    for passage in passages:
        assert passage.text.split(". ")[-1].rstrip(".") in text, "every passage's sentences are in the document"
    assert len(text) < sum(len(p.text) for p in passages), "the sentences passages share are kept once"
    assert services.index.document("demo", "no-such-document") == []


def test_desk_can_read_each_exhibit_as_its_whole_document(services: Services) -> None:
    config = fake_config(protocol="desk")
    config = with_settings(config, "desk", unit="document", exhibits=2)
    events = list(stream_run(CLAIM, config, services))
    retrieved = {e.evidence.id: e.evidence for e in events if isinstance(e, EvidenceRetrieved)}
    stances = [e for e in events if isinstance(e, ExhibitStanceRead)]
    assert len(stances) == 2 and isinstance(events[-1], VerdictReached)
    whole = " ".join(p.text for p in services.index.document("demo", retrieved[stances[0].evidence_id].doc_id or ""))
    assert all(q in whole for q in stances[0].quoted), "quotes come from the whole document"


def test_a_calibration_fitted_for_other_settings_says_so() -> None:
    from pipelines.calibration.files import calibration_mismatch, prompt_sha

    fitted = Calibration(
        name="c@1", model="m", bias=0, weights={"net": 1}, decide_at=0.5, prompt_sha=prompt_sha(), settings={"exhibits": 5, "orders": 3}
    )
    assert calibration_mismatch(fitted, exhibits=5, orders=3, unit="passage") == ""
    note = calibration_mismatch(fitted, exhibits=8, orders=3, unit="passage")
    assert "exhibits 5 (this run: 8)" in note and "approximate" in note
    stale = Calibration(name="c@1", model="m", bias=0, weights={"net": 1}, decide_at=0.5, prompt_sha="0000", settings={})
    assert "another stance prompt" in calibration_mismatch(stale, exhibits=5, orders=3, unit="passage")
    assert "negation False (this run: True)" in calibration_mismatch(fitted, exhibits=5, orders=3, negation=True, shots=0)


class LeaningModel(PositionBiasedModel):
    """A stand-in LLM that reads the true stance of whichever claim it is asked about, times a pull towards "contradicts"."""

    model_name = "leaning"

    def weights(self, text: str) -> dict[str, float]:
        asked = re.findall(r"^Claim: (.+)$", text, flags=re.MULTILINE)[-1]
        t = self.truth
        truth = t if asked == CLAIM else {"SUPPORTS": t["REFUTES"], "REFUTES": t["SUPPORTS"], "UNRELATED": t["UNRELATED"]}
        question = text.rsplit("Claim:", 1)[-1]
        return {letter: truth[_WORD[w]] * (self.pull if w == "contradicts" else 1.0) for letter, w in _OPTION.findall(question)}


def test_reading_the_claims_opposite_too_cancels_a_lean_towards_one_answer() -> None:
    truth = {"SUPPORTS": 0.6, "REFUTES": 0.2, "UNRELATED": 0.2}
    model = LeaningModel(truth, pull=4.0)
    alone = asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=3))  # type: ignore[arg-type]
    assert alone.leaning != "SUPPORTS", "the lean towards 'contradicts' hides the support"
    both = asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=3, negation="Masks do not reduce transmission"))  # type: ignore[arg-type]
    assert both.leaning == "SUPPORTS" and both.p("SUPPORTS") > 0.55
    assert len(both.per_order) == 6 and len(model.prompts) == 3 + 6
    assert all(p["SUPPORTS"] > p["UNRELATED"] for p in both.per_order[3:]), "the opposite's readings count the other way round"
    assert both.opposite_from == 3 and both.orders_agree, "the claim's orders agree among themselves, and the opposite's"
    assert not Stance("E1", both.probabilities, both.per_order, "logprobs").orders_agree, "across the two they need not"


def test_worked_examples_come_before_the_question_each_answer_in_its_own_position() -> None:
    from pipelines.stages.stance import shot_messages, worked_examples

    examples = worked_examples()
    assert sorted(e.answer for e in examples) == sorted(STANCES)
    messages = shot_messages(3)
    assert len(messages) == 6
    answers = [str(m.content) for m in messages[1::2]]
    assert sorted(answers) == ["A", "B", "C"], "no letter is taught as the usual answer"
    for question, answer, shot in zip(messages[0::2], answers, examples, strict=True):
        meaning = dict(_OPTION.findall(str(question.content)))
        assert _WORD[meaning[answer]] == shot.answer and shot.claim in str(question.content)
    model = PositionBiasedModel({"SUPPORTS": 0.5, "REFUTES": 0.3, "UNRELATED": 0.2})
    asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=1, shots=2))  # type: ignore[arg-type]
    prompt = model.prompts[0]
    assert prompt.index(examples[1].claim) < prompt.rindex(f"Claim: {CLAIM}"), "the examples come first, the question last"
    assert examples[2].claim not in prompt
    with pytest.raises(ValueError, match="between 0 and 3"):
        shot_messages(4)


def test_a_model_that_writes_no_opposite_gets_one_stated_plainly() -> None:
    from pipelines.stages.stance import negate

    class Echo:
        model_name = "echo"

        def __init__(self, text: str) -> None:
            self.text = text

        async def reply(self, messages: Sequence[Any], **params: Any) -> Reply:
            return Reply(text=self.text, tokens=())

    assert asyncio.run(negate(Echo(CLAIM), CLAIM)) == ("It is not true that masks reduce transmission of respiratory viruses.", False)  # type: ignore[arg-type]
    assert asyncio.run(negate(Echo(""), CLAIM))[1] is False  # type: ignore[arg-type]
    written = asyncio.run(negate(Echo('Opposite: "Masks do not reduce transmission of respiratory viruses"\nmore'), CLAIM))  # type: ignore[arg-type]
    assert written == ("Masks do not reduce transmission of respiratory viruses", True)


def test_desk_reads_the_claims_opposite_and_says_so(services: Services) -> None:
    plain = list(stream_run(CLAIM, desk_config(exhibits=3, negation=False, reader="separate", orders=3), services))
    assert all(len(s.per_order) == 3 for s in plain if isinstance(s, ExhibitStanceRead))
    assert not any(isinstance(e, StageCompleted) and e.stage == "negation" for e in plain)
    events = list(stream_run(CLAIM, desk_config(exhibits=3, shots=3, reader="separate", orders=3), services))
    opposite = [e for e in events if isinstance(e, StageCompleted) and e.stage == "negation"]
    assert opposite and opposite[0].detail.startswith("the claim's opposite: ") and "not" in opposite[0].detail
    stances = [e for e in events if isinstance(e, ExhibitStanceRead)]
    assert stances and all(len(s.per_order) == 6 for s in stances)
    assert events[-1].verdict.label == plain[-1].verdict.label == "SUPPORTS"  # type: ignore[attr-defined]


_CONTRAST_OPTION = re.compile(r"^([ABC])\. (.+)$", re.MULTILINE)
OPPOSITE = "Masks do not reduce transmission of respiratory viruses"


class ContrastModel(PositionBiasedModel):
    """A stand-in LLM for the contrast question: a true stance over claim / opposite / neither, times a pull towards A."""

    model_name = "contrast"

    def weights(self, text: str) -> dict[str, float]:
        meaning = {CLAIM: "SUPPORTS", OPPOSITE: "REFUTES"}
        options = {letter: meaning.get(statement, "UNRELATED") for letter, statement in _CONTRAST_OPTION.findall(text)}
        return {letter: self.truth[stance] * (self.pull if letter == "A" else 1.0) for letter, stance in options.items()}


def test_the_contrast_question_offers_the_claim_and_its_opposite_and_swaps_their_letters() -> None:
    truth = {"SUPPORTS": 0.3, "REFUTES": 0.45, "UNRELATED": 0.25}
    model = ContrastModel(truth)
    one = asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=1, negation=OPPOSITE, reader="contrast"))  # type: ignore[arg-type]
    assert one.leaning == "SUPPORTS", "asked once, the claim in position A wins although the passage leans to its opposite"
    two = asyncio.run(read_stance(ContrastModel(truth), CLAIM, EXHIBIT, orders=2, negation=OPPOSITE, reader="contrast"))  # type: ignore[arg-type]
    assert two.leaning == "REFUTES" and not two.orders_agree and len(two.per_order) == 2
    # claim in A: 0.9 / (0.9 + 0.45 + 0.25); opposite in A: 0.3 / (0.3 + 1.35 + 0.25)
    assert two.p("SUPPORTS") == pytest.approx((0.9 / 1.6 + 0.3 / 1.9) / 2, abs=1e-3), "each order's letters mapped back"
    assert sum(two.probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    first = model.prompts[0]
    assert "Which statement does the passage support?" in first and "Trials found masks reduce transmission." in first
    assert first.index("Trials found") < first.index(f"A. {CLAIM}"), "the passage first, the statements as the answers"
    assert "C. Neither: the passage does not address them." in first


def test_the_contrast_orders_of_one_exhibit_share_all_but_their_answers() -> None:
    model = ContrastModel({"SUPPORTS": 0.5, "REFUTES": 0.3, "UNRELATED": 0.2})
    asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=2, negation=OPPOSITE, reader="contrast"))  # type: ignore[arg-type]
    prefix = model.prompts[0].split("A. ")[0]
    assert len(model.prompts) == 2 and all(p.startswith(prefix) for p in model.prompts), "the server reuses the passage"
    assert [_CONTRAST_OPTION.findall(p)[0][1] for p in model.prompts] == [CLAIM, OPPOSITE]
    assert option_orders(2, "contrast") == (("SUPPORTS", "REFUTES", "UNRELATED"), ("REFUTES", "SUPPORTS", "UNRELATED"))


def test_the_contrast_question_states_the_opposite_plainly_when_none_is_given() -> None:
    model = ContrastModel({"SUPPORTS": 0.5, "REFUTES": 0.3, "UNRELATED": 0.2})
    asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=1, reader="contrast"))  # type: ignore[arg-type]
    assert "B. It is not true that masks reduce transmission of respiratory viruses." in model.prompts[0]


def test_desk_can_ask_the_contrast_question_and_writes_the_opposite_for_it(services: Services) -> None:
    events = list(stream_run(CLAIM, desk_config(exhibits=3, negation=False, reader="contrast", orders=2), services))
    assert any(isinstance(e, StageCompleted) and e.stage == "negation" for e in events), "the contrast question needs the opposite"
    assert any(isinstance(e, StageCompleted) and e.stage == "stances" for e in events)
    started = [e.detail for e in events if getattr(e, "stage", "") == "stances" and type(e).__name__ == "StageStarted"]
    assert started and "supports the claim or its opposite" in started[0]
    stances = [e for e in events if isinstance(e, ExhibitStanceRead)]
    assert stances and all(len(s.per_order) == 2 for s in stances)
    assert events[-1].verdict.label == "SUPPORTS"  # type: ignore[attr-defined]


def test_a_calibration_fitted_on_the_other_question_says_so() -> None:
    from pipelines.calibration.files import calibration_mismatch, prompt_sha

    assert prompt_sha("contrast") != prompt_sha("separate") == prompt_sha()
    separate = Calibration(name="c@1", model="m", bias=0, weights={"net": 1}, decide_at=0.5, prompt_sha=prompt_sha(), settings={})
    assert "reader separate (this run: contrast)" in calibration_mismatch(separate, reader="contrast")
    contrast = Calibration(
        name="c@2", model="m", bias=0, weights={"net": 1}, decide_at=0.5, prompt_sha=prompt_sha("contrast"), settings={"reader": "contrast"}
    )
    assert calibration_mismatch(contrast, reader="contrast") == ""


def test_both_questions_weigh_the_contrast_reading_by_its_share_and_keep_every_reading() -> None:
    from pipelines.stages.stance import mixed

    class Both(ContrastModel):
        """Answers the separate question by PositionBiasedModel's rule and the contrast question by ContrastModel's."""

        def weights(self, text: str) -> dict[str, float]:
            if "Which statement" in text:
                return super().weights(text)
            return {letter: self.truth[_WORD[word]] for letter, word in _OPTION.findall(text)}

    truth = {"SUPPORTS": 0.5, "REFUTES": 0.3, "UNRELATED": 0.2}
    model = Both(truth, pull=1.0)
    stance = asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=3, negation=OPPOSITE, reader="both", contrast_share=0.25))  # type: ignore[arg-type]
    assert len(model.prompts) == 3 + 3 + 2 and "Which statement" in model.prompts[-1] and "Which statement" not in model.prompts[5]
    assert stance.opposite_from == 3 and stance.contrast_from == 6 and len(stance.per_order) == 8
    separate = Stance("E1", {k: sum(p[k] for p in stance.per_order[:6]) / 6 for k in STANCES}, stance.per_order[:6], "logprobs")  # type: ignore[misc]
    contrast = Stance("E1", {k: sum(p[k] for p in stance.per_order[6:]) / 2 for k in STANCES}, stance.per_order[6:], "logprobs")  # type: ignore[misc]
    for k in STANCES:
        assert stance.p(k) == pytest.approx(0.75 * separate.p(k) + 0.25 * contrast.p(k), abs=1e-3)
    assert mixed(separate, contrast, 0.0).probabilities == pytest.approx(separate.probabilities, abs=1e-4)
    with pytest.raises(ValueError, match="between 0 and 1"):
        mixed(separate, contrast, 1.5)


def test_desk_asks_both_questions_when_set_and_says_so(services: Services) -> None:
    config = desk_config(exhibits=3, negation=False, reader="both", orders=3)
    events = list(stream_run(CLAIM, config, services))
    started = [e.detail for e in events if getattr(e, "stage", "") == "stances" and type(e).__name__ == "StageStarted"]
    assert started and "option orders;" in started[0] and "against the claim's opposite" not in started[0]
    assert "30% of the stance" in started[0]
    stances = [e for e in events if isinstance(e, ExhibitStanceRead)]
    assert stances and all(len(s.per_order) == 3 + 2 for s in stances), "negation off: the claim's 3 orders, then the contrast's 2"
    assert events[-1].verdict.label == "SUPPORTS"  # type: ignore[attr-defined]


_VERDICT_OPTION = re.compile(r"^([ABC])\. The (statement is accurate|statement is inaccurate|evidence does not say)\.$", re.MULTILINE)
_VERDICT_WORD = {"statement is accurate": "SUPPORTS", "statement is inaccurate": "REFUTES", "evidence does not say": "UNRELATED"}


class VerdictModel(PositionBiasedModel):
    """A stand-in LLM for the verdict question: a true stance over accurate / inaccurate / does not say, times a pull towards A."""

    model_name = "verdict"

    def weights(self, text: str) -> dict[str, float]:
        return {letter: self.truth[_VERDICT_WORD[w]] * (self.pull if letter == "A" else 1.0) for letter, w in _VERDICT_OPTION.findall(text)}


def test_the_verdict_question_asks_a_fact_checkers_question_and_swaps_accurate_and_inaccurate() -> None:
    truth = {"SUPPORTS": 0.3, "REFUTES": 0.45, "UNRELATED": 0.25}
    one = asyncio.run(read_stance(VerdictModel(truth), CLAIM, EXHIBIT, orders=1, reader="verdict"))  # type: ignore[arg-type]
    assert one.leaning == "SUPPORTS", "asked once, 'accurate' in position A wins although the evidence leans the other way"
    model = VerdictModel(truth)
    two = asyncio.run(read_stance(model, CLAIM, EXHIBIT, orders=2, negation=OPPOSITE, reader="verdict"))  # type: ignore[arg-type]
    assert two.leaning == "REFUTES" and not two.orders_agree and len(two.per_order) == 2
    assert two.p("SUPPORTS") == pytest.approx((0.9 / 1.6 + 0.3 / 1.9) / 2, abs=1e-3), "each order's letters mapped back"
    first, second = model.prompts
    assert first.startswith("You are a fact-checker.") and "What does the evidence show?" in first
    assert first.index("Trials found masks reduce transmission.") < first.index(f"Statement: {CLAIM}") < first.index("A. The statement")
    assert OPPOSITE not in first, "the verdict question reads no opposite, even when one is given"
    prefix = first.split("A. ")[0]
    assert second.startswith(prefix) and "A. The statement is inaccurate." in second, "the orders share all but their answers"


def test_desk_asks_the_verdict_question_without_writing_an_opposite(services: Services) -> None:
    events = list(stream_run(CLAIM, desk_config(exhibits=3, reader="verdict", orders=2), services))
    assert not any(getattr(e, "stage", "") == "negation" for e in events), "no question reads the opposite: none is written"
    started = [e.detail for e in events if getattr(e, "stage", "") == "stances" and type(e).__name__ == "StageStarted"]
    assert started and "accurate or inaccurate" in started[0]
    stances = [e for e in events if isinstance(e, ExhibitStanceRead)]
    assert stances and all(len(s.per_order) == 2 for s in stances)
    assert events[-1].verdict.label == "SUPPORTS"  # type: ignore[attr-defined]


def test_passages_far_from_the_claim_are_set_aside_unread_and_the_card_counts_them(services: Services) -> None:
    # Seen in the browser on the demo corpus, which holds nothing on hand washing: its 25 nearest passages were read and
    # "The Apollo Moon landings" was the first exhibit the SUPPORTED verdict rested on.
    claim = "Washing hands with soap reduces the spread of infections"
    events = list(stream_run(claim, desk_config(exhibits=25), services))
    found = {e.evidence.id: e.evidence for e in events if isinstance(e, EvidenceRetrieved)}
    read = [found[e.evidence_id] for e in events if isinstance(e, ExhibitStanceRead)]
    aggregated = [e for e in events if isinstance(e, VerdictAggregated)][-1]
    assert 0 < aggregated.set_aside == len(found) - len(read) and aggregated.read == len(read)
    likeness = services.embedder.embed([claim, *(e.text for e in found.values())])
    alike = dict(zip(found, (likeness[1:] @ likeness[0]).tolist(), strict=True))
    assert all(alike[e.id] >= 0.15 for e in read) and all(x < 0.15 for i, x in alike.items() if i not in {e.id for e in read})
    assert not any("Moon" in e.title for e in read)
    said = [e.detail for e in events if isinstance(e, StageCompleted) and e.stage == "exhibits"][-1]
    assert f"{aggregated.set_aside} more found were set aside unread, further from the claim in meaning than 0.15" in said
    note = verdict_card(digest(events)).model.reading_note  # type: ignore[union-attr]
    assert note.startswith(f"Read {len(read)} exhibits") and f"{aggregated.set_aside} more passages the search found were set aside" in note

    card = verdict_card(digest(events)).model  # type: ignore[union-attr]
    nearest = max(alike.values())
    assert aggregated.nearest == pytest.approx(nearest, abs=1e-3) and nearest < 0.4
    assert card.far_note.startswith(f"Nothing the search found is near the claim: the nearest passage is {nearest:.2f} alike to it")
    assert "400 of 400 COVID-19 claims (Check-COVID train)" in card.far_note, "how near deciding passages were, from the shipped table"
    near = list(stream_run(CLAIM, desk_config(exhibits=25), services))
    assert verdict_card(digest(near)).model.far_note == "", "the demo holds masks: its nearest passage is near"  # type: ignore[union-attr]

    everything = list(stream_run(claim, desk_config(exhibits=25, min_likeness=0.0), services))
    assert [e for e in everything if isinstance(e, VerdictAggregated)][-1].read == len(found), "0 reads every exhibit found"

    nothing = list(stream_run(claim, desk_config(exhibits=25, min_likeness=0.95), services))
    verdict = nothing[-1].verdict  # type: ignore[attr-defined]
    assert not any(isinstance(e, ExhibitStanceRead) for e in nothing) and verdict.label == "NOT ENOUGH INFO"
    assert verdict.rationale == f"None of the {len(found)} passages the search found is close enough to the claim to read."
    model = verdict_card(digest(nothing)).model
    assert model is not None and model.reading_note.startswith(f"None of the {len(found)} passages the search found was read: each was")
    assert model.reason == verdict.rationale, "not 'each exhibit was read ...' where none was"
    assert model.far_note.endswith("This corpus may not hold what decides this claim."), "nothing was read from other subjects"

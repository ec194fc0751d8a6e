"""Every PROClaim formula and threshold against hand-computed values, edges included."""

import math

import numpy as np
import pytest

from pipelines.core.domain import Admissibility, Evidence
from pipelines.protocols.proclaim.scoring import (
    has_plateaued,
    novelty_exhausted,
    panel_confidence,
    reflection_delta,
    reflection_score,
    role_switch_delta,
)
from pipelines.protocols.proclaim.settings import ProClaimConfig
from pipelines.stages.admissibility import admissibility_status, admissibility_weight, ranked_record, rule_admissibility
from pipelines.stages.novelty import assess_novelty, mean_novelty, novelty
from pipelines.stages.panel import Ballot, PanelJudgment, majority_vote

# --- Admissibility: w = r x c; admitted if w > 0.5, disputed if 0.1 < w <= 0.5, discarded if w <= 0.1


@pytest.mark.parametrize(
    ("r", "c", "w", "status"),
    [
        (0.9, 0.9, 0.81, "admitted"),
        (1.0, 0.6, 0.6, "admitted"),
        (1.0, 0.5, 0.5, "disputed"),  # exactly 0.5 is not above it
        (0.8, 0.63, 0.504, "admitted"),
        (0.7, 0.5, 0.35, "disputed"),
        (0.5, 0.21, 0.105, "disputed"),
        (0.5, 0.2, 0.1, "discarded"),  # exactly 0.1 is discarded
        (0.3, 0.3, 0.09, "discarded"),
        (0.0, 1.0, 0.0, "discarded"),
    ],
)
def test_admissibility_weight_and_status(r: float, c: float, w: float, status: str) -> None:
    assert admissibility_weight(r, c) == pytest.approx(w)
    assert admissibility_status(admissibility_weight(r, c)) == status
    ruling = rule_admissibility(r, c, "  a   reason ")
    assert ruling.status == status and ruling.weight == pytest.approx(w) and ruling.reason == "a reason"


def test_admissibility_thresholds_are_configurable() -> None:
    assert admissibility_status(0.6, admit_above=0.7, discard_at_or_below=0.2) == "disputed"
    assert admissibility_status(0.2, admit_above=0.7, discard_at_or_below=0.2) == "discarded"
    assert admissibility_status(0.71, admit_above=0.7, discard_at_or_below=0.2) == "admitted"


def test_record_ranks_admitted_by_weight_then_disputed_and_leaves_out_the_rest() -> None:
    def item(eid: str, w: float | None) -> Evidence:
        ruling = None if w is None else Admissibility(relevance=1, credibility=w, weight=w, status=admissibility_status(w))
        return Evidence(id=eid, source="corpus", text="t", admissibility=ruling)

    items = [item("E1", 0.3), item("E2", 0.9), item("E3", 0.05), item("E4", 0.6), item("E5", None), item("E6", 0.45)]
    assert [e.id for e in ranked_record(items)] == ["E2", "E4", "E6", "E1"]


# --- Novelty: 1 - max cosine to the pool; joins at >= 0.20


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_novelty_against_an_empty_pool_is_one() -> None:
    assert novelty(unit(1, 0), np.zeros((0, 2))) == 1.0


@pytest.mark.parametrize(
    ("pool", "expected"),
    [
        ([unit(1, 0)], 0.0),  # the same direction: nothing new
        ([unit(0, 1)], 1.0),  # orthogonal
        ([unit(0.8, 0.6)], 0.2),  # cosine 0.8
        ([unit(0, 1), unit(0.6, 0.8)], 0.4),  # the closest pool item counts (cosine 0.6)
        ([unit(-1, 0)], 1.0),  # opposite: clipped to 1
    ],
)
def test_novelty_is_one_minus_the_highest_cosine(pool: list[np.ndarray], expected: float) -> None:
    assert novelty(unit(1, 0), np.vstack(pool)) == pytest.approx(expected, abs=1e-6)


def test_novelty_threshold_is_inclusive_and_joined_items_count_as_pool() -> None:
    pool = np.vstack([unit(0.8, 0.6)])
    results = assess_novelty(np.vstack([unit(1, 0), unit(0, 1), unit(0, 1), unit(0.9, math.sqrt(1 - 0.81))]), pool, threshold=0.2)
    assert [r.joined for r in results] == [True, True, False, False]
    assert results[0].novelty == pytest.approx(0.2)  # exactly at the threshold joins
    assert results[2].novelty == pytest.approx(0.0)  # a copy of a candidate that just joined
    assert mean_novelty(results) == pytest.approx(np.mean([r.novelty for r in results]))
    assert mean_novelty([]) is None


# --- Self-reflection: s_ref = 0.4 logic + 0.3 novelty + 0.3 rebuttal


@pytest.mark.parametrize(
    ("logic", "nov", "rebuttal", "expected"),
    [(0.5, 0.5, 0.5, 0.5), (1, 0, 0, 0.4), (0, 1, 0, 0.3), (0, 0, 1, 0.3), (0.75, 0.0, 1.0, 0.6), (1, 1, 1, 1.0), (0, 0, 0, 0.0)],
)
def test_reflection_score(logic: float, nov: float, rebuttal: float, expected: float) -> None:
    assert reflection_score(logic, nov, rebuttal) == pytest.approx(expected)


def test_reflection_weights_are_configurable() -> None:
    assert reflection_score(1, 0, 0.5, weights=(0.5, 0.25, 0.25)) == pytest.approx(0.625)


# --- Stop rules


@pytest.mark.parametrize(
    ("history", "plateaued"),
    [
        ([0.60, 0.62, 0.64], True),  # two changes of 0.02
        ([0.30, 0.60, 0.62, 0.64], True),  # only the last two changes count
        ([0.60, 0.70, 0.72], False),  # the first of the two changes is 0.10
        ([0.60, 0.62], False),  # one change is not two rounds
        ([0.60, 0.65, 0.70], False),  # exactly 0.05 is not below 0.05
        ([0.60, 0.56, 0.60], True),  # down then up, each by 0.04
        ([], False),
    ],
)
def test_reflection_plateau(history: list[float], plateaued: bool) -> None:
    assert has_plateaued(history) is plateaued


def test_plateau_with_a_zero_threshold_never_fires() -> None:
    assert not has_plateaued([0.5, 0.5, 0.5, 0.5], delta=0.0)


@pytest.mark.parametrize(
    ("means", "exhausted"),
    [
        ([0.30, 0.05, 0.09], True),
        ([0.05, 0.30], False),
        ([0.05], False),  # one retrieval is not two
        ([0.40, None, 0.02], True),  # a retrieval that found nothing found nothing new
        ([0.10, 0.05], False),  # exactly 0.10 is not below it
        ([], False),
    ],
)
def test_novelty_exhaustion(means: list[float | None], exhausted: bool) -> None:
    assert novelty_exhausted(means) is exhausted


def test_novelty_exhaustion_window_and_threshold_are_configurable() -> None:
    assert novelty_exhausted([0.2, 0.2, 0.2], below=0.25, retrievals=3)
    assert not novelty_exhausted([0.0, 0.0], below=0.0)


# --- Role switch: delta_rs = +0.10 if gamma >= 7, 0 if 5 <= gamma < 7, -0.05 below


@pytest.mark.parametrize(
    ("gamma", "delta"), [(10, 0.10), (7, 0.10), (6.99, 0.0), (5, 0.0), (4.99, -0.05), (0, -0.05), (7.000000000001, 0.10)]
)
def test_role_switch_delta(gamma: float, delta: float) -> None:
    assert role_switch_delta(gamma) == pytest.approx(delta)


def test_role_switch_marks_are_configurable() -> None:
    assert role_switch_delta(8, high=9, mid=6, delta_high=0.2, delta_mid=0.05, delta_low=-0.1) == pytest.approx(0.05)


# --- delta_ref = max(-0.15, (s_ref - 0.5) x 0.6)


@pytest.mark.parametrize(("s_ref", "delta"), [(0.5, 0.0), (1.0, 0.3), (0.7, 0.12), (0.4, -0.06), (0.25, -0.15), (0.0, -0.15)])
def test_reflection_delta(s_ref: float, delta: float) -> None:
    assert reflection_delta(s_ref) == pytest.approx(delta)


# --- Panel: majority, split votes, tie-break


def ballot(judge: str, vote: str, *scores: float) -> Ballot:
    e, a, s = scores or (5, 5, 5)
    return Ballot(
        judge=judge,
        model="fake",
        judgment=PanelJudgment(evidence_strength=e, argument_validity=a, source_reliability=s, vote=vote, reasoning="r"),  # type: ignore[arg-type]
    )


def test_mean_quality_is_the_mean_of_the_three_scores() -> None:
    assert ballot("J", "SUPPORTED", 9, 6, 3).mean_quality == pytest.approx(6.0)


def test_unanimous_and_two_to_one_majorities() -> None:
    three = majority_vote([ballot("1", "SUPPORTED"), ballot("2", "SUPPORTED"), ballot("3", "SUPPORTED")])
    assert (three.label, three.winning_votes, three.total_votes, three.tie_break) == ("SUPPORTED", 3, 3, "")
    two = majority_vote([ballot("1", "NOT SUPPORTED"), ballot("2", "SUPPORTED"), ballot("3", "NOT SUPPORTED")])
    assert (two.label, two.winning_votes) == ("NOT SUPPORTED", 2)
    assert two.counts == {"SUPPORTED": 1, "NOT SUPPORTED": 2, "INCONCLUSIVE": 0}


def test_three_way_split_goes_to_inconclusive_by_default() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED"), ballot("2", "NOT SUPPORTED"), ballot("3", "INCONCLUSIVE")])
    assert outcome.label == "INCONCLUSIVE" and outcome.winning_votes == 1 and "split panel" in outcome.tie_break


def test_three_way_split_can_follow_the_strongest_judge() -> None:
    ballots = [ballot("1", "SUPPORTED", 5, 5, 5), ballot("2", "NOT SUPPORTED", 9, 8, 7), ballot("3", "INCONCLUSIVE", 6, 6, 6)]
    outcome = majority_vote(ballots, tie_break="strongest judge")
    assert outcome.label == "NOT SUPPORTED" and outcome.winning_votes == 1 and "2" in outcome.tie_break


def test_two_judges_that_disagree_are_a_split_and_one_judge_decides_alone() -> None:
    assert majority_vote([ballot("1", "SUPPORTED"), ballot("3", "NOT SUPPORTED")]).label == "INCONCLUSIVE"
    single = majority_vote([ballot("1", "NOT SUPPORTED")])
    assert (single.label, single.winning_votes, single.total_votes, single.tie_break) == ("NOT SUPPORTED", 1, 1, "")
    with pytest.raises(ValueError):
        majority_vote([])


# --- Confidence: c_base = 0.8 x vote share + 0.3 x (sum of means / 30); c_final = clamp(c_base + delta_rs + delta_ref, 0, 1)


def test_confidence_unanimous_is_clamped_to_one() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED"), ballot("2", "SUPPORTED"), ballot("3", "SUPPORTED")])
    terms = panel_confidence(outcome, [8, 7, 9], delta_rs=0.10, s_ref=0.7)
    # 0.8 x 3/3 = 0.80; 0.3 x 24/30 = 0.24; c_base 1.04; + 0.10 + (0.7 - 0.5) x 0.6 = 0.12 -> 1.26 -> 1.0
    assert terms.vote_share_term == pytest.approx(0.8)
    assert terms.quality_sum == pytest.approx(24) and terms.quality_term == pytest.approx(0.24)
    assert terms.c_base == pytest.approx(1.04) and terms.delta_ref == pytest.approx(0.12)
    assert terms.unclamped == pytest.approx(1.26) and terms.c_final == 1.0 and not terms.floor_applied


def test_confidence_two_to_one_with_penalties() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED"), ballot("2", "SUPPORTED"), ballot("3", "NOT SUPPORTED")])
    terms = panel_confidence(outcome, [6, 5, 4], delta_rs=-0.05, s_ref=0.3)
    # 0.8 x 2/3 = 0.53333; 0.3 x 15/30 = 0.15; c_base 0.68333; - 0.05 - 0.12 = 0.51333
    assert terms.c_base == pytest.approx(0.683333, abs=1e-6)
    assert terms.delta_ref == pytest.approx(-0.12)
    assert terms.c_final == pytest.approx(0.513333, abs=1e-6)


def test_delta_ref_is_floored_at_minus_0_15() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED"), ballot("2", "SUPPORTED"), ballot("3", "NOT SUPPORTED")])
    terms = panel_confidence(outcome, [0, 0, 0], delta_rs=-0.05, s_ref=0.0)
    # 0.53333 + 0 - 0.05 - 0.15 (not -0.30) = 0.33333: with the default weights a majority never falls to the floor
    assert terms.delta_ref == pytest.approx(-0.15) and terms.c_final == pytest.approx(1 / 3) and not terms.floor_applied


def test_split_panel_confidence_clamps_at_zero_without_a_floor() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED"), ballot("2", "NOT SUPPORTED")])  # judge 3 failed
    assert outcome.label == "INCONCLUSIVE" and outcome.winning_votes == 0
    terms = panel_confidence(outcome, [0.5, 0.5], delta_rs=-0.05, s_ref=None)
    # 0 + 0.3 x 1/20 = 0.015; - 0.05 -> -0.035 -> 0.0; no two judges agree, so no floor
    assert terms.quality_term == pytest.approx(0.015) and terms.delta_ref == 0.0
    assert terms.unclamped == pytest.approx(-0.035) and terms.c_final == 0.0 and not terms.floor_applied


def test_three_way_split_inconclusive_counts_its_one_vote() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED"), ballot("2", "NOT SUPPORTED"), ballot("3", "INCONCLUSIVE")])
    terms = panel_confidence(outcome, [5, 5, 5], delta_rs=0.0, s_ref=None)
    # 0.8 x 1/3 = 0.26667; 0.3 x 15/30 = 0.15 -> 0.41667
    assert terms.c_final == pytest.approx(0.8 / 3 + 0.15)


def test_floor_applies_when_two_of_three_agree() -> None:
    outcome = majority_vote([ballot("1", "NOT SUPPORTED"), ballot("2", "NOT SUPPORTED"), ballot("3", "SUPPORTED")])
    terms = panel_confidence(outcome, [1, 1, 1], delta_rs=-0.05, s_ref=0.1, cfg=ProClaimConfig(vote_share_weight=0.1, quality_weight=0.0))
    # 0.1 x 2/3 = 0.06667; - 0.05 - 0.15 = -0.13333 -> clamp 0 -> floor 0.10
    assert terms.unclamped == pytest.approx(0.1 * 2 / 3 - 0.2) and terms.floor_applied and terms.c_final == 0.10


def test_floor_does_not_apply_without_agreement() -> None:
    outcome = majority_vote([ballot("1", "NOT SUPPORTED"), ballot("2", "SUPPORTED"), ballot("3", "INCONCLUSIVE")])
    terms = panel_confidence(outcome, [1, 1, 1], delta_rs=-0.05, s_ref=None, cfg=ProClaimConfig(vote_share_weight=0.1, quality_weight=0.0))
    # 0.1 x 1/3 - 0.05 = -0.01667 -> 0.0, and one vote each is no agreement
    assert not terms.floor_applied and terms.c_final == 0.0


def test_quality_term_uses_the_judges_that_answered() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED"), ballot("3", "SUPPORTED")])
    terms = panel_confidence(outcome, [8, 6])
    # 0.8 x 2/2 + 0.3 x 14/20 = 0.8 + 0.21
    assert terms.quality_term == pytest.approx(0.21) and terms.c_final == 1.0


def test_confidence_needs_a_ballot() -> None:
    outcome = majority_vote([ballot("1", "SUPPORTED")])
    with pytest.raises(ValueError):
        panel_confidence(outcome, [])

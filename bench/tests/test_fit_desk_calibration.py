"""The calibration fitter reads runs made with the reader 'both' back into their two questions, so their share can be chosen again."""

from __future__ import annotations

import pytest

from bench.desk_rescore import stances_as
from bench.fit_desk_calibration import Example, pairs_from_both, reading_at_least, weigh_pairs
from pipelines.stages.stance import STANCES, Stance, mixed

BOTH = {"reader": "both", "orders": 3, "negation": True, "contrast_share": 0.15}


def reading(supports: float, refutes: float) -> dict:  # type: ignore[type-arg]
    return {"SUPPORTS": supports, "REFUTES": refutes, "UNRELATED": round(1 - supports - refutes, 4)}


def separate_stance(exhibit: str, lean: float) -> Stance:
    per_order = tuple(reading(0.3 + lean, 0.3 - lean / 2) for _ in range(3)) + tuple(reading(0.35 + lean, 0.25) for _ in range(3))
    return Stance(
        exhibit,
        {s: sum(p[s] for p in per_order) / 6 for s in STANCES},  # type: ignore[misc]
        per_order,
        "logprobs",
        opposite_from=3,  # type: ignore[arg-type]
    )


def contrast_stance(exhibit: str, lean: float) -> Stance:
    per_order = (reading(0.5 - lean, 0.2), reading(0.4 - lean, 0.3))
    return Stance(exhibit, {s: sum(p[s] for p in per_order) / 2 for s in STANCES}, per_order, "logprobs")  # type: ignore[misc,arg-type]


def claim_read_by_both(i: int, share: float = 0.15) -> tuple[Example, list[Stance], list[Stance]]:
    separate = [separate_stance(f"E{k}", 0.02 * k + 0.01 * i) for k in range(1, 6)]
    contrast = [contrast_stance(f"E{k}", 0.03 * k) for k in range(1, 6)]
    stances = tuple(mixed(a, b, share) for a, b in zip(separate, contrast, strict=True))
    return Example(f"claim {i}", "SUPPORTS" if i % 2 else "REFUTES", stances, BOTH), separate, contrast


def test_a_both_run_splits_into_the_separate_and_the_contrast_readings() -> None:
    example, separate, contrast = claim_read_by_both(1)
    [(kept, mine, theirs)] = pairs_from_both([example], exhibits=5)
    assert kept.claim == example.claim
    for got, want in [*zip(mine, separate, strict=True), *zip(theirs, contrast, strict=True)]:
        assert got.exhibit_id == want.exhibit_id
        assert got.per_order == want.per_order
        assert got.probabilities == pytest.approx(want.probabilities)


def test_weighed_again_at_the_runs_share_the_stances_are_the_ones_the_run_read() -> None:
    claims = [claim_read_by_both(i) for i in range(24)]
    weighed = weigh_pairs(pairs_from_both([c[0] for c in claims], exhibits=5), exhibits=5, share=0.15)
    for example, (original, _, _) in zip(weighed, claims, strict=True):
        assert example.settings["reader"] == "both" and example.settings["contrast_share"] == 0.15
        for got, want in zip(example.stances, original.stances, strict=True):
            assert got.probabilities == pytest.approx(want.probabilities, abs=1e-4)
    at_half = weigh_pairs(pairs_from_both([c[0] for c in claims], exhibits=5), exhibits=5, share=0.5)
    assert at_half[0].stances[0].probabilities != pytest.approx(weighed[0].stances[0].probabilities, abs=1e-3)


def test_a_claim_whose_exhibits_were_not_all_read_by_both_questions_is_left_out() -> None:
    example, separate, _ = claim_read_by_both(2)
    short = Example(example.claim, example.gold, (*example.stances[:4], separate[4]), BOTH)  # the last exhibit read by one question only
    assert pairs_from_both([short], exhibits=5) == []
    assert len(pairs_from_both([short], exhibits=4)) == 1


def test_a_fit_for_25_exhibits_leaves_out_the_runs_set_to_read_5() -> None:
    five = Example("a", "SUPPORTS", (), {"reader": "contrast", "exhibits": 5})
    deep = Example("b", "REFUTES", (), {"reader": "contrast", "exhibits": 25})
    assert reading_at_least([five, deep], 25) == [deep]
    assert reading_at_least([five, deep], 5) == [five, deep]
    assert reading_at_least([five, deep], 0) == [five, deep]


def test_a_record_read_by_the_contrast_question_alone_is_rescored_as_read() -> None:
    per_order = [reading(0.6, 0.1), reading(0.4, 0.3)]
    record = {"id": "c1", "exhibits": [{"id": "E1", "round": 1, "per_order": per_order}, {"id": "E2", "round": 2, "per_order": per_order}]}
    [stance] = stances_as(record, "contrast", 1.0)  # the round-2 reading is left out
    assert stance.per_order == tuple(per_order)
    assert stance.probabilities["SUPPORTS"] == pytest.approx(0.5)
    with pytest.raises(SystemExit, match="read with 'both'"):
        stances_as(record, "separate", 0.0)  # its separate readings were never made

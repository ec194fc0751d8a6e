"""Every metric on hand-made predictions whose values were worked out by hand."""

import math
import random

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

from pipelines.eval import metrics
from pipelines.eval.metrics import NO_VERDICT

S, R, N = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO"
CLASSES = (S, R, N)
GOLD = [S, S, S, R, R, N]
PRED = [S, S, R, R, N, N]


def test_accuracy_counts_matches_and_a_missing_prediction_is_wrong() -> None:
    assert metrics.accuracy(GOLD, PRED) == pytest.approx(4 / 6)
    assert metrics.accuracy([S, R], [S, None]) == 0.5
    assert metrics.accuracy([], []) == 0.0


def test_per_class_precision_recall_f1() -> None:
    scores = metrics.per_class_scores(GOLD, PRED, CLASSES)
    # SUPPORTS: 2 of 2 predictions right, 2 of 3 gold found.
    assert (scores[S].precision, scores[S].recall, scores[S].f1, scores[S].support) == pytest.approx((1.0, 2 / 3, 0.8, 3))
    # REFUTES: 1 of 2 predictions right, 1 of 2 gold found.
    assert (scores[R].precision, scores[R].recall, scores[R].f1) == pytest.approx((0.5, 0.5, 0.5))
    # NOT ENOUGH INFO: 1 of 2 predictions right, its one gold claim found.
    assert (scores[N].precision, scores[N].recall, scores[N].f1) == pytest.approx((0.5, 1.0, 2 / 3))


def test_macro_f1_is_the_unweighted_mean_of_class_f1() -> None:
    assert metrics.macro_f1(GOLD, PRED, CLASSES) == pytest.approx((0.8 + 0.5 + 2 / 3) / 3)


def test_a_class_never_predicted_has_zero_precision_not_an_error() -> None:
    scores = metrics.per_class_scores([S, R], [S, S], (S, R))
    assert scores[R] == metrics.ClassScore(precision=0.0, recall=0.0, f1=0.0, support=1)


@pytest.mark.parametrize("seed", range(5))
def test_accuracy_and_macro_f1_agree_with_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    gold = [rng.choice(CLASSES) for _ in range(50)]
    pred = [rng.choice(CLASSES) for _ in range(50)]
    assert metrics.accuracy(gold, pred) == pytest.approx(accuracy_score(gold, pred))
    assert metrics.macro_f1(gold, pred, CLASSES) == pytest.approx(
        f1_score(gold, pred, labels=list(CLASSES), average="macro", zero_division=0)
    )


def test_confusion_matrix_rows_are_gold_and_columns_predicted() -> None:
    cm = metrics.confusion_matrix(GOLD, PRED, CLASSES)
    assert cm.rows == CLASSES and cm.columns == CLASSES
    assert cm.counts == ((2, 1, 0), (0, 1, 1), (0, 0, 1))
    assert cm.count(S, R) == 1


def test_confusion_matrix_has_columns_for_no_verdict_and_abstentions_in_binary_mode() -> None:
    cm = metrics.confusion_matrix([S, R, R], [N, None, R], (S, R))
    assert cm.columns == (S, R, N, NO_VERDICT)
    assert cm.counts == ((0, 0, 1, 0), (0, 1, 0, 1))


def test_confusion_matrix_refuses_a_gold_label_outside_the_classes() -> None:
    with pytest.raises(ValueError, match="not one of the scored classes"):
        metrics.confusion_matrix([N], [N], (S, R))


def test_calibration_error_by_hand() -> None:
    # Two claims at 0.9 with one right (accuracy 0.5): gap 0.4, weight 2/4.
    # Two claims at 0.6 both right (accuracy 1.0): gap 0.4, weight 2/4. The claim without confidence is left out.
    cal = metrics.calibration([0.9, 0.9, 0.6, 0.6, None], [True, False, True, True, False])
    assert cal.ece == pytest.approx(0.4)
    assert (cal.covered, cal.total) == (4, 5)
    bin9, bin6 = cal.bins[9], cal.bins[6]
    assert (bin9.count, bin9.mean_confidence, bin9.accuracy) == (2, pytest.approx(0.9), 0.5)
    assert (bin6.count, bin6.mean_confidence, bin6.accuracy) == (2, pytest.approx(0.6), 1.0)
    assert sum(b.count for b in cal.bins) == 4


def test_perfect_calibration_has_zero_error() -> None:
    assert metrics.expected_calibration_error([0.7] * 10, [True] * 7 + [False] * 3) == pytest.approx(0.0, abs=1e-12)


def test_calibration_edges_fall_in_the_first_and_last_bins() -> None:
    cal = metrics.calibration([0.0, 1.0], [False, True], n_bins=4)
    assert cal.bins[0].count == 1 and cal.bins[3].count == 1
    assert cal.ece == pytest.approx(0.0)
    # Overconfident: always 1.0, right half the time.
    assert metrics.expected_calibration_error([1.0] * 4, [True, False, True, False]) == pytest.approx(0.5)


def test_calibration_without_any_confidence_is_none_and_says_so() -> None:
    cal = metrics.calibration([None, None], [True, False])
    assert cal.ece is None and cal.covered == 0 and cal.total == 2


def test_calibration_refuses_confidences_outside_zero_one() -> None:
    with pytest.raises(ValueError, match="outside"):
        metrics.calibration([1.2], [True])
    with pytest.raises(ValueError, match="2 confidences but 1"):
        metrics.calibration([0.5, 0.5], [True])


def test_evidence_recall_is_the_share_of_gold_sentences_retrieved() -> None:
    gold = [("doc", 0), ("doc", 3)]
    assert metrics.evidence_recall(gold, [("doc", 3), ("other", 0)]) == 0.5
    assert metrics.evidence_recall(gold, [("doc", 0), ("doc", 3), ("doc", 4)]) == 1.0
    assert metrics.evidence_recall(gold, []) == 0.0
    assert metrics.evidence_recall([], [("doc", 0)]) is None
    assert metrics.evidence_recall([("doc", 0), ("doc", 0)], [("doc", 0)]) == 1.0  # duplicates count once


def test_mean_and_percentile() -> None:
    assert metrics.mean([1.0, None, 3.0]) == 2.0
    assert metrics.mean([None]) is None
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    for q in (0, 50, 95, 100):
        assert metrics.percentile(values, q) == pytest.approx(float(np.percentile(values, q)))
    assert math.isclose(metrics.percentile([7.0], 95), 7.0)
    with pytest.raises(ValueError):
        metrics.percentile([], 50)


def test_length_mismatch_is_refused() -> None:
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        metrics.accuracy([S, R], [S])


def test_text_ceiling_counts_identical_texts_with_different_gold_labels() -> None:
    claims = ["Masks work.", "masks  work.", "Masks work.", "Vaccines alter DNA.", "Zinc cures it.", "Zinc cures it."]
    gold = [S, N, S, R, R, R]
    ceiling = metrics.text_ceiling(claims, gold)
    # The masks group (case and spacing ignored) is S, N, S: at most 2 of 3 right; the rest cannot conflict.
    assert ceiling == metrics.Ceiling(accuracy=pytest.approx(5 / 6), conflicting=3, groups=1)
    assert metrics.text_ceiling(["a", "b"], [S, R]) == metrics.Ceiling(accuracy=1.0, conflicting=0, groups=0)
    assert metrics.text_ceiling([], []).accuracy == 1.0
    with pytest.raises(ValueError):
        metrics.text_ceiling(["a"], [])


def test_a_perfectly_calibrated_verdict_shows_an_ece_above_zero_on_few_claims_and_less_on_more() -> None:
    sure = metrics.ece_of_a_calibrated_verdict([1.0] * 40)
    assert sure == (0.0, 0.0), "a verdict that is always sure and always right has no calibration error"
    few = metrics.ece_of_a_calibrated_verdict([0.6, 0.75, 0.9] * 18)
    many = metrics.ece_of_a_calibrated_verdict([0.6, 0.75, 0.9] * 72)
    assert 0.04 < few[0] < 0.12 and few[1] > few[0], few
    assert many[0] < few[0] / 1.5, (few, many)
    assert metrics.ece_of_a_calibrated_verdict([0.7] * 30) == metrics.ece_of_a_calibrated_verdict([0.7] * 30), "the same draws"
    with pytest.raises(ValueError):
        metrics.ece_of_a_calibrated_verdict([])


def test_auc_is_sklearns_with_ties_counted_half() -> None:
    rng = random.Random(3)
    scores = [round(rng.random(), 1) for _ in range(60)]  # rounded: many ties
    positive = [rng.random() < 0.5 for _ in range(60)]
    assert metrics.auc(scores, positive) == pytest.approx(roc_auc_score(positive, scores))
    assert math.isnan(metrics.auc([0.2, 0.4], [True, True])), "no negative claim: no AUC"


def test_selective_accuracy_keeps_the_surest_claims_and_leaves_out_those_without_a_confidence() -> None:
    confidences = [0.9, None, 0.6, 0.8, 0.55]
    correct = [True, True, False, True, False]
    assert metrics.selective_accuracy(confidences, correct, 0.5) == 1.0  # 0.9 and 0.8
    assert metrics.selective_accuracy(confidences, correct, 1.0) == 0.5
    assert metrics.selective_accuracy([None], [True], 0.5) is None
    assert metrics.coverage_curve(confidences, correct, steps=4) == [(0.25, 1.0), (0.5, 1.0), (0.75, 2 / 3), (1.0, 0.5)]

"""Evaluation metrics as pure functions over gold labels, predictions and confidences.

Predictions may be ``None`` (the run failed, or its label is not in the mapping): such a
claim counts as wrong and has its own column in the confusion matrix. Confidences may be
``None`` (the protocol gives none, like ``single``): such claims are left out of the
calibration error, and ``calibration`` says over how many claims it was computed.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

NO_VERDICT = "(no verdict)"


@dataclass(frozen=True)
class ClassScore:
    """Precision, recall and F1 of one class, and how many gold claims it has."""

    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True)
class ConfusionMatrix:
    """Counts of gold label (rows) against predicted label (columns)."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]

    def count(self, gold: str, predicted: str) -> int:
        return self.counts[self.rows.index(gold)][self.columns.index(predicted)]


@dataclass(frozen=True)
class ReliabilityBin:
    """One confidence bin of a reliability diagram: [lower, upper), its claims, mean confidence and accuracy."""

    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


@dataclass(frozen=True)
class Calibration:
    """Expected calibration error over the claims that carry a confidence, with its bins."""

    ece: float | None
    covered: int
    total: int
    bins: tuple[ReliabilityBin, ...]


def accuracy(gold: Sequence[str], predicted: Sequence[str | None]) -> float:
    """Share of claims whose prediction equals the gold label (a missing prediction is wrong)."""
    _check_lengths(gold, predicted)
    if not gold:
        return 0.0
    return sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)


def per_class_scores(gold: Sequence[str], predicted: Sequence[str | None], classes: Sequence[str]) -> dict[str, ClassScore]:
    """Precision, recall and F1 of each class (0 where undefined, as scikit-learn's zero_division=0)."""
    _check_lengths(gold, predicted)
    scores: dict[str, ClassScore] = {}
    for label in classes:
        true_pos = sum(g == label and p == label for g, p in zip(gold, predicted, strict=True))
        predicted_pos = sum(p == label for p in predicted)
        support = sum(g == label for g in gold)
        precision = true_pos / predicted_pos if predicted_pos else 0.0
        recall = true_pos / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores[label] = ClassScore(precision=precision, recall=recall, f1=f1, support=support)
    return scores


def macro_f1(gold: Sequence[str], predicted: Sequence[str | None], classes: Sequence[str]) -> float:
    """Unweighted mean of the classes' F1 (every class counts the same, however rare)."""
    scores = per_class_scores(gold, predicted, classes)
    return sum(s.f1 for s in scores.values()) / len(scores) if scores else 0.0


def confusion_matrix(gold: Sequence[str], predicted: Sequence[str | None], classes: Sequence[str]) -> ConfusionMatrix:
    """Gold classes as rows; predicted classes as columns, plus any other predicted label seen and NO_VERDICT."""
    _check_lengths(gold, predicted)
    extra = sorted({p for p in predicted if p is not None and p not in classes})
    columns = (*classes, *extra, *((NO_VERDICT,) if any(p is None for p in predicted) else ()))
    rows = tuple(classes)
    counts = [[0] * len(columns) for _ in rows]
    for g, p in zip(gold, predicted, strict=True):
        if g not in rows:
            raise ValueError(f"gold label {g!r} is not one of the scored classes {', '.join(rows)}")
        counts[rows.index(g)][columns.index(p if p is not None else NO_VERDICT)] += 1
    return ConfusionMatrix(rows=rows, columns=columns, counts=tuple(tuple(r) for r in counts))


def calibration(confidences: Sequence[float | None], correct: Sequence[bool], n_bins: int = 10) -> Calibration:
    """Expected calibration error: sum over equal-width bins of (share of claims) x |accuracy - mean confidence|.

    The confidence is the one the verdict states for its own label; claims without one are
    left out (``covered`` says how many were used). A confidence of exactly 1.0 falls in the
    last bin.
    """
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences but {len(correct)} outcomes")
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    pairs = [(float(c), ok) for c, ok in zip(confidences, correct, strict=True) if c is not None and not math.isnan(c)]
    for c, _ in pairs:
        if not 0.0 <= c <= 1.0:
            raise ValueError(f"confidence {c} is outside [0, 1]")
    buckets: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for c, ok in pairs:
        buckets[min(int(c * n_bins), n_bins - 1)].append((c, ok))
    bins = []
    ece = 0.0
    for index, bucket in enumerate(buckets):
        mean_conf = sum(c for c, _ in bucket) / len(bucket) if bucket else None
        acc = sum(ok for _, ok in bucket) / len(bucket) if bucket else None
        if bucket and mean_conf is not None and acc is not None:
            ece += len(bucket) / len(pairs) * abs(acc - mean_conf)
        bins.append(ReliabilityBin(index / n_bins, (index + 1) / n_bins, len(bucket), mean_conf, acc))
    return Calibration(ece=ece if pairs else None, covered=len(pairs), total=len(correct), bins=tuple(bins))


def expected_calibration_error(confidences: Sequence[float | None], correct: Sequence[bool], n_bins: int = 10) -> float | None:
    """The ECE alone (None when no claim carries a confidence)."""
    return calibration(confidences, correct, n_bins).ece


def ece_of_a_calibrated_verdict(confidences: Sequence[float], n_bins: int = 10, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The ECE a perfectly calibrated verdict would show on claims with these confidences: (median, 90th percentile).

    Each draw marks every claim right with exactly its stated confidence and measures the ECE;
    on a few dozen claims the equal-width estimate is biased upwards by chance alone (about
    0.09 on 53 confident claims), so an ECE is read against this floor, not against zero.
    """
    if not confidences:
        raise ValueError("no confidences")
    rng = random.Random(seed)
    found = sorted(calibration(confidences, [rng.random() < c for c in confidences], n_bins).ece or 0.0 for _ in range(draws))
    return found[draws // 2], found[int(draws * 0.9)]


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """Area under the ROC curve: the chance that a positive claim scores above a negative one (ties count half); NaN without both."""
    pos = [x for x, y in zip(scores, positive, strict=True) if y]
    neg = [x for x, y in zip(scores, positive, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


def selective_accuracy(confidences: Sequence[float | None], correct: Sequence[bool], coverage: float) -> float | None:
    """Accuracy on the ``coverage`` share (0..1] of the claims that state a confidence, the surest first; None when none does.

    Ties in confidence keep the claims' order, so the figure repeats.
    """
    stated = [(c, ok) for c, ok in zip(confidences, correct, strict=True) if c is not None and not math.isnan(c)]
    if not stated:
        return None
    ranked = sorted(range(len(stated)), key=lambda i: -stated[i][0])
    kept = ranked[: max(1, round(len(ranked) * coverage))]
    return sum(stated[i][1] for i in kept) / len(kept)


def coverage_curve(confidences: Sequence[float | None], correct: Sequence[bool], steps: int = 10) -> list[tuple[float, float]]:
    """(coverage, selective accuracy) from the surest 1/steps of the claims that state a confidence to all of them."""
    if not any(c is not None for c in confidences):
        return []
    return [(k / steps, selective_accuracy(confidences, correct, k / steps) or 0.0) for k in range(1, steps + 1)]


def evidence_recall(gold: Iterable[tuple[str, int]], retrieved: Iterable[tuple[str, int]]) -> float | None:
    """Share of gold rationale sentences (document, sentence index) among those retrieved; None without gold."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(retrieved)) / len(gold_set)


@dataclass(frozen=True)
class Ceiling:
    """The best accuracy any system can reach when it sees only the claim's text.

    A dataset may hold the same text twice with different gold labels (Check-COVID pairs
    every NOT ENOUGH INFO claim with a SUPPORT or REFUTE claim worded identically: the label
    follows the evidence the annotators paired it with, not the words). A system that answers
    the same text the same way (a deterministic model, or a cached answer) gives both one
    verdict, so at most the commonest label of each group can be right.
    """

    accuracy: float  # 1.0 when no two claims conflict
    conflicting: int  # claims whose exact text also carries another gold label
    groups: int  # how many such texts


def text_ceiling(claims: Sequence[str], gold: Sequence[str]) -> Ceiling:
    """The accuracy ceiling of ``claims`` (compared case- and whitespace-insensitively) with their ``gold`` labels."""
    if len(claims) != len(gold):
        raise ValueError(f"{len(claims)} claims but {len(gold)} gold labels")
    if not claims:
        return Ceiling(accuracy=1.0, conflicting=0, groups=0)
    by_text: dict[str, Counter[str]] = defaultdict(Counter)
    for claim, label in zip(claims, gold, strict=True):
        by_text[" ".join(claim.split()).casefold()][label] += 1
    mixed = [labels for labels in by_text.values() if len(labels) > 1]
    best = sum(max(labels.values()) for labels in by_text.values())
    return Ceiling(accuracy=best / len(claims), conflicting=sum(sum(labels.values()) for labels in mixed), groups=len(mixed))


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation, as numpy's default."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _check_lengths(gold: Sequence[str], predicted: Sequence[str | None]) -> None:
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")

"""Fitting a calibration: a small-L2 logistic fit of p(supported) on stance features, cross-validated, and its scores.

Pure numpy, no model calls: the features come in as a matrix (one row a claim), the gold
labels as 1 (supported) and 0 (refuted). Scored on the binary answer (the likelier side):
accuracy, log loss, ECE (10 bins), selective accuracy on the surer half, and AUC (how well
the probability ranks supported claims above refuted ones; 0.5 is no signal at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

import pipelines.eval.metrics as metrics

L2 = 0.01
FOLDS = 5
NO_SIGNAL_AUC = 0.6  # below this cross-validated AUC the readings cannot tell the labels apart: nothing is saved
THREE = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 200) -> tuple[float, np.ndarray]:
    """Bias and weights (in the features' own units) by Newton's method on the L2-penalised log loss.

    The features are standardised first, so the penalty weighs each alike whatever its range
    (stance differences span about +-0.3); the bias is not penalised.
    """
    centre, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    bias, weights = _newton((x - centre) / scale, y, l2, steps)
    return bias - float(np.sum(weights * centre / scale)), weights / scale


def _newton(x: np.ndarray, y: np.ndarray, l2: float, steps: int) -> tuple[float, np.ndarray]:
    features = np.hstack([np.ones((len(x), 1)), x])
    theta = np.zeros(features.shape[1])
    penalty = np.diag([0.0] + [l2 * len(x)] * x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-features @ theta))
        gradient = features.T @ (p - y) + penalty @ theta
        hessian = features.T @ (features * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(theta))
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(theta[0]), theta[1:]


def predict(bias: float, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(bias + x @ weights)))


def scores(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Accuracy, log loss, ECE and selective accuracy on the surer half of the binary answer ``p >= 0.5``."""
    predicted = p >= 0.5
    correct = predicted == (y == 1)
    confidence = np.maximum(p, 1 - p)
    eps = 1e-9
    loss = float(-np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)))
    ece = metrics.expected_calibration_error(confidence.tolist(), correct.tolist(), 10) or 0.0
    order = np.argsort(-confidence, kind="stable")
    half = correct[order[: max(1, len(order) // 2)]]
    return {"accuracy": float(np.mean(correct)), "log_loss": loss, "ece": float(ece), "selective_50": float(np.mean(half))}


def cross_validated(x: np.ndarray, y: np.ndarray, folds: int = FOLDS) -> np.ndarray:
    """Each claim's p(supported) from a calibration fitted without its fold (claim i in fold i mod ``folds``)."""
    p = np.zeros(len(y))
    index = np.arange(len(y))
    for fold in range(folds):
        test = index % folds == fold
        bias, weights = fit_logistic(x[~test], y[~test])
        p[test] = predict(bias, weights, x[test])
    return p


def best_decide_at(q_by_claim: dict[str, float], gold_three: Sequence[tuple[str, str]]) -> tuple[float, float]:
    """The least confidence (0.5 = always take a side) that maximises 3-label macro-F1 on the fitted claims."""
    best = (0.5, -1.0)
    for threshold in [0.5 + 0.01 * i for i in range(0, 31)]:
        gold, predicted = [], []
        for claim, label in gold_three:
            if claim not in q_by_claim:
                continue
            q = q_by_claim[claim]
            side = max(q, 1 - q)
            gold.append(label)
            predicted.append("NOT ENOUGH INFO" if side < threshold else ("SUPPORTS" if q >= 0.5 else "REFUTES"))
        f1 = metrics.macro_f1(gold, predicted, THREE)
        if f1 > best[1] + 1e-9:
            best = (round(threshold, 2), f1)
    return best


@dataclass(frozen=True)
class Fit:
    """A calibration fitted on all the claims, and how it did cross-validated on them."""

    names: tuple[str, ...]
    bias: float
    weights: tuple[float, ...]
    cross_validated: dict[str, float]  # accuracy, log_loss, ece, selective_50, auc
    predicted: tuple[float, ...]  # each claim's cross-validated p(supported), in the order given
    claims: int
    supported: int

    @property
    def separates(self) -> bool:
        """Whether the readings tell the labels apart at all (cross-validated AUC at least ``NO_SIGNAL_AUC``)."""
        return self.cross_validated["auc"] >= NO_SIGNAL_AUC


def fit(x: np.ndarray, y: np.ndarray, names: Sequence[str], folds: int = FOLDS) -> Fit:
    """The logistic calibration on every claim, with its ``folds``-fold cross-validated scores (AUC among them)."""
    if len(y) < folds or len(set(y.tolist())) < 2:
        raise ValueError(f"a calibration needs claims of both labels, at least {folds}; got {len(y)} ({int(y.sum())} supported)")
    bias, weights = fit_logistic(x, y)
    p = cross_validated(x, y, folds)
    return Fit(
        names=tuple(names),
        bias=bias,
        weights=tuple(float(w) for w in weights),
        cross_validated={**scores(p, y), "auc": metrics.auc(p.tolist(), (y == 1).tolist())},
        predicted=tuple(float(v) for v in p),
        claims=len(y),
        supported=int(y.sum()),
    )

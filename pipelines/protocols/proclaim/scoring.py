"""PROClaim's formulas as pure functions: self-reflection, stop rules, role-switch and confidence terms.

Every default is the published method's; every caller passes the run's ProClaimConfig
values. Nothing here calls a model or emits an event (the panel's confidence comes back as the
event that records it, for the caller to emit), so other protocols can reuse them.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from pipelines.core.events import ConfidenceComputed
from pipelines.protocols.proclaim.settings import ProClaimConfig
from pipelines.stages.panel import PanelOutcome

# Thresholds are compared after rounding to 9 places, so 0.7 - 0.65 counts as 0.05 (not 0.0499999...).
_PLACES = 9


def reflection_score(logic: float, novelty: float, rebuttal: float, weights: tuple[float, float, float] = (0.4, 0.3, 0.3)) -> float:
    """s_ref = 0.4 logic + 0.3 novelty + 0.3 rebuttal (each term in [0, 1])."""
    w_logic, w_novelty, w_rebuttal = weights
    return w_logic * logic + w_novelty * novelty + w_rebuttal * rebuttal


def has_plateaued(history: Sequence[float], delta: float = 0.05, rounds: int = 2) -> bool:
    """True when |change in s_ref| < ``delta`` for ``rounds`` consecutive rounds (needs rounds + 1 scores)."""
    if len(history) < rounds + 1:
        return False
    recent = history[-(rounds + 1) :]
    return all(round(abs(b - a), _PLACES) < delta for a, b in pairwise(recent))


def novelty_exhausted(means: Sequence[float | None], below: float = 0.10, retrievals: int = 2) -> bool:
    """True when the mean novelty is below ``below`` for ``retrievals`` consecutive retrievals.

    A retrieval that found nothing (None) found nothing new: it counts as novelty 0.
    """
    if len(means) < retrievals:
        return False
    return all(round(m if m is not None else 0.0, _PLACES) < below for m in means[-retrievals:])


def role_switch_delta(
    gamma: float, high: float = 7.0, mid: float = 5.0, delta_high: float = 0.10, delta_mid: float = 0.0, delta_low: float = -0.05
) -> float:
    """delta_rs = +0.10 if gamma >= 7, 0 if 5 <= gamma < 7, -0.05 below 5."""
    gamma = round(gamma, _PLACES)
    if gamma >= high:
        return delta_high
    if gamma >= mid:
        return delta_mid
    return delta_low


def reflection_delta(s_ref: float, center: float = 0.5, scale: float = 0.6, floor: float = -0.15) -> float:
    """delta_ref = max(-0.15, (s_ref - 0.5) x 0.6)."""
    return max(floor, round((s_ref - center) * scale, _PLACES))


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


def panel_confidence(
    outcome: PanelOutcome,
    mean_qualities: Sequence[float],
    *,
    delta_rs: float = 0.0,
    s_ref: float | None = None,
    cfg: ProClaimConfig | None = None,
) -> ConfidenceComputed:
    """The panel's decision with every term of its confidence, as the event that records it.

    c_final = clamp(c_base + delta_rs + delta_ref, 0, 1), at least ``cfg.confidence_floor`` when
    ``cfg.floor_min_agreeing`` judges agree. With the published weights (ProClaimConfig's defaults):
    c_base = 0.8 x (winning votes / total) + 0.3 x (sum of the judges' mean quality scores / (10 x judges));
    with the three judges of the method the second term is the sum over 30. delta_ref comes from
    the winning side's s_ref; with no winning side (INCONCLUSIVE) ``s_ref`` is None and delta_ref is 0.
    """
    cfg = cfg or ProClaimConfig()
    if outcome.total_votes <= 0 or not mean_qualities:
        raise ValueError("confidence needs at least one judge's ballot")
    vote_share_term = cfg.vote_share_weight * outcome.winning_votes / outcome.total_votes
    quality_sum = float(sum(mean_qualities))
    quality_term = cfg.quality_weight * quality_sum / (10.0 * len(mean_qualities))
    c_base = vote_share_term + quality_term
    delta_ref = reflection_delta(s_ref, cfg.ref_center, cfg.ref_scale, cfg.ref_floor) if s_ref is not None else 0.0
    unclamped = c_base + delta_rs + delta_ref
    c_final = clamp(unclamped)
    floor_applied = outcome.winning_votes >= cfg.floor_min_agreeing and c_final < cfg.confidence_floor
    if floor_applied:
        c_final = cfg.confidence_floor
    return ConfidenceComputed(
        label=outcome.label,
        votes=outcome.counts,
        winning_votes=outcome.winning_votes,
        total_votes=outcome.total_votes,
        tie_break=outcome.tie_break,
        vote_share_term=vote_share_term,
        quality_sum=quality_sum,
        quality_term=quality_term,
        c_base=c_base,
        delta_rs=delta_rs,
        s_ref=s_ref,
        delta_ref=delta_ref,
        unclamped=unclamped,
        floor_applied=floor_applied,
        c_final=c_final,
    )

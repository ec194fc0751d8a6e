"""Fusing rankings: reciprocal rank fusion, a weighted sum of normalized scores, and passage -> document.

Pure functions over plain mappings, so they are tested on hand-made rankings. A "ranking"
is a list of ids, best first; "scores" map ids to numbers where higher is better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60  # Cormack et al. (2009): damps the head of each ranking; 60 is their default


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]], k: int = RRF_K, weights: Mapping[str, float] | None = None
) -> dict[str, float]:
    """score(id) = sum over rankings of weight / (k + rank), rank counted from 1; an id missing from a ranking gets nothing from it."""
    fused: dict[str, float] = {}
    for name, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 0.0)
        if not weight:
            continue
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores scaled to 0..1 within one query (all equal -> all 1, so a lone hit still counts)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {item: (value - low) / (high - low) for item, value in scores.items()}


def weighted_fusion(scores: Mapping[str, Mapping[str, float]], weights: Mapping[str, float]) -> dict[str, float]:
    """sum over signals of weight x min-max-normalized score; an id a signal did not score gets 0 from it."""
    fused: dict[str, float] = {}
    for name, per_item in scores.items():
        weight = weights.get(name, 0.0)
        if not weight:
            continue
        for item, value in min_max(per_item).items():
            fused[item] = fused.get(item, 0.0) + weight * value
    return fused


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Ids best first; ties broken by id so results are repeatable."""
    return sorted(scores, key=lambda item: (-scores[item], item))


def best_per_group(scores: Mapping[str, float], group_of: Mapping[str, str]) -> dict[str, tuple[str, float]]:
    """For each group (a document), its best-scoring member (a passage) and that score: max aggregation."""
    best: dict[str, tuple[str, float]] = {}
    for item, value in scores.items():
        group = group_of[item]
        if group not in best or value > best[group][1] or (value == best[group][1] and item < best[group][0]):
            best[group] = (item, value)
    return best

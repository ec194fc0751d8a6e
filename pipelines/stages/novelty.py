"""Novelty stage: novelty = 1 - max cosine(item, pool); only items at or above a threshold join the pool.

Candidates are taken in order and each one that joins counts as pool for the next, so two
near-copies found in the same round do not both get in. ``assess_novelty`` is pure (unit
vectors in, scores out); ``filter_novel`` embeds with the run's embedder and emits one
NoveltyAssessed event per candidate.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np

from pipelines.core.domain import Evidence
from pipelines.core.events import NoveltyAssessed
from pipelines.run.context import RunContext

NOVELTY_ADMIT_AT = 0.20


@dataclass(frozen=True)
class NoveltyResult:
    novelty: float
    joined: bool


def novelty(vector: np.ndarray, pool: np.ndarray) -> float:
    """1 - the highest cosine between ``vector`` and any row of ``pool`` (unit vectors); 1 for an empty pool.

    Clipped to [0, 1]: an item pointing away from everything (negative cosine) is as novel as it gets.
    Rounded to 6 places, so a cosine of 0.8 gives exactly 0.2 and meets a 0.20 threshold.
    """
    if pool.size == 0:
        return 1.0
    return round(float(np.clip(1.0 - float(np.max(pool @ vector)), 0.0, 1.0)), 6)


def assess_novelty(candidates: np.ndarray, pool: np.ndarray, threshold: float = NOVELTY_ADMIT_AT) -> list[NoveltyResult]:
    """Novelty of each candidate row in order; one that joins becomes part of the pool for the rest."""
    current = pool.reshape(-1, candidates.shape[1]) if candidates.size else pool
    results: list[NoveltyResult] = []
    for vector in candidates:
        score = novelty(vector, current)
        joined = score >= threshold
        results.append(NoveltyResult(novelty=score, joined=joined))
        if joined:
            current = np.vstack([current, vector[None, :]]) if current.size else vector[None, :]
    return results


def mean_novelty(results: list[NoveltyResult]) -> float | None:
    """The mean novelty of one retrieval; None when it found nothing."""
    return float(np.mean([r.novelty for r in results])) if results else None


def embedding_text(e: Evidence) -> str:
    return f"{e.title}. {e.text}" if e.title else e.text


async def filter_novel(
    ctx: RunContext, candidates: list[Evidence], pool: list[Evidence], *, round: int, threshold: float = NOVELTY_ADMIT_AT
) -> tuple[list[Evidence], list[NoveltyResult]]:
    """The candidates novel enough to join ``pool`` (with their novelty attached), and every candidate's result."""
    if not candidates:
        return [], []
    vectors = await asyncio.to_thread(ctx.tools.embedder.embed, [embedding_text(e) for e in candidates + pool])
    results = assess_novelty(vectors[: len(candidates)], vectors[len(candidates) :], threshold)
    joined: list[Evidence] = []
    for item, result in zip(candidates, results, strict=True):
        ctx.emit(
            NoveltyAssessed(evidence_id=item.id, round=round, novelty=round_(result.novelty), threshold=threshold, joined=result.joined)
        )
        if result.joined:
            scored = item.model_copy(update={"novelty": round_(result.novelty)})
            ctx.pool[item.id] = scored
            joined.append(scored)
    return joined, results


def round_(value: float) -> float:
    return round(value, 4)

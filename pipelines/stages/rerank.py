"""Rerank the fused top candidates: by each passage's best sentence (offline), or by the judge model in one call.

Both keep the retrieval order as a tie-breaker and fall back to it when they cannot score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import numpy as np

from corpora.base import split_sentences
from pipelines.core.errors import ModelOutputError
from pipelines.prompts import load_prompt
from pipelines.run.llm.client import LLM
from pipelines.run.tools.corpus_index import Hit
from pipelines.run.tools.embeddings import Embedder
from pipelines.run.tools.fusion import min_max
from pipelines.stages.schemas import RerankScores

RerankMode = Literal["none", "sentences", "judge"]
RERANK_DEPTH = 20  # how many fused candidates a rerank sees
SENTENCE_WEIGHT = 0.5  # share of the final score from the best sentence; the rest is the retrieval score


def rerank_by_sentences(embedder: Embedder, query: str, hits: Sequence[Hit]) -> list[Hit]:
    """Order by retrieval score blended with the best sentence's cosine to the query (MiniLM, per sentence).

    A passage is three sentences; the one that states the claim's finding is often diluted by
    the other two when the passage is embedded whole.
    """
    if len(hits) < 2:
        return list(hits)
    sentences = [split_sentences(h.passage.text) or (h.passage.text,) for h in hits]
    flat = [s for group in sentences for s in group]
    vectors = embedder.embed([query, *flat])
    sims = vectors[1:] @ vectors[0]
    best: dict[str, float] = {}
    start = 0
    for hit, group in zip(hits, sentences, strict=True):
        best[hit.passage.id] = float(np.max(sims[start : start + len(group)]))
        start += len(group)
    base = min_max({h.passage.id: h.score for h in hits})
    sentence = min_max(best)
    combined = {pid: (1 - SENTENCE_WEIGHT) * base[pid] + SENTENCE_WEIGHT * sentence[pid] for pid in base}
    return _ordered(hits, combined, "sentence", best)


async def rerank_by_model(llm: LLM, claim: str, hits: Sequence[Hit]) -> list[Hit]:
    """Order by the model's relevance rating of all candidates, asked in one call; unrated ones keep their place after."""
    if len(hits) < 2:
        return list(hits)
    labels = {f"E{i}": h for i, h in enumerate(hits, start=1)}
    passages = "\n".join(
        f"[{label}] {' '.join(h.passage.title.split())}: {' '.join(h.passage.text.split())[:600]}" for label, h in labels.items()
    )
    answer = await llm.structured(load_prompt("rerank_passages").render(claim=claim, passages=passages), RerankScores)
    rated = {labels[s.id].passage.id: s.relevance for s in answer.scores if s.id in labels}
    if not rated:
        raise ModelOutputError("the rerank rated none of the passages by their ids")
    # Rated passages first by rating; the retrieval order breaks ties and orders the unrated.
    order = {h.passage.id: rank for rank, h in enumerate(hits)}
    combined = {pid: rated.get(pid, -1.0) - order[pid] * 1e-6 for pid in order}
    return _ordered(hits, combined, "judge", rated)


def _ordered(hits: Sequence[Hit], combined: dict[str, float], name: str, signal: dict[str, float]) -> list[Hit]:
    out = []
    for hit in sorted(hits, key=lambda h: -combined[h.passage.id]):
        scores = dict(hit.scores)
        if hit.passage.id in signal:
            scores[name] = round(signal[hit.passage.id], 4)
        scores["rerank"] = round(combined[hit.passage.id], 4)
        out.append(replace(hit, scores=scores))
    return out

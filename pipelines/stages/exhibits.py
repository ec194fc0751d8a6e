"""Exhibits: the passages a `desk` run reads, from the claim's search, its rewrites and the web, each with quoted sentences.

Every query's results are taken in turn by rank (the claim's best, each rewrite's best, the
web's best, then the second of each, ...), so each query contributes its strongest passages
before any query its weaker ones; a passage found twice, or with the same text as one kept,
is kept once. The quoted sentences are the exhibit's sentences closest in meaning to the
claim (MiniLM), in the order the passage has them: what a checker reads first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from corpora.base import Passage, split_sentences
from pipelines.core.domain import Evidence
from pipelines.core.personas import HUMAN_CHECKER
from pipelines.run.context import RunContext
from pipelines.run.tools.embeddings import Embedder
from pipelines.stages.query_formulation import same_query
from pipelines.stages.retrieval import claim_rewrites, retrieve


async def gather_exhibits(
    ctx: RunContext, *, agent: str, queries: Sequence[str], limit: int, rewrites: int, extra_queries: Sequence[str] = ()
) -> list[Evidence]:
    """At most ``limit`` distinct passages for the claim: ``queries`` (the claim first), ``rewrites`` model rewrites, and the web."""
    cfg = ctx.config.retrieval
    ranked: list[list[Evidence]] = []
    searched: list[str] = []
    for query in queries:
        ranked.append(await retrieve(ctx, agent=agent, round=1, query=query, tool="corpus", k=limit))
        searched.append(query)
    # A rewrite keeps fewer results: it widens the net, the claim's own search stays the backbone.
    per_rewrite = max(2, limit // (rewrites + 1))
    for rewrite in await claim_rewrites(ctx, rewrites) if rewrites else []:
        if any(same_query(rewrite, q) for q in searched):
            continue
        ranked.append(await retrieve(ctx, agent=agent, round=1, query=rewrite, tool="corpus", k=per_rewrite, rewritten=True))
        searched.append(rewrite)
    for query in extra_queries:  # a checker's additions in step mode
        ranked.append(await retrieve(ctx, agent=HUMAN_CHECKER, round=1, query=query, tool="corpus", k=per_rewrite))
    if cfg.web_search:
        ranked.append(await retrieve(ctx, agent=agent, round=1, query=queries[0], tool="web", k=cfg.web_top_k))
    return interleave(ranked, limit)


def same_text(text: str) -> str:
    """What two passages must share to be one text: their words, case and spacing aside (the exhibits keep one copy)."""
    return " ".join(text.split()).lower()


def interleave(ranked: Sequence[Sequence[Evidence]], limit: int) -> list[Evidence]:
    """Each list's first, then each list's second, ...: at most ``limit`` items, no id or text twice."""
    kept: list[Evidence] = []
    ids: set[str] = set()
    texts: set[str] = set()
    depth = max((len(r) for r in ranked), default=0)
    for rank in range(depth):
        for results in ranked:
            if rank >= len(results) or len(kept) >= limit:
                continue
            item = results[rank]
            text = same_text(item.text)
            if item.id in ids or text in texts:
                continue
            kept.append(item)
            ids.add(item.id)
            texts.add(text)
    return kept


async def set_aside_far(
    embedder: Embedder, claim: str, exhibits: Sequence[Evidence], floor: float
) -> tuple[list[tuple[Evidence, float]], float | None]:
    """The exhibits less than ``floor`` alike to the claim in meaning (MiniLM cosine of claim and passage), each with its
    likeness, in the search's order, and the nearest exhibit's likeness (None with no exhibit).

    A search always returns its nearest passages, near or not; on a corpus with nothing on the claim this model reads some
    of them as support. ``floor`` 0 sets none aside.
    """
    if not exhibits:
        return [], None
    likeness = await asyncio.to_thread(_likeness, embedder, claim, exhibits)
    aside = [(exhibit, x) for exhibit, x in zip(exhibits, likeness, strict=True) if floor > 0 and x < floor]
    return aside, max(likeness)


def _likeness(embedder: Embedder, claim: str, exhibits: Sequence[Evidence]) -> list[float]:
    vectors = embedder.embed([claim, *(e.text for e in exhibits)])
    return [float(x) for x in vectors[1:] @ vectors[0]]


async def quote_sentences(embedder: Embedder, claim: str, exhibits: Sequence[Evidence], n: int) -> dict[str, tuple[str, ...]]:
    """Each exhibit's ``n`` sentences closest in meaning to the claim, in the passage's order."""
    return await asyncio.to_thread(_quote, embedder, claim, exhibits, n)


def _quote(embedder: Embedder, claim: str, exhibits: Sequence[Evidence], n: int) -> dict[str, tuple[str, ...]]:
    sentences = {e.id: split_sentences(e.text) or (e.text.strip(),) for e in exhibits}
    flat = [s for group in sentences.values() for s in group]
    if not flat:
        return {}
    vectors = embedder.embed([claim, *flat])
    similarity = vectors[1:] @ vectors[0]
    quotes: dict[str, tuple[str, ...]] = {}
    start = 0
    for exhibit_id, group in sentences.items():
        scores = similarity[start : start + len(group)]
        start += len(group)
        best = sorted(np.argsort(-scores, kind="stable")[:n].tolist())
        quotes[exhibit_id] = tuple(group[i] for i in best)
    return quotes


async def as_documents(ctx: RunContext, exhibits: Sequence[Evidence], max_chars: int) -> dict[str, Evidence]:
    """Each corpus exhibit widened to its whole document (what the stance is read on when ``desk.unit`` is document).

    The exhibit itself (its id, its passage in the evidence table) stays as retrieved; web and
    pasted exhibits are read as they are. Passages overlap by a sentence, so each sentence
    of the document is kept once, in order.
    """
    widened: dict[str, Evidence] = {}
    for exhibit in exhibits:
        if exhibit.source != "corpus" or not exhibit.doc_id or not exhibit.corpus:
            widened[exhibit.id] = exhibit
            continue
        passages = await asyncio.to_thread(ctx.tools.index.document, exhibit.corpus, exhibit.doc_id)
        text = _document_text(passages) or exhibit.text
        widened[exhibit.id] = exhibit.model_copy(update={"text": text[:max_chars]})
    return widened


def _document_text(passages: Sequence[Passage]) -> str:
    sentences: dict[int, str] = {}
    pieces: list[str] = []
    for passage in passages:
        split = split_sentences(passage.text)
        if len(split) == len(passage.sentence_indices):
            for index, sentence in zip(passage.sentence_indices, split, strict=True):
                sentences.setdefault(index, sentence)
        else:  # the sentences cannot be told apart again: keep the passage whole
            pieces.append(passage.text)
    ordered = [sentences[i] for i in sorted(sentences)]
    return " ".join([*ordered, *pieces])

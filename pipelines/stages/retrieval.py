"""Retrieval stage: run a query against the corpus or the web, add what it finds to the pool."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pipelines.core.domain import Evidence
from pipelines.core.errors import BackendUnavailableError, ModelOutputError, ToolUnavailableError
from pipelines.core.events import (
    EvidenceRetrieved,
    QueryIssued,
    StageCompleted,
    StageFailed,
    StageStarted,
    WebResultsFiltered,
    WebSearchUnavailable,
)
from pipelines.core.personas import HUMAN_CHECKER
from pipelines.run.context import RunContext
from pipelines.run.tools.corpus_index import Hit
from pipelines.run.tools.web import filtered, source_policy
from pipelines.stages.query_formulation import formulate_queries, same_query
from pipelines.stages.rerank import RERANK_DEPTH, rerank_by_model, rerank_by_sentences

Tool = Literal["corpus", "web"]


async def retrieve(
    ctx: RunContext,
    *,
    agent: str,
    round: int,
    query: str,
    tool: Tool,
    k: int,
    rewritten: bool = False,
    fallback_to_corpus: bool = False,
    extra_queries: Sequence[str] = (),
    with_rewrites: bool = False,
) -> list[Evidence]:
    """Search with ``tool`` and return the items found, each added to the run's pool once.

    Corpus search uses the run's search mode (hybrid by default) and rerank;
    ``extra_queries`` (a checker's additions) are searched together with ``query`` and fused.
    ``with_rewrites`` marks a search for the claim itself: the run's model-written rewrites
    of the claim (``retrieval.rewrites`` of them) are then searched too, each keeping its own
    top ``k``. When the web is unavailable a WebSearchUnavailable event says so; with
    ``fallback_to_corpus`` the same query then goes to the corpus instead.
    """

    async def search(text: str, *, is_rewrite: bool, extra: Sequence[str] = ()) -> list[Evidence]:
        # One query: the claim's own and each of its rewrites differ only in these arguments.
        ctx.emit(QueryIssued(agent=agent, round=round, query=text, tool=tool, rewritten=is_rewrite))
        if tool == "web":
            try:
                return await _search_web(ctx, agent=agent, round=round, query=text, k=k)
            except ToolUnavailableError as exc:
                fallback = "corpus search" if fallback_to_corpus else ""
                ctx.emit(WebSearchUnavailable(reason=str(exc), fallback=fallback, agent=agent, round=round))
                if not fallback_to_corpus:
                    return []
        return await _search_corpus(ctx, agent=agent, round=round, query=text, k=k, extra_queries=extra)

    found = await search(query, is_rewrite=rewritten, extra=extra_queries)
    if with_rewrites:
        for rewrite in await claim_rewrites(ctx):
            if same_query(rewrite, query):
                continue
            more = await search(rewrite, is_rewrite=True)
            found += [e for e in more if all(e.id != f.id for f in found)]
    return found


async def retrieve_for_claim(ctx: RunContext, *, agent: str, corpus_k: int, web_k: int) -> list[Evidence]:
    """The claim itself (and its rewrites) searched before any debate: ``corpus_k`` passages, then ``web_k`` web results
    when the run searches the web; the pool some protocols share among all their agents.

    Step mode pauses before this first search (round 0): the checker may rewrite the query
    or add their own. A stop there is not taken: nothing has been argued yet.
    """
    review = await ctx.review(0, {agent: ctx.claim.text[:300]})
    query = review.queries.get(agent, "").strip() or ctx.claim.text
    found: list[Evidence] = []
    if corpus_k:
        found += await retrieve(ctx, agent=agent, round=0, query=query, tool="corpus", k=corpus_k, with_rewrites=True)
        for extra in review.extra_queries:
            found += await retrieve(ctx, agent=HUMAN_CHECKER, round=0, query=extra, tool="corpus", k=corpus_k)
    if ctx.config.retrieval.web_search and web_k > 0:
        found += await retrieve(ctx, agent=agent, round=0, query=query, tool="web", k=web_k, with_rewrites=True)
    return found


async def claim_rewrites(ctx: RunContext, n: int | None = None) -> list[str]:
    """The claim rewritten into ``n`` (default ``retrieval.rewrites``) search queries by the debater model, once per run.

    Agents that search at the same time share the one call. A model that gives nothing
    usable leaves no rewrites (a StageFailed event says why): the claim is still searched.
    """
    n = ctx.config.retrieval.rewrites if n is None else n
    if n <= 0:
        return []
    written = ctx.state.get(Rewrites) or ctx.state.keep(Rewrites(asyncio.ensure_future(_write_rewrites(ctx, n))))
    return list(await asyncio.shield(written.future))


@dataclass(frozen=True)
class Rewrites:
    """The claim's rewrites, written once per run (the run's state holds them)."""

    future: asyncio.Future[list[str]]


async def _write_rewrites(ctx: RunContext, n: int) -> list[str]:
    stage = "query rewrites"
    ctx.emit(StageStarted(stage=stage, detail=f"the model rewrites the claim into {n} search quer{'y' if n == 1 else 'ies'}"))

    def failed(reason: str) -> None:
        ctx.emit(StageFailed(stage=stage, reason=reason))

    try:
        queries = await formulate_queries(ctx.llm("debater"), ctx.claim.text, n=n, on_failure=failed)
    except BackendUnavailableError as exc:
        failed(f"{exc}; searching with the claim itself")
        return []
    rewrites = queries[1:]  # formulate_queries puts the claim first and drops any query the same as one before
    ctx.emit(StageCompleted(stage=stage, detail="; ".join(rewrites) if rewrites else "none usable"))
    return rewrites


def exhibits_as_shared_evidence(ctx: RunContext, count: int, *, stage: str, shared_by: str) -> list[Evidence] | None:
    """A grounded debate's shared evidence: desk's first ``count`` exhibits, ranked (None when the debate is not grounded)."""
    if not ctx.exhibits:
        return None
    shared = ctx.exhibits[:count]
    ctx.emit(StageCompleted(stage=stage, detail=f"{len(shared)} of desk's exhibits, ranked, shared by {shared_by}"))
    return shared


async def search_corpus_hits(ctx: RunContext, query: str, k: int, extra_queries: Sequence[str] = ()) -> list[Hit]:
    """The run's corpus search: its mode, then its rerank of the fused top 20 (falling back to the fused order)."""
    cfg = ctx.config.retrieval
    queries = [query, *extra_queries] if extra_queries else query
    depth = max(k, RERANK_DEPTH) if cfg.rerank != "none" else k
    hits = await asyncio.to_thread(ctx.tools.index.search, ctx.config.corpus, queries, depth, cfg.mode)
    if cfg.rerank == "sentences":
        hits = await asyncio.to_thread(rerank_by_sentences, ctx.tools.embedder, query, hits)
    elif cfg.rerank == "judge":
        try:
            hits = await rerank_by_model(ctx.llm("judge"), ctx.claim.text, hits)
        except (ModelOutputError, BackendUnavailableError) as exc:  # a rerank is an improvement, never a reason to stop
            ctx.emit(StageFailed(stage="rerank", reason=f"{exc}; keeping the fused order"))
    return hits[:k]


async def _search_corpus(
    ctx: RunContext, *, agent: str, round: int, query: str, k: int, extra_queries: Sequence[str] = ()
) -> list[Evidence]:
    hits = await search_corpus_hits(ctx, query, k, extra_queries)
    return [
        _add(
            ctx,
            agent,
            round,
            query,
            key=f"corpus:{hit.passage.id}",
            source="corpus",
            text=hit.passage.text,
            title=hit.passage.title,
            url=hit.passage.url,
            corpus=ctx.config.corpus,
            doc_id=hit.passage.doc_id,
            passage_index=hit.passage.index,
            sentence_indices=hit.passage.sentence_indices,
            retrieval_score=hit.score,
            scores=hit.scores,
        )
        for hit in hits
    ]


async def _search_web(ctx: RunContext, *, agent: str, round: int, query: str, k: int) -> list[Evidence]:
    # The run's source policy applies here whatever web tool the context holds: a refused result never becomes evidence.
    policy = source_policy(ctx.config.retrieval)
    results, refused = await asyncio.to_thread(filtered(ctx.tools.web, policy).search_reporting, query, k)
    if refused:
        ctx.emit(
            WebResultsFiltered(
                agent=agent,
                round=round,
                query=query,
                kept=len(results),
                filtered=len(refused),
                policy=policy.describe(),
                reasons=tuple(refused),
            )
        )
    return [
        _add(
            ctx,
            agent,
            round,
            query,
            key=f"web:{r.url}",
            source="web",
            text=r.snippet,
            title=r.title,
            url=r.url,
            retrieval_score=round_score(1.0 / (rank + 1)),
            scores={"rank": float(rank + 1)},
        )
        for rank, r in enumerate(results)
    ]


def round_score(value: float) -> float:
    return round(value, 4)


def _add(ctx: RunContext, agent: str, round: int, query: str, *, key: str, **found: Any) -> Evidence:
    """The item ``found`` for ``query`` as the run's evidence, or the item already in the pool under ``key``."""
    # The same passage found twice keeps its first id, so citations stay stable across rounds.
    for existing in ctx.pool.values():
        if _key_of(existing) == key:
            return existing
    evidence = Evidence(id=ctx.next_evidence_id(key), query=query, round=round, found_by=agent, **found)
    ctx.pool[evidence.id] = evidence
    ctx.emit(EvidenceRetrieved(agent=agent, round=round, evidence=evidence))
    return evidence


def evidence_key(e: Evidence) -> str:
    """What makes two retrieved items the same item (a web page's URL, a corpus passage's id)."""
    return _key_of(e)


def _key_of(e: Evidence) -> str:
    if e.source == "web":
        return f"web:{e.url}"
    return f"corpus:{e.doc_id}#p{e.passage_index}"


def format_evidence(items: list[Evidence], max_chars: int = 700) -> str:
    """Evidence as prompts show it: one ``[E1] title: text`` line per item."""
    if not items:
        return "(no evidence retrieved)"
    lines = []
    for e in items:
        text = " ".join(e.text.split())
        if len(text) > max_chars:
            text = text[: max_chars - 3] + "..."
        title = " ".join(e.title.split())
        lines.append(f"[{e.id}] {title}: {text}" if title else f"[{e.id}] {text}")
    return "\n".join(lines)

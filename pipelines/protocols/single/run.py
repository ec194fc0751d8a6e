"""`single`: one agent writes a query, retrieves, reasons and labels. The baseline for every protocol."""

from __future__ import annotations

from pipelines.core.domain import Evidence, Verdict
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import StageCompleted, StageFailed, StageStarted
from pipelines.core.personas import HUMAN_CHECKER
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.belief import read_belief
from pipelines.stages.retrieval import format_evidence, retrieve
from pipelines.stages.schemas import SearchQueries

AGENT = "Analyst"  # not "Checker": that is the person at the desk (pipelines.core.personas.HUMAN_CHECKER)


async def _search(ctx: RunContext, searches: list[tuple[str, str]], found: dict[str, Evidence]) -> None:
    cfg = ctx.config
    for agent, query in searches:
        for e in await retrieve(ctx, agent=agent, round=1, query=query, tool="corpus", k=cfg.retrieval.top_k):
            found[e.id] = e
        if cfg.retrieval.web_search:
            for e in await retrieve(ctx, agent=agent, round=1, query=query, tool="web", k=cfg.retrieval.web_top_k):
                found[e.id] = e


async def write_queries(ctx: RunContext, n: int, role: str = "debater") -> list[str]:
    """``n`` search queries for the claim; the claim itself when the model gives none usable."""
    ctx.emit(StageStarted(stage="queries", detail=f"writing {n} search quer{'y' if n == 1 else 'ies'}"))
    messages = load_prompt("search_queries").render(claim=ctx.claim.text, n=n)
    try:
        answer = await ctx.llm(role).structured(messages, SearchQueries)
        queries = [q.strip() for q in answer.queries if q.strip()][:n]
    except ModelOutputError as exc:
        ctx.emit(StageFailed(stage="queries", reason=f"{exc}; searching with the claim itself"))
        queries = []
    queries = queries or [ctx.claim.text[:300]]
    ctx.emit(StageCompleted(stage="queries", detail="; ".join(queries)))
    return queries


async def run_single(ctx: RunContext) -> Verdict:
    cfg = ctx.config
    queries = await write_queries(ctx, cfg.single.queries)
    # Step mode: the checker sees the planned queries before the search (round 0), then the evidence before the answer (round 1).
    planned = {AGENT if len(queries) == 1 else f"{AGENT} {i + 1}": q for i, q in enumerate(queries)}
    review = await ctx.review(0, planned)
    searches = [(AGENT, review.queries.get(key, q)) for key, q in planned.items()] + [(HUMAN_CHECKER, q) for q in review.extra_queries]
    found: dict[str, Evidence] = {}
    if not review.stop:
        ctx.emit(StageStarted(stage="retrieval", detail="searching the corpus" + (" and the web" if cfg.retrieval.web_search else "")))
        await _search(ctx, searches, found)
        ctx.emit(StageCompleted(stage="retrieval", detail=f"{len(found)} evidence items"))
        review = await ctx.review(1, {})
        if review.extra_queries:
            await _search(ctx, [(HUMAN_CHECKER, q) for q in review.extra_queries], found)
    queries = [q for _, q in searches]
    for e in ctx.pool.values():  # evidence the checker pasted
        if e.source == "user":
            found.setdefault(e.id, e)
    found = {e.id: e for e in ctx.usable(list(found.values()))}

    ctx.emit(StageStarted(stage="answer", detail="reasoning over the evidence"))
    messages = load_prompt("single_answer", __package__).render(claim=ctx.claim.text, evidence=format_evidence(list(found.values())))
    turn = await stream_turn(ctx, agent=AGENT, round=1, messages=messages, query=queries[0] if queries else None)
    ctx.emit(StageCompleted(stage="answer"))
    await read_belief(ctx, round=1, turns=[turn], evidence=list(found.values()), what="at the end")

    label = turn.label or "NOT ENOUGH INFO"
    return Verdict(
        label=label,
        rationale=turn.text,
        cited=turn.cited,
        decided_by="agent",
        stop_reason="single agent answer" if turn.label else "the agent gave no label line; recorded as NOT ENOUGH INFO",
    )

"""`madke`: multi-agent debate over one shared knowledge pool (MADKE).

1. One evidence pool before the debate: ``madke.corpus_k`` corpus passages (10) and
   ``madke.web_k`` web results (5) for the claim; offline, the debate goes on without the web.
2. Each turn, each debater first picks at most ``madke.max_picks`` (3) pool items by number,
   or says none helps (adaptive knowledge selection), then answers; from round 2 it sees its
   own and the other debater's previous answers.
3. After each round a judge answers whether the debaters agree and are consistent; if so the
   debate stops.
4. A summarizer writes the final answer and label.

Every call opens with the same block (``shared_context``: the pool, the claim, the debate so far),
its own instructions after it, so the server's prompt cache reads the pool once a debate and each
turn once. A debater sees every earlier round of both sides there (MADKE shows the previous one);
its picks are named in its instructions, and it is asked to argue from them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from pipelines.core.domain import Evidence, Turn, Verdict
from pipelines.core.events import RoundStarted, StageCompleted, StageStarted
from pipelines.core.personas import MADKE_DEBATERS, Persona
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.agreement import check_agreement
from pipelines.stages.argument import stream_turn
from pipelines.stages.belief import read_belief
from pipelines.stages.debate_history import format_history
from pipelines.stages.evidence_selection import select_evidence
from pipelines.stages.judge import verdict_from_ruling
from pipelines.stages.retrieval import exhibits_as_shared_evidence, format_evidence, retrieve_for_claim
from pipelines.stages.summarizer import summarize_debate

POOL = "Knowledge pool"
NONE_PICKED = "You picked no evidence this turn: argue from what you know, and say so."


async def run_madke(ctx: RunContext) -> Verdict:
    cfg = ctx.config.madke
    pool = await _build_pool(ctx)
    history: list[Turn] = []
    used: dict[str, Evidence] = {}
    stop_reason = f"no agreement after {cfg.max_rounds} round{'s' if cfg.max_rounds != 1 else ''}; the summarizer ruled"
    for number in range(1, cfg.max_rounds + 1):
        ctx.emit(RoundStarted(round=number))
        ctx.emit(StageStarted(stage="debate", detail=f"round {number}: each debater picks evidence, then answers"))
        before = shared_context(ctx, pool, history)
        results = await asyncio.gather(*(_turn(ctx, role, number, pool, before) for role in MADKE_DEBATERS))
        turns = [turn for turn, _ in results]
        for _, picks in results:
            used.update((e.id, e) for e in picks)
        history.extend(turns)
        ctx.emit(StageCompleted(stage="debate", detail=" · ".join(f"{t.agent}: {t.label or 'no label'}" for t in turns)))
        await read_belief(ctx, round=number, turns=history, evidence=pool, what=f"after round {number}")
        ctx.emit(StageStarted(stage="agreement check", detail=f"after round {number}"))
        check = await check_agreement(ctx, round=number, shared=shared_context(ctx, pool, history))
        ctx.emit(StageCompleted(stage="agreement check", detail="settled" if check and check.settled else "not settled"))
        if check is not None and check.settled:
            stop_reason = f"the judge found the debaters in agreement and consistent after round {number}; the summarizer wrote the answer"
            break
        if number < cfg.max_rounds:
            review = await ctx.review(number, {})
            if review.stop:
                stop_reason = f"the checker stopped the debate after round {number}; the summarizer wrote the answer"
                break
    ctx.emit(StageStarted(stage="summary", detail="the summarizer writes the final answer"))
    summary = await summarize_debate(
        ctx, shared=shared_context(ctx, pool, history), picked=list(used.values()), round=max(t.round for t in history)
    )
    ctx.emit(StageCompleted(stage="summary", detail=summary.label or "no label"))
    return verdict_from_ruling(summary, decided_by="summarizer", stop_reason=stop_reason)


async def _build_pool(ctx: RunContext) -> list[Evidence]:
    cfg = ctx.config
    grounded = exhibits_as_shared_evidence(ctx, cfg.madke.corpus_k + cfg.madke.web_k, stage="knowledge pool", shared_by="both debaters")
    if grounded is not None:  # a grounded debate (belief.grounded): desk's exhibits, ranked, are the pool
        return grounded
    use_web = cfg.retrieval.web_search and cfg.madke.web_k > 0
    ctx.emit(
        StageStarted(
            stage="knowledge pool",
            detail=f"{cfg.madke.corpus_k} corpus passages" + (f" and {cfg.madke.web_k} web results" if use_web else "") + " for the claim",
        )
    )
    pool = await retrieve_for_claim(ctx, agent=POOL, corpus_k=cfg.madke.corpus_k, web_k=cfg.madke.web_k)
    ctx.emit(StageCompleted(stage="knowledge pool", detail=f"{len(pool)} items shared by both debaters"))
    return pool


async def _turn(
    ctx: RunContext, role: Persona, number: int, pool: Sequence[Evidence], shared: Mapping[str, str]
) -> tuple[Turn, list[Evidence]]:
    picks = await select_evidence(ctx, role=role, round=number, pool=pool, max_picks=ctx.config.madke.max_picks, shared=shared)
    picked = (
        f"You picked {', '.join(e.id for e in picks)} from the pool above: argue from them and what you know." if picks else NONE_PICKED
    )
    messages = load_prompt("madke_turn", __package__).render(agent=role.name, brief=role.brief, picked=picked, round=number, **shared)
    return await stream_turn(ctx, agent=role.name, round=number, messages=messages), picks


def shared_context(ctx: RunContext, pool: Sequence[Evidence], history: Sequence[Turn]) -> dict[str, str]:
    """What every madke prompt opens with, word for word: the pool (less what the checker struck), the claim, the debate so far.

    The debaters' picks and answers, the agreement judge and the summarizer read the same block and
    their own instructions after it, so llama.cpp's prompt cache reads the pool once a debate and each
    turn once, however many calls follow it.
    """
    return {"pool": format_evidence(ctx.usable(list(pool))), "claim": ctx.claim.text, "history": format_history(history)}

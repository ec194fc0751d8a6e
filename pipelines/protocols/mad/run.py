"""`mad`: the plain debate baseline. Two debaters argue from what they know (no retrieval), a judge rules.

The yardstick for how much evidence adds: the same debate-and-judge shape as the other
protocols, without any tool.
"""

from __future__ import annotations

import asyncio

from pipelines.core.domain import Turn, Verdict
from pipelines.core.events import RoundStarted, StageCompleted, StageStarted
from pipelines.core.personas import MAD_DEBATERS, Persona
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.belief import read_belief
from pipelines.stages.debate_history import NO_HISTORY, latest_by_agent
from pipelines.stages.judge import judge_from_history, verdict_from_ruling


async def run_mad(ctx: RunContext) -> Verdict:
    cfg = ctx.config.mad
    history: list[Turn] = []
    stop_reason = f"the judge ruled after {cfg.rounds} round{'s' if cfg.rounds != 1 else ''}"
    for number in range(1, cfg.rounds + 1):
        ctx.emit(RoundStarted(round=number))
        ctx.emit(StageStarted(stage="debate", detail=f"round {number}: both debaters answer"))
        latest = latest_by_agent(history)
        turns = await asyncio.gather(*(_argue(ctx, role, number, latest) for role in MAD_DEBATERS))
        history.extend(turns)
        labels = {t.label for t in turns}
        ctx.emit(StageCompleted(stage="debate", detail=" · ".join(f"{t.agent}: {t.label or 'no label'}" for t in turns)))
        await read_belief(ctx, round=number, turns=history, evidence=[], what=f"after round {number}")
        review = await ctx.review(number, {})
        if review.stop:
            stop_reason = f"the checker stopped the debate after round {number}; the judge ruled"
            break
        if cfg.stop_on_agreement and len(labels) == 1 and None not in labels and number < cfg.rounds:
            stop_reason = f"both debaters agreed in round {number}; the judge ruled"
            break
    ctx.emit(StageStarted(stage="judge", detail="ruling on the debate"))
    ruling = await judge_from_history(ctx, turns=history, evidence=None, round=0)  # round 0: the ruling, after the rounds
    ctx.emit(StageCompleted(stage="judge", detail=ruling.label or "no label"))
    return verdict_from_ruling(ruling, decided_by="judge", stop_reason=stop_reason)


async def _argue(ctx: RunContext, role: Persona, number: int, latest: dict[str, Turn]) -> Turn:
    own = latest.get(role.name)
    other = next((t for agent, t in latest.items() if agent != role.name), None)
    messages = load_prompt("mad_turn", __package__).render(
        agent=role.name,
        brief=role.brief,
        claim=ctx.claim.text,
        own=own.text if own else NO_HISTORY,
        other=other.text if other else NO_HISTORY,
        round=number,
    )
    return await stream_turn(ctx, agent=role.name, round=number, messages=messages)

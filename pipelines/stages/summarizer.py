"""A summarizer that writes a debate's outcome and final label (MADKE's last step)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipelines.core.domain import Evidence, Turn
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn


async def summarize_debate(
    ctx: RunContext, *, shared: Mapping[str, str], picked: Sequence[Evidence], round: int, agent: str = "Summarizer"
) -> Turn:
    """A streamed summary of the debate, ending in a label line.

    ``shared`` is what the debate's every prompt opens with (the pool, the claim, the whole debate); ``picked`` the
    items the debaters chose, named in the instructions after it.
    """
    ids = [e.id for e in ctx.usable(list(picked))]
    named = f"the debaters picked {', '.join(ids)}" if ids else "the debaters picked no item"
    messages = load_prompt("debate_summary").render(picked=named, **shared)
    return await stream_turn(ctx, agent=agent, round=round, messages=messages, role="judge")

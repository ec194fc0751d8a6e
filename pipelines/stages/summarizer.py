"""A summarizer that writes a debate's outcome and final label (MADKE's last step)."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.core.domain import Evidence, Turn
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.debate_history import format_history
from pipelines.stages.retrieval import format_evidence


async def summarize_debate(
    ctx: RunContext, *, turns: Sequence[Turn], evidence: Sequence[Evidence], round: int, agent: str = "Summarizer"
) -> Turn:
    """A streamed summary of ``turns`` over the ``evidence`` they used, ending in a label line."""
    messages = load_prompt("debate_summary").render(
        claim=ctx.claim.text, evidence=format_evidence(ctx.usable(list(evidence))), history=format_history(turns)
    )
    return await stream_turn(ctx, agent=agent, round=round, messages=messages, role="judge")

"""A judge that rules from a debate's history: a streamed ruling ending in a label line."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.core.domain import Evidence, Turn, Verdict
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.debate_history import format_history
from pipelines.stages.retrieval import format_evidence

NO_EVIDENCE = "(none: the debaters argued from what they know)"


async def judge_from_history(
    ctx: RunContext,
    *,
    turns: Sequence[Turn],
    evidence: Sequence[Evidence] | None,
    round: int,
    agent: str = "Judge",
    stage_names: dict[int, str] | None = None,
) -> Turn:
    """The judge's streamed ruling over ``turns`` (and ``evidence``; None when the debate had none)."""
    shown = format_evidence(ctx.usable(list(evidence))) if evidence is not None else NO_EVIDENCE
    messages = load_prompt("judge_history").render(
        claim=ctx.claim.text, evidence=shown, history=format_history(turns, stage_names=stage_names)
    )
    return await stream_turn(ctx, agent=agent, round=round, messages=messages, role="judge")


def verdict_from_ruling(ruling: Turn, *, decided_by: str, stop_reason: str, fallback_label: str = "NOT ENOUGH INFO") -> Verdict:
    """The verdict a streamed ruling gives; a ruling without a label line is recorded as ``fallback_label`` and says so."""
    if ruling.label is None:
        stop_reason += f"; the {decided_by} gave no label line, recorded as {fallback_label}"
    return Verdict(
        label=ruling.label or fallback_label,
        rationale=ruling.text,
        cited=ruling.cited,
        decided_by=decided_by,
        stop_reason=stop_reason,
    )

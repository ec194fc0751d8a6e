"""Adaptive knowledge selection: a debater picks the pool items it will use this turn, or none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from pipelines.core.domain import Evidence
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import EvidenceSelected, StageFailed
from pipelines.core.personas import Persona
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext


class EvidenceSelection(BaseModel):
    """A debater's picks from the shared pool, by number (E3 is 3)."""

    items: list[int] = Field(default_factory=list, max_length=10, description="Numbers of the picked items, most useful first.")
    none_found: bool = Field(default=False, description="True when no item in the pool helps.")
    reason: str = Field(default="", description="One sentence: why these items.")


async def select_evidence(
    ctx: RunContext, *, role: Persona, round: int, pool: Sequence[Evidence], max_picks: int, shared: Mapping[str, str]
) -> list[Evidence]:
    """The items ``role`` picks (at most ``max_picks``), emitted as EvidenceSelected; unknown numbers are dropped.

    ``shared`` is what the debate's every prompt opens with (the pool as shown, the claim, the debate so far:
    madke's ``shared_context``); the question comes after it, so the server reads the pool once a debate.
    """
    usable = ctx.usable(list(pool))
    messages = load_prompt("evidence_selection").render(agent=role.name, max_picks=max_picks, **shared)
    try:
        selection = await ctx.llm("debater").structured(messages, EvidenceSelection)
    except ModelOutputError as exc:
        ctx.emit(StageFailed(stage="evidence selection", reason=f"{role.name}: {exc}; it argues without picked evidence"))
        ctx.emit(EvidenceSelected(agent=role.name, round=round, none_found=True, reason="no valid selection"))
        return []
    by_id = {e.id: e for e in usable}
    picked = list(dict.fromkeys(f"E{n}" for n in selection.items if f"E{n}" in by_id))[:max_picks]
    none_found = selection.none_found or not picked
    ctx.emit(
        EvidenceSelected(
            agent=role.name,
            round=round,
            evidence_ids=tuple(picked) if not selection.none_found else (),
            none_found=none_found,
            reason=selection.reason,
        )
    )
    return [] if selection.none_found else [by_id[i] for i in picked]

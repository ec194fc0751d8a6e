"""An agreement check after a round: do the debaters agree, and is each consistent? (stop if both)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from pipelines.core.errors import ModelOutputError
from pipelines.core.events import AgreementChecked, StageFailed
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext


class AgreementCheck(BaseModel):
    """A judge's answer after a round."""

    agree: bool = Field(description="The debaters reach the same conclusion about the claim.")
    consistent: bool = Field(description="Each debater's latest answer is consistent with its reasoning and evidence.")
    reason: str = Field(default="", description="One sentence: why.")

    @property
    def settled(self) -> bool:
        return self.agree and self.consistent


async def check_agreement(ctx: RunContext, *, round: int, shared: Mapping[str, str]) -> AgreementCheck | None:
    """The judge's check on the debaters' round ``round`` turns, emitted as AgreementChecked; None (and a StageFailed) if it gave no valid answer.

    ``shared`` is what the debate's every prompt opens with, the round's turns in its history; the question comes after it.
    """
    messages = load_prompt("agreement_check").render(round=round, **shared)
    try:
        check = await ctx.llm("judge").structured(messages, AgreementCheck)
    except ModelOutputError as exc:
        ctx.emit(StageFailed(stage="agreement check", reason=f"{exc}; the debate goes on"))
        return None
    ctx.emit(AgreementChecked(round=round, agree=check.agree, consistent=check.consistent, reason=check.reason))
    return check

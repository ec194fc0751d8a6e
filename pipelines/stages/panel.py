"""Judicial panel stage: several judges (each on its own model) score and vote at once; the majority rules.

Each judge scores evidence strength, argument validity and source reliability (0-10) and
votes SUPPORTED / NOT SUPPORTED / INCONCLUSIVE with reasons. A judge whose answer stays
malformed after the client's retries is a StageFailed event and the panel decides with
the judges that answered. ``majority_vote`` is pure: a label with more votes than any
other wins; otherwise the tie-break decides ("INCONCLUSIVE", or the vote of the judge
with the highest mean quality score).
"""

from __future__ import annotations

import asyncio
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from pipelines.core.domain import Vote
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import StageFailed, VoteCast
from pipelines.run.context import RunContext
from pipelines.run.llm.client import LLM

PanelLabel = Literal["SUPPORTED", "NOT SUPPORTED", "INCONCLUSIVE"]
PANEL_LABELS: tuple[PanelLabel, ...] = ("SUPPORTED", "NOT SUPPORTED", "INCONCLUSIVE")
TieBreak = Literal["INCONCLUSIVE", "strongest judge"]
QUALITY_KEYS = ("evidence_strength", "argument_validity", "source_reliability")


class PanelJudgment(BaseModel):
    """What each panel judge must return."""

    evidence_strength: float = Field(ge=0, le=10, description="How strong the admitted evidence is (0-10).")
    argument_validity: float = Field(ge=0, le=10, description="How valid the winning arguments are (0-10).")
    source_reliability: float = Field(ge=0, le=10, description="How reliable the sources are (0-10).")
    vote: PanelLabel
    reasoning: str = Field(description="Two or three sentences: why this vote.")


@dataclass(frozen=True)
class JudgeSeat:
    """One judge on the panel: a name, a judicial outlook (prompt text) and the model it runs on."""

    name: str
    outlook: str
    llm: LLM
    model: str


@dataclass(frozen=True)
class Ballot:
    judge: str
    model: str
    judgment: PanelJudgment

    @property
    def mean_quality(self) -> float:
        """The mean of the judge's three quality scores (0-10)."""
        return sum(getattr(self.judgment, k) for k in QUALITY_KEYS) / len(QUALITY_KEYS)


@dataclass(frozen=True)
class PanelOutcome:
    """The panel's decision: the label, the vote counts, and whether a tie-break decided."""

    label: PanelLabel
    counts: dict[str, int]
    winning_votes: int
    total_votes: int
    tie_break: str = ""  # empty when a majority decided


def majority_vote(ballots: Sequence[Ballot], tie_break: TieBreak = "INCONCLUSIVE") -> PanelOutcome:
    """The label with more votes than any other; a split goes to ``tie_break``. Needs at least one ballot."""
    if not ballots:
        raise ValueError("a panel decision needs at least one ballot")
    counts = Counter(b.judgment.vote for b in ballots)
    ranked = counts.most_common()
    full_counts: dict[str, int] = {label: counts.get(label, 0) for label in PANEL_LABELS}
    if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
        label = ranked[0][0]
        return PanelOutcome(label=label, counts=full_counts, winning_votes=ranked[0][1], total_votes=len(ballots))
    if tie_break == "strongest judge":
        tied = {lab for lab, n in ranked if n == ranked[0][1]}
        strongest = max((b for b in ballots if b.judgment.vote in tied), key=lambda b: b.mean_quality)
        label = strongest.judgment.vote
        rule = f"split panel: followed {strongest.judge}, the judge with the highest mean quality score ({strongest.mean_quality:.2f})"
    else:
        label = "INCONCLUSIVE"
        rule = "split panel: no majority, ruled INCONCLUSIVE"
    return PanelOutcome(label=label, counts=full_counts, winning_votes=counts.get(label, 0), total_votes=len(ballots), tie_break=rule)


async def convene_panel(ctx: RunContext, seats: Sequence[JudgeSeat], messages_for: dict[str, list[BaseMessage]]) -> list[Ballot]:
    """Every judge rules at once; returns the ballots of the judges that answered (VoteCast each, StageFailed the rest)."""

    async def one(seat: JudgeSeat) -> Ballot | None:
        try:
            judgment = await seat.llm.structured(messages_for[seat.name], PanelJudgment)
        except ModelOutputError as exc:
            ctx.emit(StageFailed(stage=f"panel: {seat.name}", reason=f"{exc}; the panel decides without this judge"))
            return None
        ballot = Ballot(judge=seat.name, model=seat.model, judgment=judgment)
        ctx.emit(
            VoteCast(
                vote=Vote(
                    judge=seat.name,
                    label=judgment.vote,
                    reason=textwrap.shorten(judgment.reasoning, 1200, placeholder=" …"),  # a cut shows as one
                    model=seat.model,
                    scores={k: float(getattr(judgment, k)) for k in QUALITY_KEYS},
                )
            )
        )
        return ballot

    results = await asyncio.gather(*(one(seat) for seat in seats))
    return [b for b in results if b is not None]

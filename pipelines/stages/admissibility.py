"""Admissibility stage: each exhibit's relevance r and credibility c; w = r x c decides.

admitted if w > admit_above (0.5), discarded if w <= discard_at_or_below (0.1), disputed in
between. The formulas are pure functions. Two ways to come by r and c:

- ``assess_admissibility``, the paper's: the judge model rates r and c of each item (one call
  per item, run concurrently). A judge that gives no valid rating for an item is a StageFailed
  event; that item stays unassessed and out of the arguments.
- ``assess_from_reading``: r from desk's stance reading of the item, the one a weighed belief
  keeps (stages/weighing.py), read once for both; c is not rated. On the embedded model the
  judge's rating was 0 or 0.5 for every exhibit and ranked the deciding one at chance (AUC
  0.53), desk's reading at 0.80 (docs/measurements/2026-12-05-court-reading.md).

Both emit one AdmissibilityAssessed event per item.
"""

from __future__ import annotations

import asyncio
import textwrap

from pydantic import BaseModel, Field

from pipelines.core.domain import Admissibility, AdmissibilityStatus, Evidence
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import AdmissibilityAssessed, StageFailed
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.exhibit_reading import exhibit_settings
from pipelines.stages.retrieval import format_evidence
from pipelines.stages.stance import read_desk_stance
from pipelines.stages.weighing import Weighing

ADMIT_ABOVE = 0.5
DISCARD_AT_OR_BELOW = 0.1
FROM_READING = "relevance from desk's reading"  # how the reason of a ruling read from desk's stance reading starts


class AdmissibilityRating(BaseModel):
    """What the judge must return for one exhibit."""

    relevance: float = Field(ge=0, le=1, description="How directly the exhibit bears on the claim (0-1).")
    credibility: float = Field(ge=0, le=1, description="How trustworthy its source and content are (0-1).")
    reason: str = Field(description="One line: why.")


def admissibility_weight(relevance: float, credibility: float) -> float:
    """w = r x c."""
    return relevance * credibility


def admissibility_status(
    weight: float, admit_above: float = ADMIT_ABOVE, discard_at_or_below: float = DISCARD_AT_OR_BELOW
) -> AdmissibilityStatus:
    """admitted if w > admit_above, discarded if w <= discard_at_or_below, else disputed (w rounded to 9 places first)."""
    weight = round(weight, 9)
    if weight > admit_above:
        return "admitted"
    if weight <= discard_at_or_below:
        return "discarded"
    return "disputed"


def rule_admissibility(
    relevance: float, credibility: float, reason: str, admit_above: float = ADMIT_ABOVE, discard_at_or_below: float = DISCARD_AT_OR_BELOW
) -> Admissibility:
    """The full ruling for one rating: weight, status and the judge's reason."""
    weight = admissibility_weight(relevance, credibility)
    return Admissibility(
        relevance=relevance,
        credibility=credibility,
        weight=round(weight, 6),
        status=admissibility_status(weight, admit_above, discard_at_or_below),
        reason=textwrap.shorten(reason, 300, placeholder=" …"),
    )


def ranked_record(items: list[Evidence]) -> list[Evidence]:
    """Admitted exhibits by w (highest first), then disputed ones by w; discarded and unassessed are left out."""
    order = {"admitted": 0, "disputed": 1}
    kept = [e for e in items if e.admissibility is not None and e.admissibility.status in order]
    return sorted(kept, key=lambda e: (order[e.admissibility.status], -e.admissibility.weight, _id_number(e.id)))  # type: ignore[union-attr]


async def assess_admissibility(
    ctx: RunContext,
    items: list[Evidence],
    *,
    round: int,
    admit_above: float = ADMIT_ABOVE,
    discard_at_or_below: float = DISCARD_AT_OR_BELOW,
    role: str = "judge",
) -> list[Evidence]:
    """Rate every item concurrently; returns the items that got a ruling, with it attached (and updated in ctx.pool)."""

    async def one(item: Evidence) -> Evidence | None:
        messages = load_prompt("admissibility").render(
            claim=ctx.claim.text, source=describe_source(item), evidence=format_evidence([item], max_chars=1200)
        )
        try:
            rating = await ctx.llm(role).structured(messages, AdmissibilityRating)
        except ModelOutputError as exc:
            ctx.emit(StageFailed(stage=f"admissibility of {item.id}", reason=f"{exc}; the exhibit is left out"))
            return None
        ruling = rule_admissibility(rating.relevance, rating.credibility, rating.reason, admit_above, discard_at_or_below)
        ruled = item.model_copy(update={"admissibility": ruling})
        ctx.pool[item.id] = ruled
        ctx.emit(AdmissibilityAssessed(evidence_id=item.id, round=round, admissibility=ruling))
        return ruled

    results = await asyncio.gather(*(one(item) for item in items))
    return [r for r in results if r is not None]


def relevance_of_reading(p_unrelated: float) -> float:
    """r from desk's reading: how much likelier the exhibit addresses the claim than not, 2 x (1 - p(unrelated)) - 1, at least 0.

    On desk's stored readings of 120 Check-COVID train claims (their first 21 exhibits, as a court opens on), the
    paper's thresholds then discard 20% of the other exhibits and 5% of the deciding ones (w <= 0.1: p(unrelated)
    at or above 0.45) and admit 51% of the deciding ones and 11% of the others (w > 0.5: p(unrelated) below 0.25):
    ``bench/admissibility_readings.py --desk-records ... --split train``.
    """
    return round(max(0.0, 1.0 - 2.0 * p_unrelated), 6)


async def assess_from_reading(
    ctx: RunContext,
    weighing: Weighing,
    items: list[Evidence],
    *,
    round: int,
    admit_above: float = ADMIT_ABOVE,
    discard_at_or_below: float = DISCARD_AT_OR_BELOW,
) -> list[Evidence]:
    """Rule every item from desk's reading of it: the weighing's stance where desk (or the belief) read it, else read
    now, as the belief would read it, and kept for the belief. Credibility is not rated (1). An item whose reading
    fails (a malformed answer) is a StageFailed event and stays unassessed, as with the judge's rating."""
    desk = exhibit_settings(ctx.config)
    ruled: list[Evidence] = []
    for item in items:
        stance = weighing.stances.get(item.id)
        if stance is None:
            exhibit = weighing.read_as.get(item.id, item)
            try:
                stance = await read_desk_stance(ctx.llm("judge"), desk, ctx.claim.text, exhibit, opposite=weighing.negation)
            except ModelOutputError as exc:
                ctx.emit(StageFailed(stage=f"admissibility of {item.id}", reason=f"{exc}; the exhibit is left out"))
                continue
            weighing.stances[item.id] = stance
            weighing.read_as[item.id] = exhibit
        relevance = relevance_of_reading(stance.p("UNRELATED"))
        reason = (
            f"{FROM_READING}: p(addresses the claim) {1 - stance.p('UNRELATED'):.2f}, "
            f"p(does not) {stance.p('UNRELATED'):.2f}; credibility not rated"
        )
        ruling = rule_admissibility(relevance, 1.0, reason, admit_above, discard_at_or_below)
        ruled.append(item.model_copy(update={"admissibility": ruling}))
        ctx.pool[item.id] = ruled[-1]
        ctx.emit(AdmissibilityAssessed(evidence_id=item.id, round=round, admissibility=ruling))
    return ruled


def describe_source(item: Evidence) -> str:
    if item.source == "web":
        return f"web page {item.url or item.title}"
    if item.source == "corpus":
        return f"local corpus {item.corpus or ''} document {item.doc_id or ''}".strip()
    return item.source


def _id_number(evidence_id: str) -> int:
    digits = "".join(ch for ch in evidence_id if ch.isdigit())
    return int(digits) if digits else 0

"""Claim decomposition: the (subject, relation, object) triplets a claim asserts, and its topic.

A checker may write the triplets (and topic) themselves; then the model is not asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from pipelines.core.domain import Triplet
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import ClaimDecomposed, StageCompleted, StageFailed, StageStarted
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext


class TripletAnswer(BaseModel):
    subject: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    object: str = ""


class ClaimDecomposition(BaseModel):
    """What the model must return: a topic and one to four triplets."""

    topic: str = Field(min_length=1, description="Two or three words naming what the claim is about.")
    triplets: list[TripletAnswer] = Field(min_length=1, max_length=4)


@dataclass(frozen=True)
class Decomposition:
    topic: str
    triplets: tuple[Triplet, ...]
    source: Literal["model", "checker", "fallback"]

    def entities(self) -> list[str]:
        """Subjects, objects and the topic: what memory matches on."""
        names = [self.topic] + [t.subject for t in self.triplets] + [t.object for t in self.triplets]
        return list(dict.fromkeys(n.strip() for n in names if n.strip()))


def parse_triplets(text: str) -> list[Triplet]:
    """'subject | relation | object; subject | relation | object' (or one per line) as triplets.

    Raises ValueError naming the part that is not a triplet, so the checker can fix it.
    """
    triplets = []
    for part in (p.strip() for chunk in text.splitlines() for p in chunk.split(";")):
        if not part:
            continue
        fields = [f.strip() for f in part.strip("()").split("|")]
        if len(fields) != 3 or not fields[0] or not fields[1]:
            raise ValueError(f"{part!r} is not a triplet: write 'subject | relation | object', triplets separated by ';'")
        triplets.append(Triplet(subject=fields[0], relation=fields[1], object=fields[2]))
    return triplets


async def decompose_claim(ctx: RunContext, *, triplets_text: str = "", topic: str = "") -> Decomposition:
    """The claim's triplets and topic: the checker's when given, else the model's; emitted as ClaimDecomposed."""
    ctx.emit(StageStarted(stage="decomposition", detail="the claim as (subject, relation, object) triplets"))
    given = parse_triplets(triplets_text) if triplets_text.strip() else []
    if given:
        result = Decomposition(topic=topic.strip() or given[0].subject, triplets=tuple(given), source="checker")
    else:
        result = await _ask_model(ctx, topic)
    ctx.emit(ClaimDecomposed(topic=result.topic, triplets=result.triplets, source=result.source))
    ctx.emit(StageCompleted(stage="decomposition", detail="; ".join(str(t) for t in result.triplets)))
    return result


async def _ask_model(ctx: RunContext, topic: str) -> Decomposition:
    messages = load_prompt("claim_decomposition").render(claim=ctx.claim.text)
    try:
        answer = await ctx.llm("debater").structured(messages, ClaimDecomposition)
    except ModelOutputError as exc:
        ctx.emit(StageFailed(stage="decomposition", reason=f"{exc}; the whole claim is used as one fact"))
        return Decomposition(
            topic=topic.strip() or ctx.claim.text[:60],
            triplets=(Triplet(subject=ctx.claim.text, relation="is claimed", object=""),),
            source="fallback",
        )
    triplets = tuple(Triplet(subject=t.subject.strip(), relation=t.relation.strip(), object=t.object.strip()) for t in answer.triplets)
    return Decomposition(topic=topic.strip() or answer.topic.strip(), triplets=triplets, source="model")

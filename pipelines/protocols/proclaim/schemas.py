"""What each courtroom role must return in structured calls (validated with pydantic)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pipelines.stages.panel import PanelLabel


class PremiseList(BaseModel):
    """The claim decomposed into atomic, testable premises."""

    premises: list[str] = Field(min_length=1, max_length=10)


class StanceQuery(BaseModel):
    """A counsel's opening search query, written for its side."""

    query: str


class EvidenceGap(BaseModel):
    """What a counsel still lacks, the query that might find it, and an optional expert request."""

    gap: str = Field(description="The evidential gap, in one line; empty when nothing is missing.")
    query: str = Field(description="A 3-10 word search query aimed at the gap.")
    expert_field: str = Field(default="", description="A field of expertise to call an expert witness from; empty for none.")


class QueryDocket(BaseModel):
    """The presiding judge's refinement of both counsels' queries, and whether the court can deliberate."""

    plaintiff_query: str
    defense_query: str
    ready_to_deliberate: bool
    reason: str


class ExpertRuling(BaseModel):
    granted: bool
    persona: str = Field(description="Who testifies: name and expertise, one line.")
    reason: str


class SelfReflection(BaseModel):
    """A counsel's view of its own last argument; s_ref is computed from the three terms."""

    logic: float = Field(ge=0, le=1, description="How sound the reasoning from the exhibits is.")
    novelty: float = Field(ge=0, le=1, description="How much new evidence or reasoning the argument brought.")
    rebuttal: float = Field(ge=0, le=1, description="How well it answered the opponent.")
    discovery_need: str = Field(description="What evidence to look for next; empty for none.")


class CriticReport(BaseModel):
    plaintiff_score: float = Field(ge=0, le=10)
    defense_score: float = Field(ge=0, le=10)
    resolved: bool = Field(description="True when further rounds would not change the outcome.")
    leaning: PanelLabel
    reason: str


class ConsistencyRating(BaseModel):
    """How consistent the outcome stayed when the counsels swapped sides (0-10)."""

    gamma: float = Field(ge=0, le=10)
    reason: str

"""Pydantic models for what a model must return in structured calls, shared across protocols."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SearchQueries(BaseModel):
    """Search queries written for a claim."""

    queries: list[str] = Field(min_length=1, max_length=5)


class PassageRelevance(BaseModel):
    """How directly one passage bears on a claim."""

    id: str
    relevance: float = Field(ge=0, le=1)


class RerankScores(BaseModel):
    """A model's relevance rating of every candidate passage, in one call."""

    scores: list[PassageRelevance] = Field(min_length=1, max_length=50)

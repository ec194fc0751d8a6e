"""Pydantic models for what a model must return in structured calls, shared across protocols."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SearchQueries(BaseModel):
    """Search queries written for a claim."""

    queries: list[str] = Field(min_length=1, max_length=5)

"""`single`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/config.py)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SingleConfig(BaseModel):
    """The `single` baseline: one agent, one query, one answer."""

    queries: int = Field(default=1, ge=1, le=5, title="Queries", description="How many search queries the agent writes from the claim.")

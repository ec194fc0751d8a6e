"""`single`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/core/config.py)."""

from __future__ import annotations

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings


class SingleConfig(ProtocolSettings):
    """The `single` baseline: one agent, one query, one answer."""

    queries: int = Field(default=1, ge=1, le=5, title="Queries")
    """How many search queries the agent writes from the claim."""

"""`mad`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/core/config.py)."""

from __future__ import annotations

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings


class MadConfig(ProtocolSettings):
    """The `mad` baseline: two debaters argue from what they know (no retrieval), a judge rules."""

    rounds: int = Field(default=3, ge=1, le=6, title="Rounds")
    """How many rounds the two debaters argue before the judge rules."""
    stop_on_agreement: bool = Field(default=False, title="Stop on agreement")
    """End early when both debaters give the same label (the published baseline runs every round)."""

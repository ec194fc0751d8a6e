"""`madke`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/core/config.py)."""

from __future__ import annotations

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings


class MadkeConfig(ProtocolSettings):
    """`madke`: one shared evidence pool, each debater picks from it every turn, a judge checks agreement."""

    corpus_k: int = Field(default=10, ge=0, le=50, title="Corpus passages")
    """Corpus passages retrieved for the claim into the shared pool before the debate."""
    web_k: int = Field(default=5, ge=0, le=20, title="Web results")
    """Web results added to the pool when web search is on; offline the debate goes on without them."""
    max_picks: int = Field(default=3, ge=1, le=10, title="Picks per turn")
    """Most pool items a debater may pick in one turn (it may also say none helps)."""
    max_rounds: int = Field(default=3, ge=1, le=6, title="Rounds")
    """Most debate rounds; the judge may end the debate earlier when the agents agree."""

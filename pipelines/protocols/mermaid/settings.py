"""`mermaid`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/core/config.py)."""

from __future__ import annotations

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings


class MermaidConfig(ProtocolSettings):
    """`mermaid`: triplet decomposition, a ReAct loop over tools, and an evidence memory across claims."""

    max_steps: int = Field(default=5, ge=1, le=10, title="ReAct steps")
    """Most reasoning steps (tool calls or the answer); at the cap an answer is forced."""
    use_memory: bool = Field(default=True, title="Recall memory")
    """Recall evidence kept from earlier claims (by entity match and embedding similarity)."""
    remember: bool = Field(default=True, title="Remember evidence")
    """Keep the evidence this run finds in the memory for later claims."""
    memory_tool: bool = Field(default=True, title="Memory lookup tool")
    """Offer memory lookup as a ReAct tool, besides the recall for the claim at the start."""
    memory_k: int = Field(default=5, ge=1, le=20, title="Memory items")
    """Most memory items recalled for a claim or returned by one memory lookup."""
    memory_similarity: float = Field(default=0.55, ge=0, le=1, title="Memory similarity")
    """Least cosine similarity between the claim and a kept item for it to be recalled without an entity match."""
    memory_entity_similarity: float = Field(default=0.5, ge=0, le=1, title="Memory similarity, entity matched")
    """Least cosine similarity for a kept item matching one of the claim's entities (an entity a whole beat shares matches everything)."""
    triplets: str = Field(default="", title="Triplets (override)")
    """Your own decomposition, e.g. 'masks | reduce | transmission; masks | protect | wearers'; empty lets the model decompose the claim."""
    topic: str = Field(default="", title="Topic (override)")
    """Your own topic for the claim; empty lets the model name it."""

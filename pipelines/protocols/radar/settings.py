"""`radar`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/core/config.py)."""

from __future__ import annotations

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings


class RadarConfig(ProtocolSettings):
    """`radar`: Politician vs Scientist over shared evidence, early stop from label probabilities."""

    top_k: int = Field(default=20, ge=1, le=50, title="Shared passages")
    """How many corpus passages are retrieved once for the claim and shared by all agents."""
    web_results: int = Field(default=0, ge=0, le=20, title="Web results")
    """Web results added to the shared evidence when web search is on (0: corpus only, as published)."""
    tau_s: float = Field(default=-0.15, ge=-1, le=1, title="Stop margin threshold τs")
    """Stop early only if p(STOP) - p(CONTINUE) is at least this."""
    tau_v: float = Field(default=0.7, ge=0, le=1, title="Confidence threshold τv")
    """Stop early only if the round judge's top label probability is at least this."""
    early_stop: bool = Field(default=True, title="Early stop")
    """Run the stop agent and round judge after the opening and the rebuttal."""
    top_logprobs: int = Field(default=10, ge=1, le=20, title="Top tokens")
    """How many alternative tokens per position the model reports when label probabilities are read from logprobs."""
    samples: int = Field(default=5, ge=2, le=20, title="Samples (fallback)")
    """Answers sampled and counted when the backend gives no token probabilities."""
    sample_temperature: float = Field(default=0.8, gt=0, le=2, title="Sampling temperature (fallback)")
    """Temperature of the sampled answers in the fallback."""
    explain_verdict: bool = Field(default=True, title="Judge explains")
    """After the verdict the judge writes a short explanation (one more model call)."""

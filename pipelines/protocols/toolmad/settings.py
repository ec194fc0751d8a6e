"""`toolmad`'s settings: its section of ``RunConfig`` (composed from the protocol registry, see pipelines/core/config.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipelines.protocols.base import ProtocolSettings


class ToolMadConfig(ProtocolSettings):
    """`toolmad`: a RAG debater and a Search debater argue; faithfulness and answer relevance gate an early stop."""

    rounds: int = Field(default=3, ge=1, le=10, title="Rounds (T)")
    """Most debate rounds before the judge rules."""
    rag_top_k: int = Field(default=3, ge=1, le=20, title="RAG passages")
    """Corpus passages the RAG debater retrieves per round."""
    search_top_k: int = Field(default=3, ge=1, le=20, title="Search results")
    """Web results the Search debater retrieves per round (corpus passages when the web is down)."""
    faithfulness_threshold: float = Field(default=0.7, ge=0, le=1, title="F threshold")
    """Faithfulness each answer needs for an early stop (supported statements / all)."""
    relevance_threshold: float = Field(default=0.5, ge=0, le=1, title="AR threshold")
    """Answer relevance each answer needs for an early stop (mean cosine, claim vs questions). On MiniLM's scale: at 0.5, 3% of answers set against another claim pass; the paper's 0.8, set on OpenAI's embeddings, passed 3 of 14 answers written to the claim (docs/measurements/2026-12-04-toolmad-relevance.md)."""
    relevance_questions: int = Field(default=3, ge=1, le=10, title="AR questions")
    """Questions generated from each answer to measure its relevance to the claim."""
    max_statements: int = Field(default=8, ge=1, le=30, title="Statements per answer")
    """Most atomic statements checked per answer for faithfulness."""
    faithfulness_reader: Literal["generated", "read", "sentences"] = Field(default="generated", title="Faithfulness reader")
    """generated: the scorer writes the statements and their verdicts as JSON (ragas's way); read: the statements are the answer's sentences and each is one letter (which item states it, or none) read from token probabilities, one token written a statement. Read took 40% of the time on the embedded model but passed nearly every answer and its debaters copied each other again (docs/measurements/2026-11-27-toolmad-faithfulness.md); sentences: the answer's sentences as the statements, each given a verdict in one JSON call as generated does (no call to write the statements)."""
    early_stop: bool = Field(default=True, title="Early stop")
    """Stop when both labels agree and both answers pass the F and AR thresholds."""
    evidence_chars: int = Field(default=700, ge=100, le=4000, title="Evidence length")
    """Characters of each evidence item shown to the debaters and the scorer."""
    judge_evidence_chars: int = Field(default=400, ge=100, le=4000, title="Judge evidence length")
    """Characters of each evidence item shown to the judge (it reads the items the debaters cited, every round's when none was cited)."""

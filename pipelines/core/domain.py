"""The domain model: claims, evidence, turns, votes and verdicts, shared by every protocol."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Label = Literal["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
LABELS: tuple[Label, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")

EvidenceSource = Literal["corpus", "web", "user", "memory"]
AdmissibilityStatus = Literal["admitted", "disputed", "discarded"]
Role = Literal["debater", "judge", "scorer"]
_CITATION = re.compile(r"\[(E\d+)\]")


def citations(text: str) -> tuple[str, ...]:
    """Evidence ids a text cites as ``[E3]``, in first-seen order."""
    return tuple(dict.fromkeys(_CITATION.findall(text)))


class Frozen(BaseModel):
    """Base for value objects: immutable, and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Claim(Frozen):
    """The statement a checker wants verified."""

    text: str = Field(min_length=1)
    id: str | None = None


class Admissibility(Frozen):
    """A judge's view of whether an exhibit may be used: w = relevance x credibility."""

    relevance: float = Field(ge=0, le=1)
    credibility: float = Field(ge=0, le=1)
    weight: float = Field(ge=0, le=1)
    status: AdmissibilityStatus
    reason: str = ""


class Evidence(Frozen):
    """One retrieved item (a corpus passage, a web result, or text a checker pasted)."""

    id: str
    source: EvidenceSource
    text: str
    title: str = ""
    url: str | None = None
    corpus: str | None = None
    doc_id: str | None = None
    passage_index: int | None = None
    sentence_indices: tuple[int, ...] = ()
    retrieval_score: float | None = None
    scores: dict[str, float] = Field(default_factory=dict)
    query: str = ""
    round: int = 0
    found_by: str = ""
    admissibility: Admissibility | None = None
    faithfulness: float | None = None
    novelty: float | None = None

    @property
    def source_label(self) -> str:
        """A short human name for where this came from."""
        if self.source == "web":
            return self.url or self.title or "web"
        if self.doc_id:
            return f"{self.corpus}:{self.doc_id}" if self.corpus else self.doc_id
        return self.title or self.source


class Turn(Frozen):
    """One agent's complete contribution in one round."""

    id: str
    agent: str
    round: int
    text: str
    label: Label | None = None
    query: str | None = None
    cited: tuple[str, ...] = ()


class Vote(Frozen):
    """A judge's ballot on a panel."""

    judge: str
    label: str
    reason: str = ""
    model: str = ""
    scores: dict[str, float] = Field(default_factory=dict)


class Ruling(Frozen):
    """A run's other ruling, kept beside its verdict: the protocol's own (judge, panel, summarizer), or the calibrated reading of its evidence."""

    label: str
    confidence: float | None = Field(default=None, ge=0, le=1)
    decided_by: str
    says: str  # in words, e.g. "the panel of 3 judges voted REFUTED (2 REFUTED, 1 SUPPORTED)"


class Verdict(Frozen):
    """The outcome of a run: the label, how sure, why, and what it rests on (and the other ruling, where there is one)."""

    label: str
    confidence: float | None = Field(default=None, ge=0, le=1)
    rationale: str = ""
    cited: tuple[str, ...] = ()
    decided_by: str = "agent"
    stop_reason: str = ""
    beside: Ruling | None = None  # settings 'belief.verdict': the protocol's own ruling beside the calibrated one, or the other way round


class Triplet(Frozen):
    """One (subject, relation, object) fact a claim asserts; claims are decomposed into these."""

    subject: str
    relation: str
    object: str

    def __str__(self) -> str:
        return f"({self.subject}; {self.relation}; {self.object})"

"""How the fake rates passages for the judge rerank (retrieval.rerank = judge)."""

from __future__ import annotations

from typing import Any

from pipelines.run.llm.fake.prompt import PromptView, overlap
from pipelines.run.llm.fake.registry import responder


@responder("RerankScores")
def rerank_scores(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    # Relevance = share of the claim's content words a passage contains (word overlap, not judgement).
    return {"scores": [{"id": eid, "relevance": round(overlap(view.claim, text), 3)} for eid, text in view.evidence.items()]}


# The courtroom roles of `proclaim` live in their own module (one protocol's fakes, one place).

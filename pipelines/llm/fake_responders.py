"""How the fake backend answers each structured request, keyed by the schema's name.

Protocols add a responder here when the generic schema filler would give answers too
meaningless to demo or test with.
"""

from __future__ import annotations

from typing import Any

from pipelines.llm.fake import PromptView, content_words, overlap, responder


@responder("SearchQueries")
def search_queries(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    words = [w for w in view.claim.lower().replace(",", " ").split() if w.strip(".?!") in content_words(view.claim)]
    query = " ".join(w.strip(".?!") for w in words) or view.claim
    return {"queries": [query]}


@responder("RerankScores")
def rerank_scores(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    # Relevance = share of the claim's content words a passage contains (word overlap, not judgement).
    return {"scores": [{"id": eid, "relevance": round(overlap(view.claim, text), 3)} for eid, text in view.evidence.items()]}

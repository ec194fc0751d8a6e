"""How the fake plays mermaid: triplets, ReAct steps, the forced answer."""

from __future__ import annotations

import re
from typing import Any

from pipelines.run.llm.fake.generic import argue
from pipelines.run.llm.fake.prompt import SUPPORT_AT, PromptView, content_words
from pipelines.run.llm.fake.registry import responder

RELATION_WORDS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "can",
        "cannot",
        "could",
        "does",
        "do",
        "did",
        "causes",
        "cause",
        "caused",
        "reduce",
        "reduces",
        "reduced",
        "increase",
        "increases",
        "increased",
        "prevent",
        "prevents",
        "prevented",
        "protect",
        "protects",
        "protected",
        "help",
        "helps",
        "helped",
        "lead",
        "leads",
        "led",
        "contain",
        "contains",
        "kill",
        "kills",
        "spread",
        "spreads",
        "work",
        "works",
        "affect",
        "affects",
        "affected",
        "improve",
        "improves",
        "improved",
        "detect",
        "detects",
        "emitted",
        "transmitted",
        "linked",
        "associated",
        "shows",
        "show",
        "showed",
    ]
)


@responder("ClaimDecomposition")
def claim_decomposition(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    # One triplet split at the first verb-like word; the topic is the subject's last content word.
    words = view.claim.rstrip(".").split()
    cut = next((i for i, w in enumerate(words) if i > 0 and w.lower().strip(",'") in RELATION_WORDS), max(1, len(words) // 2))
    subject, relation, obj = " ".join(words[:cut]), words[cut] if cut < len(words) else "is", " ".join(words[cut + 1 :])
    topic_words = [w for w in re.findall(r"[A-Za-z0-9'\-]+", subject) if w.lower() in content_words(subject)]
    return {"topic": topic_words[-1] if topic_words else subject, "triplets": [{"subject": subject, "relation": relation, "object": obj}]}


def _steps_taken(view: PromptView) -> set[str]:
    return set(re.findall(r"^Step \d+: (\w+)\(", view.text, flags=re.MULTILINE))


def _answer(view: PromptView, thought: str) -> dict[str, Any]:
    cited = view.cited()
    return {
        "thought": thought,
        "label": view.label(),
        "answer": argue(view).rsplit("\nLabel:", 1)[0],
        "cited": cited,
    }


@responder("ReactStep")
def react_step(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    # Answer as soon as the evidence settles the claim; otherwise try each offered tool once, corpus first.
    if view.best_overlap() >= SUPPORT_AT:
        return {"action": "answer", "query": "", "reason": "", **_answer(view, "The evidence so far settles the claim.")}
    offered = [t.strip() for t in view.field("Tools").split(",") if t.strip()]
    taken = _steps_taken(view)
    query = " ".join(w.strip(".,?!") for w in view.claim.split() if w.lower().strip(".,?!") in content_words(view.claim))
    for tool in ("corpus_search", "web_search", "memory_lookup"):
        if tool in offered and tool not in taken:
            reason = "No evidence so far addresses the claim." if not view.evidence else "The evidence so far does not settle the claim."
            return {
                "thought": reason,
                "action": tool,
                "query": query or view.claim,
                "reason": f"{tool} has not been tried yet.",
                "label": None,
                "answer": "",
                "cited": [],
            }
    return {"action": "answer", "query": "", "reason": "", **_answer(view, "Every tool has been tried; answering with what is known.")}


@responder("ForcedAnswer")
def forced_answer(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    return _answer(view, "The steps are used up; answering with what is known.")

"""How the fake plays madke: evidence picks and the agreement check."""

from __future__ import annotations

import re
from typing import Any

from pipelines.run.llm.fake.prompt import PromptView
from pipelines.run.llm.fake.registry import responder


@responder("EvidenceSelection")
def evidence_selection(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    allowed = int(view.field("Picks allowed") or 3)
    useful = [eid for eid, score in view.ranked_evidence() if score >= 0.3][:allowed]
    if not useful:
        return {"items": [], "none_found": True, "reason": "No item in the pool shares enough of the claim's terms."}
    return {
        "items": [int(eid[1:]) for eid in useful],
        "none_found": False,
        "reason": f"{', '.join(useful)} share the most terms with the claim.",
    }


@responder("AgreementCheck")
def agreement_check(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    labels = round_labels(view.text, view.field("Round"))
    agree = len(labels) >= 2 and len(set(labels)) == 1
    reason = f"Both answers conclude {labels[0]}." if agree else f"The answers conclude differently ({', '.join(labels) or 'no labels'})."
    return {"agree": agree, "consistent": agree, "reason": reason}


def round_labels(text: str, round: str) -> list[str]:
    """The label lines of the debate history's turns headed ``--- Agent, round N ---`` for round ``round``."""
    turns = re.split(r"^--- .+?, round (\d+) ---$", text, flags=re.MULTILINE)
    spoken = zip(turns[1::2], turns[2::2], strict=True)
    return [label for number, body in spoken if number == round for label in re.findall(r"^Label:\s*(.+?)\s*$", body, flags=re.MULTILINE)]

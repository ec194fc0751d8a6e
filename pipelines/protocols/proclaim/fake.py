"""How the fake backend plays the courtroom roles (`proclaim`): every value comes from word overlap in the prompt.

Relevance is the share of the claim's key words an exhibit contains; a gap is the key words
no exhibit covers yet; a reflection's logic is how well its cited exhibits match the claim,
its novelty the share of citations that are new this round, its rebuttal how much of the
opponent's argument it takes up. Not a model: enough to demo and to exercise every stop rule.
"""

from __future__ import annotations

import re
from typing import Any

from pipelines.run.llm.fake.prompt import PromptView, content_words, first_sentence, overlap
from pipelines.run.llm.fake.registry import responder

PANEL_LABEL = {"SUPPORTS": "SUPPORTED", "REFUTES": "NOT SUPPORTED", "NOT ENOUGH INFO": "INCONCLUSIVE"}
_CITATION = re.compile(r"\[(E\d+)\]")
_LABEL = re.compile(r"^Label:\s*([A-Z ]+?)\s*$", re.MULTILINE)


def _line(view: PromptView, name: str, default: str = "") -> str:
    match = re.search(rf"^{re.escape(name)}:\s*(.*)$", view.text, flags=re.MULTILINE)
    return match.group(1).strip() if match else default


def _block(view: PromptView, name: str) -> str:
    match = re.search(rf"^=== {re.escape(name)} ===\n(.*?)(?=^=== )", view.text, flags=re.MULTILINE | re.DOTALL)
    return match.group(1).strip() if match else ""


def _said(view: PromptView, side: str, round_number: int | None = None) -> str:
    """What ``side`` argued in the debate so far: in ``round_number``, else its last argument ('' if none)."""
    number = str(round_number) if round_number is not None else r"\d+"
    found = re.findall(rf"^{re.escape(side)}, round {number}: (.*)$", view.text, flags=re.MULTILINE)
    return found[-1] if found else ""


def _ordered_words(text: str) -> list[str]:
    keep = content_words(text)
    return list(dict.fromkeys(w for w in re.findall(r"[a-z0-9']+", text.lower()) if w in keep))


def _missing_words(view: PromptView, texts: list[str]) -> list[str]:
    covered: set[str] = set()
    for text in texts:
        covered |= content_words(text)
    return [w for w in _ordered_words(view.claim) if w not in covered]


def _mean_overlap(view: PromptView, ids: list[str]) -> float:
    known = [i for i in ids if i in view.evidence]
    return sum(overlap(view.claim, view.evidence[i]) for i in known) / len(known) if known else 0.0


def _is_none(text: str) -> bool:
    return text.strip().lower() in {"", "none", "none yet", "(none)"}


@responder("PremiseList")
def premise_list(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    limit = int(m.group(1)) if (m := re.search(r"At most (\d+) premises", view.text)) else 5
    parts = re.split(r";\s*|,\s*(?:and|but|while)\s+|\s+(?:and|but|while|because|whereas)\s+", view.claim.rstrip("."))
    premises = [p.strip(" ,.") for p in parts if len(content_words(p)) >= 2]
    premises = [p[0].upper() + p[1:] for p in premises][:limit]
    return {"premises": premises or [view.claim]}


@responder("StanceQuery")
def stance_query(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    words = _ordered_words(view.claim)[:8]
    if _line(view, "Role") == "Defense":
        words += ["limitations", "contrary", "evidence"]
    return {"query": " ".join(words) or view.claim}


@responder("EvidenceGap")
def evidence_gap(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    """Pursue one premise per round (the sides take different ones) and one lead: title words of an exhibit not yet followed."""
    round_number = int(_line(view, "Round", "1") or 1)
    defense = _line(view, "Role") == "Defense"
    premises = re.findall(r"^P\d+\.\s*(.+)$", view.text, flags=re.MULTILINE) or [view.claim]
    focus = premises[(round_number - 1 + int(defense)) % len(premises)]
    ranked = view.ranked_evidence()
    lead_title = view.evidence[ranked[(round_number - 1) % len(ranked)][0]].split(":", 1)[0] if ranked else ""
    lead = [w for w in _ordered_words(lead_title) if w not in content_words(view.claim)][:3]
    missing = _missing_words(view, list(view.evidence.values()))
    need = _line(view, "Your last discovery need")
    words = _ordered_words(focus)[:5] + lead + missing[:2] + ([] if _is_none(need) else _ordered_words(need)[:2])
    if defense:
        words.append("limitations")
    experts_heard = _line(view, "Expert witnesses heard so far", "none")
    return {
        "gap": f"no exhibit yet on: {', '.join(missing)}" if missing else "",
        "query": " ".join(list(dict.fromkeys(words))[:10]) or view.claim,
        "expert_field": f"{missing[-1]} research" if missing and _is_none(experts_heard) else "",
    }


@responder("QueryDocket")
def query_docket(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    def refine(draft: str) -> str:
        return " ".join(_ordered_words(draft)[:10]) or draft

    gaps = {side: _line(view, f"{side}'s gap", "none") for side in ("Plaintiff", "Defense")}
    open_gaps = {side: gap for side, gap in gaps.items() if not _is_none(gap)}
    return {
        "plaintiff_query": refine(_line(view, "Plaintiff's query", view.claim)),
        "defense_query": refine(_line(view, "Defense's query", view.claim)),
        "ready_to_deliberate": not open_gaps,
        "reason": "both counsels report no remaining gap"
        if not open_gaps
        else "open gaps: " + "; ".join(f"{s}: {g}" for s, g in open_gaps.items()),
    }


@responder("AdmissibilityRating")
def admissibility_rating(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    text = next(iter(view.evidence.values()), "")
    source = _line(view, "Source")
    if source.startswith("local corpus"):
        credibility, kind = 0.85, "a curated local corpus"
    elif source.startswith("web page https://"):
        credibility, kind = 0.6, "a web page over https"
    elif source.startswith("web page"):
        credibility, kind = 0.3, "a web page of unknown standing"
    else:
        credibility, kind = 0.5, "a source of unknown standing"
    claim_words = content_words(view.claim)
    shared = [w for w in _ordered_words(view.claim) if w in content_words(text)]
    terms = f"shares {len(shared)} of {len(claim_words)} key terms with the claim" + (f" ({', '.join(shared[:4])})" if shared else "")
    return {"relevance": round(overlap(view.claim, text), 3), "credibility": credibility, "reason": f"{terms}; {kind}."}


@responder("ExpertRuling")
def expert_ruling(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    field_name = _line(view, "Field")
    heard = _line(view, "Expert witnesses heard so far", "none")
    fresh = bool(content_words(field_name)) and not (content_words(field_name) & content_words(heard))
    return {
        "granted": fresh,
        "persona": f"Dr. R. Okafor, independent specialist in {field_name}" if fresh else "",
        "reason": f"{field_name} bears on the claim and no expert has covered it"
        if fresh
        else f"{field_name or 'the field'} is already covered",
    }


@responder("SelfReflection")
def self_reflection(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    role, round_number = _line(view, "Role"), int(_line(view, "Round", "1") or 1)
    own, opponent = _said(view, role, round_number), _said(view, "Defense" if role == "Plaintiff" else "Plaintiff", round_number)
    cited = list(dict.fromkeys(_CITATION.findall(own)))
    valid = [c for c in cited if c in view.evidence]
    new = set(re.findall(r"E\d+", _line(view, "New exhibits this round")))
    logic = 0.5 * (len(valid) / len(cited)) + 0.5 * _mean_overlap(view, valid) if cited else 0.1
    missing = _missing_words(view, [view.evidence[c] for c in valid])
    return {
        "logic": round(logic, 3),
        "novelty": round(len([c for c in valid if c in new]) / len(valid), 3) if valid else 0.0,
        "rebuttal": round(overlap(opponent, own), 3) if opponent else 0.0,
        "discovery_need": f"evidence on {', '.join(missing)}" if missing else "",
    }


@responder("CriticReport")
def critic_report(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    round_number = int(_line(view, "Round", "1") or 1)
    scores = {
        side: round(10 * _mean_overlap(view, _CITATION.findall(_said(view, side, round_number))), 1) for side in ("Plaintiff", "Defense")
    }
    gap = abs(scores["Plaintiff"] - scores["Defense"])
    return {
        "plaintiff_score": scores["Plaintiff"],
        "defense_score": scores["Defense"],
        "resolved": gap >= 3,
        "leaning": PANEL_LABEL[view.label()],
        "reason": f"the cited exhibits match the claim {scores['Plaintiff']:.1f} vs {scores['Defense']:.1f} out of 10"
        + ("; one side is clearly ahead" if gap >= 3 else "; neither side is clearly ahead"),
    }


@responder("ConsistencyRating")
def consistency_rating(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    original, switched = _block(view, "ORIGINAL"), _block(view, "SWITCHED")
    before, after = _LABEL.findall(original), _LABEL.findall(switched)
    majority = max(set(before), key=before.count) if before else ""
    agreement = sum(label == majority for label in after) / len(after) if after else 0.0
    cited_before, cited_after = set(_CITATION.findall(original)), set(_CITATION.findall(switched))
    union = cited_before | cited_after
    jaccard = len(cited_before & cited_after) / len(union) if union else 0.0
    gamma = round(6 * agreement + 4 * jaccard, 1)
    return {
        "gamma": gamma,
        "reason": f"{agreement:.0%} of the swapped arguments reach the original conclusion; {jaccard:.0%} of the exhibits cited are shared",
    }


@responder("PanelJudgment")
def panel_judgment(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    ranked = view.ranked_evidence()
    best_id, best = ranked[0] if ranked else ("", 0.0)
    cited = list(dict.fromkeys(_CITATION.findall(" ".join(_said(view, side) for side in ("Plaintiff", "Defense")))))
    valid = [c for c in cited if c in view.evidence]
    credibility = [float(c) for c in re.findall(r"c=(\d(?:\.\d+)?)", "\n".join(view.evidence.values()))]
    label = PANEL_LABEL[view.label()]
    if best_id:
        reasoning = (
            f"The strongest exhibit [{best_id}] shares {best:.0%} of the claim's key terms: {first_sentence(view.evidence[best_id])}"
        )
    else:
        reasoning = "No admitted exhibit bears on the claim."
    return {
        "evidence_strength": round(10 * best, 1),
        "argument_validity": round(10 * (0.5 * (len(valid) / len(cited)) + 0.5 * _mean_overlap(view, valid)), 1) if cited else 1.0,
        "source_reliability": round(10 * sum(credibility) / len(credibility), 1) if credibility else 5.0,
        "vote": label,
        "reasoning": f"{reasoning} The panel judge therefore finds the claim {label}.",
    }

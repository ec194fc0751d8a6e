"""How the fake backend answers each structured request, keyed by the schema's name.

Protocols add a responder here when the generic schema filler would give answers too
meaningless to demo or test with.
"""

from __future__ import annotations

import re
from typing import Any

from pipelines.llm.fake import (
    SUPPORT_AT,
    PromptView,
    argue,
    choice_responder,
    content_words,
    first_sentence,
    overlap,
    responder,
    text_responder,
)


@responder("SearchQueries")
def search_queries(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    words = [w for w in view.claim.lower().replace(",", " ").split() if w.strip(".?!") in content_words(view.claim)]
    query = " ".join(w.strip(".?!") for w in words) or view.claim
    return {"queries": [query]}


# --- toolmad and the F / AR metrics -------------------------------------------------------

_FRAMING = re.compile(r"^(?:taken together,\s*)?the evidence (supports|contradicts|does not settle) the claim that\s+(.+)$", re.IGNORECASE)
_CITATION = re.compile(r"\s*\[E\d+\]")
_FILLER = frozenset(
    {"evidence", "claim", "label", "supports", "refutes", "taken", "together", "retrieved", "directly", "address", "settle"}
)


def _section(text: str, heading: str) -> str:
    """The block of a prompt after a line ending in ``heading`` (up to the next blank line pair or the end)."""
    match = re.search(rf"{re.escape(heading)}[^\n]*\n(.*?)(?:\n\n[A-Z][^\n]*:\n|\Z)", text, flags=re.S)
    return match.group(1).strip() if match else ""


def _sentences(answer: str) -> list[str]:
    body = "\n".join(line for line in answer.splitlines() if not re.match(r"^\W*label\s*:", line, flags=re.I))
    body = re.sub(r"([.!?])((?:\s*\[E\d+\])+)", r"\2\1", body)  # "text. [E1]" cites for the sentence before it
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", body) if len(s.strip()) > 3]


def _deframe(sentence: str) -> str:
    """What a statement extractor makes of a concluding sentence: the proposition it asserts."""
    match = _FRAMING.match(_CITATION.sub("", sentence).strip().rstrip("."))
    if not match:
        return sentence
    verb, proposition = match.group(1).lower(), match.group(2).strip()
    proposition = proposition[:1].upper() + proposition[1:]
    if verb == "supports":
        return proposition + "."
    if verb == "contradicts":
        return f"It is not the case that {proposition[:1].lower() + proposition[1:]}."
    return f"The evidence does not settle whether {proposition[:1].lower() + proposition[1:]}."


@responder("NextQuery")
def next_query(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    """Round 1: the claim's content words. Later rounds: keep the query, or add the opponent's two most used new words."""
    previous = re.search(r"^Your previous query:\s*(.+)$", view.text, flags=re.M)
    if previous is None:
        return {"query": search_queries(view, schema)["queries"][0]}
    query = previous.group(1).strip()
    opponent = re.sub(r"\(Their label:[^)]*\)", "", _section(view.text, "Previous answer of your opponent"))
    known = content_words(query) | content_words(view.claim) | _FILLER
    words = [w for w in re.findall(r"[a-z0-9']+", _CITATION.sub("", opponent).lower()) if w in content_words(opponent) and w not in known]
    counts = {w: words.count(w) for w in words}
    new = sorted(counts, key=lambda w: (-counts[w], words.index(w)))[:2]
    if not new or len(query.split()) >= 10:
        return {"query": query}
    return {"query": f"{query} {' '.join(new)}"}


@responder("AnswerStatements")
def answer_statements(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    """The answer's sentences, each a statement; a concluding 'the evidence supports the claim that X' becomes X."""
    limit = re.search(r"at most (\d+) statements", view.text)
    answer = view.text.split("\nAnswer:\n", 1)[-1]
    statements = [_deframe(s) for s in _sentences(answer)]
    return {"statements": statements[: int(limit.group(1)) if limit else 8]}


@responder("StatementVerdicts")
def statement_verdicts(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    """Supported when most of a statement's content words are in the evidence it cites (or, citing none, in any item)."""
    verdicts = []
    for match in re.finditer(r"^S(\d+):\s*(.+)$", view.text, flags=re.M):
        number, statement = int(match.group(1)), match.group(2)
        cited = [eid for eid in re.findall(r"\[(E\d+)\]", statement) if eid in view.evidence]
        candidates = cited or list(view.evidence)
        plain = _CITATION.sub("", statement)
        scored = sorted(((overlap(plain, view.evidence[eid]), eid) for eid in candidates), key=lambda p: (-p[0], int(p[1][1:])))
        best, eid = scored[0] if scored else (0.0, None)
        supported = best >= SUPPORT_AT
        verdicts.append({"statement": number, "evidence_id": eid if supported and eid else "", "supported": supported})
    return {"verdicts": verdicts}


@responder("GeneratedQuestions")
def generated_questions(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    """Questions about the answer's main point (its conclusion, else its first sentence), worded three ways."""
    wanted = re.search(r"write (\d+) different questions", view.text)
    n = int(wanted.group(1)) if wanted else 3
    answer = view.text.split("\nAnswer:\n", 1)[-1]
    sentences = [_CITATION.sub("", _deframe(s)).strip().rstrip(".") for s in _sentences(answer)]
    if not sentences:
        return {"questions": ["What is this about?"]}
    framed = [s for s, raw in zip(sentences, _sentences(answer), strict=True) if _FRAMING.match(_CITATION.sub("", raw).strip().rstrip("."))]
    main = (framed or sentences)[-1 if framed else 0]
    main = main[:1].lower() + main[1:]
    everywhere = re.findall(r"[a-z0-9']+", " ".join(sentences).lower())
    words = [w for w in dict.fromkeys(re.findall(r"[a-z0-9']+", main.lower())) if w in content_words(main) and w not in _FILLER]
    topic = " ".join(sorted(words, key=lambda w: -everywhere.count(w))[:6])
    templates = [f"Is it true that {main}?", f"What evidence shows that {main}?", f"What is known about {topic}?"]
    return {"questions": [templates[i % len(templates)] for i in range(n)]}


# --- radar: label probabilities, the Politician and the Scientist, the judge's explanation ---

RADAR_STAGES = ("opening", "rebuttal", "closing")
RADAR_FROM_FEVER = {"SUPPORTS": "TRUE", "REFUTES": "FALSE", "NOT ENOUGH INFO": "HALF-TRUE"}


def _stage_index(view: PromptView) -> int:
    stage = view.field("Stage").lower()
    return RADAR_STAGES.index(stage) if stage in RADAR_STAGES else 0


@choice_responder("STOP", "CONTINUE")
def radar_stop(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    # Clearer evidence and a longer debate both make stopping likelier.
    p_stop = min(0.95, 0.3 + 0.45 * view.best_overlap() + 0.15 * _stage_index(view))
    return {"STOP": p_stop, "CONTINUE": 1 - p_stop}


@choice_responder("TRUE", "HALF-TRUE", "FALSE")
def radar_judge(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    # The label the evidence points to, held more firmly with clearer evidence and as the debate goes on.
    top_label = RADAR_FROM_FEVER[view.label()]
    top = min(0.92, 0.4 + 0.25 * view.best_overlap() + 0.1 * _stage_index(view))
    rest = 1 - top
    if top_label == "HALF-TRUE":
        return {"TRUE": rest / 2, "HALF-TRUE": top, "FALSE": rest / 2}
    other = "FALSE" if top_label == "TRUE" else "TRUE"
    return {top_label: top, "HALF-TRUE": rest * 2 / 3, other: rest / 3}


@text_responder("RADAR fact-checking debate")
def radar_debater(view: PromptView) -> str:
    argument = argue(view).rsplit("\nLabel:", 1)[0]
    if "'Omitted:'" not in view.text:  # the Politician: the case for the claim
        return argument
    # The Scientist: evidence that touches the claim without settling it is the context it leaves out.
    partial = [eid for eid, score in view.ranked_evidence() if 0.2 <= score < SUPPORT_AT][:2]
    lines = [argument] + [f"Omitted: {first_sentence(view.evidence[eid])} [{eid}]" for eid in partial]
    return "\n".join(lines)


@text_responder("Explain the verdict")
def radar_explanation(view: PromptView) -> str:
    label = view.text.rstrip().rsplit("Explain the verdict", 1)[1].strip(" .")
    reasons = [f"{first_sentence(view.evidence[eid])} [{eid}]" for eid in view.cited()]
    return f"The verdict is {label}. " + (" ".join(reasons) or "The shared evidence does not address the claim directly.")


# --- madke: evidence picks and the agreement check ---


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
    labels = re.findall(r"^Label:\s*(.+?)\s*$", view.text, flags=re.MULTILINE)
    agree = len(labels) >= 2 and len(set(labels)) == 1
    reason = f"Both answers conclude {labels[0]}." if agree else f"The answers conclude differently ({', '.join(labels) or 'no labels'})."
    return {"agree": agree, "consistent": agree, "reason": reason}


# --- mermaid: triplets, ReAct steps, the forced answer ---

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


@responder("RerankScores")
def rerank_scores(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    # Relevance = share of the claim's content words a passage contains (word overlap, not judgement).
    return {"scores": [{"id": eid, "relevance": round(overlap(view.claim, text), 3)} for eid, text in view.evidence.items()]}


# The courtroom roles of `proclaim` live in their own module (one protocol's fakes, one place).
from pipelines.llm import fake_courtroom as _fake_courtroom  # noqa: E402,F401

# desk's stance prompt: lettered options, each letter standing for a stance (the order changes between calls)
_STANCE_OPTION = re.compile(r"^([ABC])\. The passage (supports|contradicts|does not address) the claim\.$", re.MULTILINE)
FIRST_POSITION_PULL = 0.1  # extra mass on option A whatever it stands for, as small models have: averaging orders cancels it


@choice_responder("A", "B", "C")
def desk_stance(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    meaning = {letter: word for letter, word in _STANCE_OPTION.findall(view.text)}
    if not meaning:
        return {o: 1 / len(options) for o in options}
    stance = {"SUPPORTS": "supports", "REFUTES": "contradicts", "NOT ENOUGH INFO": "does not address"}[view.label()]
    strength = 0.45 + 0.4 * min(1.0, view.best_overlap())
    rest = (1 - strength) / 2
    distribution = {letter: strength if word == stance else rest for letter, word in meaning.items()}
    distribution["A"] = distribution.get("A", 0.0) + FIRST_POSITION_PULL
    return distribution

"""How the fake answers toolmad's requests: search queries, the next query, and the F / AR metrics' statements, verdicts and questions."""

from __future__ import annotations

import re
from typing import Any

from pipelines.run.llm.fake.prompt import SUPPORT_AT, PromptView, content_words, overlap
from pipelines.run.llm.fake.registry import responder


@responder("SearchQueries")
def search_queries(view: PromptView, schema: dict[str, Any]) -> dict[str, Any]:
    words = [w for w in view.claim.lower().replace(",", " ").split() if w.strip(".?!") in content_words(view.claim)]
    query = " ".join(w.strip(".?!") for w in words) or view.claim
    return {"queries": [query]}


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

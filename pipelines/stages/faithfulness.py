"""Faithfulness (F), built like a ragas metric: how much of an answer rests on the evidence it was given.

F = supported statements / all statements. Step 1 splits the answer into atomic
statements; step 2 asks for a verdict on each, naming the evidence item that supports it;
step 3 counts. A statement counts as supported only when its verdict rests on an item of
the evidence given: the id the verdict names, or else the id the statement itself cites. A
model that says "supported" but points at nothing, or at an item the answer's author never
saw, does not get the credit.

Three readers (``reader``):

- ``generated`` (ragas's way): the scorer writes the statements, then the verdicts, as JSON:
  two calls that write about 100 tokens each.
- ``read``: the statements are the answer's sentences (a citation that opens a sentence
  belongs to the one before, unless it is the sentence's subject, "[E6] indicates that ...";
  a sentence of fewer than three content words is no statement),
  and each is one question, "which item states it: A [E1], B [E2], ... or none of them",
  answered with one letter read from the token probabilities (its citations taken out, so
  the answer's own claim of support does not lead the scorer). The evidence comes first in
  every question, so the server's prompt cache reads it once an answer. On a small local
  model writing is the slow part, and this writes one token a statement.
- ``sentences``: the read reader's statements (the answer's sentences, citations taken out) with
  the generated reader's verdicts (one JSON call): ragas's second step without its first, so
  the scorer writes about half the tokens of ``generated``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field

from corpora.base import split_sentences
from pipelines.core.domain import Evidence
from pipelines.core.text.stopwords import STOPWORDS
from pipelines.prompts import load_prompt
from pipelines.run.llm.client import LLM
from pipelines.stages.argument import strip_label_line
from pipelines.stages.label_probability import LabelDistribution, estimate_label_probabilities, options_line
from pipelines.stages.retrieval import format_evidence

Reader = Literal["generated", "read", "sentences"]
READ_LETTERS = "ABCDEFGHIJ"  # the read question's options: up to nine items, then "none of them"
MIN_CONTENT_WORDS = 3  # a sentence with fewer ("I disagree.") makes no checkable statement
NONE_OF_THEM = "none of them"  # the read question's last option


class AnswerStatements(BaseModel):
    """Step 1's answer: the atomic statements an answer makes."""

    statements: list[str] = Field(max_length=30)


class StatementVerdict(BaseModel):
    """Step 2's answer for one statement (numbered from 1 as the prompt shows them)."""

    statement: int
    evidence_id: str = ""  # a plain string, not nullable: small models follow a flat grammar better
    supported: bool


class StatementVerdicts(BaseModel):
    verdicts: list[StatementVerdict] = Field(max_length=30)


@dataclass(frozen=True)
class CheckedStatement:
    """One statement with its verdict and, when supported, the evidence it rests on."""

    text: str
    supported: bool
    evidence_id: str | None = None
    note: str = ""


@dataclass(frozen=True)
class FaithfulnessResult:
    """F with the statements behind it and a one-line reason."""

    value: float
    statements: tuple[CheckedStatement, ...]
    reason: str


_ID = re.compile(r"^\[?\s*(?:E)?\s*(\d+)\s*\]?$", re.IGNORECASE)
_CITED = re.compile(r"\[(E\d+)\]")
_CITED_MARK = re.compile(r"\s*\[E\d+\]")


def without_citations(statement: str) -> str:
    """The statement as the read question shows it: its ``[E1]`` marks taken out, so its own claim of support does not lead the scorer."""
    return _CITED_MARK.sub("", statement).strip()


def answer_statements(answer: str, most: int) -> list[str]:
    """The read reader's statements: the answer's sentences (label line left out), those of at least three content words, the first ``most``."""
    sentences = [s for paragraph in answer_paragraphs(strip_label_line(answer)) for s in paragraph]
    kept = [s for s in sentences if len(_content_words(s)) >= MIN_CONTENT_WORDS]
    return list(dict.fromkeys(kept))[:most]


def read_options(texts: Sequence[str]) -> tuple[str, str]:
    """The read question's options block ("A. [E1]" ... and the Options line) for ``texts`` in letter order, and its letters."""
    letters = READ_LETTERS[: len(texts)]
    lines = [f"{letter}. {text}" for letter, text in zip(letters, texts, strict=True)]
    return "\n".join([*lines, options_line(tuple(letters))]), letters


def read_verdict(number: int, read: LabelDistribution, evidence: Sequence[Evidence], letters: str) -> StatementVerdict:
    """The likeliest letter as a verdict: an item's letter is that item's support, the last letter none."""
    item = letters.index(read.label)
    if item >= len(evidence):
        return StatementVerdict(statement=number, evidence_id="", supported=False)
    return StatementVerdict(statement=number, evidence_id=evidence[item].id, supported=True)


def _cited(statement: str) -> list[str]:
    return _CITED.findall(statement)


def normalize_evidence_id(raw: str | None) -> str | None:
    """'E3', '[E3]', 'e3' and '3' all mean E3; anything else is no id."""
    if raw is None:
        return None
    match = _ID.match(raw.strip())
    return f"E{match.group(1)}" if match else None


class Faithfulness:
    """F of one answer against the evidence its author was given. One public method: ``score``."""

    name = "F"

    def __init__(self, llm: LLM, *, max_statements: int = 8, evidence_chars: int = 700, reader: Reader = "generated") -> None:
        self.llm = llm
        self.max_statements = max_statements
        self.evidence_chars = evidence_chars
        self.reader = reader

    async def score(self, claim: str, answer: str, evidence: list[Evidence]) -> FaithfulnessResult:
        """Split, verify, count. Raises ModelOutputError or BackendUnavailableError when the scorer fails."""
        statements = await self._split(claim, answer) if self.reader == "generated" else answer_statements(answer, self.max_statements)
        if not statements:
            return FaithfulnessResult(0.0, (), "the answer makes no checkable statement")
        if not evidence:
            checked = tuple(CheckedStatement(s, False, None, "no evidence to check against") for s in statements)
            return FaithfulnessResult(0.0, checked, f"0 of {len(statements)} statements supported: no evidence was retrieved")
        if self.reader == "generated":
            return self._count(statements, await self._verify(statements, evidence), evidence)
        if self.reader == "sentences":
            result = self._count(statements, await self._verify([without_citations(s) for s in statements], evidence), evidence)
            how = "the answer's sentences, each given a verdict by the scorer"
        else:
            result = self._count(statements, await self._read(statements, evidence[: len(READ_LETTERS) - 1]), evidence)
            how = "each of the answer's sentences asked which item states it, read from the scorer's token probabilities"
        return replace(result, reason=f"{result.reason} ({how})")

    async def _read(self, statements: list[str], evidence: list[Evidence]) -> dict[int, StatementVerdict]:
        """Step 2, read: one letter a statement (which item states it, or none), one statement after another (the evidence prefix stays cached)."""
        options, letters = read_options([*(f"[{e.id}]" for e in evidence), NONE_OF_THEM])
        shown = format_evidence(evidence, max_chars=self.evidence_chars)
        verdicts: dict[int, StatementVerdict] = {}
        for number, statement in enumerate(statements, start=1):
            messages = load_prompt("faithfulness_read").render(evidence=shown, statement=without_citations(statement), options=options)
            read = await estimate_label_probabilities(self.llm, messages, tuple(letters), max_tokens=1)
            verdicts[number] = read_verdict(number, read, evidence, letters)
        return verdicts

    async def _split(self, claim: str, answer: str) -> list[str]:
        """Step 1: the answer's atomic statements (the label line is not a statement)."""
        body = strip_label_line(answer)
        if not body.strip():
            return []
        messages = load_prompt("faithfulness_statements").render(claim=claim, answer=body, max_statements=self.max_statements)
        result = await self.llm.structured(messages, AnswerStatements)
        cleaned = [" ".join(s.split()) for s in result.statements]
        return list(dict.fromkeys(s for s in cleaned if s))[: self.max_statements]

    async def _verify(self, statements: list[str], evidence: list[Evidence]) -> dict[int, StatementVerdict]:
        """Step 2: a verdict per statement, keyed by its 1-based number (the first verdict for a number wins)."""
        numbered = "\n".join(f"S{i}: {s}" for i, s in enumerate(statements, start=1))
        messages = load_prompt("faithfulness_verdicts").render(
            evidence=format_evidence(evidence, max_chars=self.evidence_chars), statements=numbered
        )
        result = await self.llm.structured(messages, StatementVerdicts)
        by_number: dict[int, StatementVerdict] = {}
        for position, verdict in enumerate(result.verdicts, start=1):
            # Small models number from 0 or not at all; fall back to the verdict's position.
            number = verdict.statement if 1 <= verdict.statement <= len(statements) else position
            by_number.setdefault(number, verdict)
        return by_number

    def _count(self, statements: list[str], verdicts: dict[int, StatementVerdict], evidence: list[Evidence]) -> FaithfulnessResult:
        """Step 3: F = supported / all, where supported means a verdict naming an item of this evidence."""
        known = {e.id for e in evidence}
        checked = []
        for number, text in enumerate(statements, start=1):
            verdict = verdicts.get(number)
            if verdict is None:
                checked.append(CheckedStatement(text, False, None, "the scorer gave no verdict"))
                continue
            eid = normalize_evidence_id(verdict.evidence_id)
            if verdict.supported and eid not in known:
                # Supported, but the verdict names no usable id: the statement's own citation will do if it is this evidence.
                eid = next((c for c in _cited(text) if c in known), eid)
            if verdict.supported and eid in known:
                checked.append(CheckedStatement(text, True, eid))
            elif verdict.supported:
                note = (
                    f"cited {verdict.evidence_id!r}, which is not in this answer's evidence" if verdict.evidence_id else "no evidence named"
                )
                checked.append(CheckedStatement(text, False, None, note))
            else:
                checked.append(CheckedStatement(text, False, None))
        supported = sum(c.supported for c in checked)
        value = supported / len(checked)
        return FaithfulnessResult(round(value, 4), tuple(checked), f"{supported} of {len(checked)} statements supported by the evidence")


# --- the statements placed back in the answer's text, for the page to mark them inline ---------

_LEADING_CITATIONS = re.compile(r"^((?:\[E\d+\]\s*)+)")
PLACE_MIN_OVERLAP = 0.5  # a statement sits in the sentence holding at least half of its content words


def answer_paragraphs(answer: str) -> list[list[str]]:
    """The answer's paragraphs, each as its sentences.

    A citation like ``[E1]`` that opens a sentence goes back to the one before it ("Masks filter droplets. [E1] Trials
    were small.") unless it is the sentence's subject ("[E6] indicates that ...": what follows it goes on in lower case).
    """
    paragraphs = []
    for block in re.split(r"\n\s*\n", answer.strip()):
        sentences: list[str] = []
        for sentence in split_sentences(block):
            lead = _LEADING_CITATIONS.match(sentence)
            rest = sentence[lead.end() :] if lead else ""
            if lead and sentences and not rest[:1].islower():
                sentences[-1] = f"{sentences[-1]} {lead.group(1).strip()}"
                sentence = rest.strip()
            if sentence:
                sentences.append(sentence)
        if sentences:
            paragraphs.append(sentences)
    return paragraphs


def place_statements(sentences: Sequence[str], statements: Sequence[str]) -> list[int | None]:
    """For each statement, the index of the sentence it was taken from (most of its content words), or None when no sentence holds it."""
    sentence_words = [_content_words(s) for s in sentences]
    placed: list[int | None] = []
    for statement in statements:
        words = _content_words(statement)
        if not words:
            placed.append(None)
            continue
        scores = [len(words & found) / len(words) for found in sentence_words]
        best = max(range(len(scores)), key=lambda i: (scores[i], -i), default=None)
        placed.append(best if best is not None and scores[best] >= PLACE_MIN_OVERLAP else None)
    return placed


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", _CITED.sub(" ", text).lower()) if w not in STOPWORDS}

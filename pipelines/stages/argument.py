"""Argument stage: an agent's answer streamed as ArgumentDelta events, then parsed into a Turn."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from pipelines.core.domain import LABELS, Label, Turn, citations
from pipelines.core.events import ArgumentDelta, TurnCompleted
from pipelines.run.context import RunContext


def _heading_line(headings: str) -> re.Pattern[str]:
    """A line ``Heading: value`` (optionally 'Final', bold or bulleted) for one of ``headings``, capturing the value."""
    return re.compile(rf"^\W*(?:final\s+)?(?:{headings})\s*[:\-]\s*\**\s*(.+?)\s*\**\s*$", re.IGNORECASE | re.MULTILINE)


_LABEL_LINE = _heading_line("label|verdict|answer")
# A line that names a label under any heading a model uses for its decision ("Ruling: REFUTES").
_NAMED_LINE = _heading_line("label|verdict|answer|ruling|decision|conclusion")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DECISION_WORD = re.compile(r"\b(?:label|verdict|ruling)\b", re.IGNORECASE)
_LABEL_WORDS: dict[str, Label] = {
    "SUPPORTS": "SUPPORTS",
    "SUPPORT": "SUPPORTS",
    "SUPPORTED": "SUPPORTS",
    "REFUTES": "REFUTES",
    "REFUTE": "REFUTES",
    "REFUTED": "REFUTES",
    "NOT ENOUGH INFO": "NOT ENOUGH INFO",
    "NOT ENOUGH INFORMATION": "NOT ENOUGH INFO",
    "NOTENOUGHINFO": "NOT ENOUGH INFO",
    "NEI": "NOT ENOUGH INFO",
}
_LONGEST_FIRST = sorted(_LABEL_WORDS, key=len, reverse=True)  # "NOT ENOUGH INFORMATION" before "NOT ENOUGH INFO"


def parse_label(text: str) -> Label | None:
    """The label of an answer: its ``Label:`` line (the last one wins), else a bare label on the
    last line, else the one label named in the closing paragraph (small models often write
    'The label for this claim is "SUPPORTS".'); None when that is missing or ambiguous."""
    matches = _LABEL_LINE.findall(text)
    candidates = list(reversed(matches))
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines:
        candidates.append(lines[-1])
    for candidate in candidates:
        if label := _label_at_start(candidate):
            return label
    closing = text.strip().split("\n\n")[-1]
    label = _one_label_named(closing)
    if label:
        return label
    # 'The search debater's answer does not support or refute it. Therefore, the label for this
    # round is NOT ENOUGH INFO.': the last sentence that speaks of a label and names one.
    for sentence in reversed(_SENTENCE_END.split(closing)):
        if _DECISION_WORD.search(sentence) and (label := _one_label_named(sentence)):
            return label
    return None


def _one_label_named(text: str) -> Label | None:
    cleaned = _normalise(text)
    named = {label for word, label in _LABEL_WORDS.items() if re.search(rf"\b{word}\b", cleaned)}
    if "NOT ENOUGH INFO" in named and len(named) > 1 and "NOT" in cleaned:
        named.discard("SUPPORTS")  # "not enough information to support" names one label, not two
    return named.pop() if len(named) == 1 else None


def named_labels(text: str) -> list[Label]:
    """Each distinct label an answer names on a decision line ('Label:', 'Verdict:', 'Ruling:', ...), in order.

    Two of them mean the answer contradicts itself: Qwen 1.5B as the toolmad judge wrote
    "Ruling: REFUTES" over "Label: NOT ENOUGH INFO" in 6 of 21 rulings of an evaluation.
    """
    labels = (_label_at_start(value) for value in _NAMED_LINE.findall(text))
    return list(dict.fromkeys(label for label in labels if label))


def _label_at_start(text: str) -> Label | None:
    """The label a text begins with ('Supported, because...' -> SUPPORTS), if any."""
    cleaned = _normalise(text)
    return next((_LABEL_WORDS[word] for word in _LONGEST_FIRST if cleaned.startswith(word)), None)


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^A-Z ]", " ", text.upper()).split())


def strip_label_line(text: str) -> str:
    return _LABEL_LINE.sub("", text).strip()


async def stream_turn(
    ctx: RunContext,
    *,
    agent: str,
    round: int,
    messages: Sequence[BaseMessage],
    query: str | None = None,
    role: str = "debater",
    max_tokens: int | None = None,
) -> Turn:
    """Stream one answer into ArgumentDelta events and complete it as a Turn (at most ``max_tokens``, else the role's limit)."""
    turn_id = f"{agent}-r{round}"

    def on_delta(chunk: str) -> None:
        ctx.emit(ArgumentDelta(turn_id=turn_id, agent=agent, round=round, text=chunk))

    text = await ctx.llm(role).stream(messages, on_delta, max_tokens=max_tokens)
    valid_ids = set(ctx.pool) - set(ctx.struck)  # a struck item is never counted as cited
    turn = Turn(
        id=turn_id,
        agent=agent,
        round=round,
        text=text,
        label=parse_label(text),
        query=query,
        cited=tuple(c for c in citations(text) if c in valid_ids),
    )
    ctx.emit(TurnCompleted(turn=turn))
    return turn


__all__ = ["LABELS", "citations", "parse_label", "stream_turn", "strip_label_line"]

"""What the fake backend reads out of a prompt, and the word-overlap measures it answers by.

Prompts share conventions the fake relies on: a ``Claim:`` line, ``[E1] ...`` evidence lines,
an ``Options: A | B | C`` line for a multiple-choice answer, ``Name: value`` fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from pipelines.core.text.stopwords import STOPWORDS

NEGATIONS = frozenset(
    {"not", "no", "never", "none", "cannot", "can't", "doesn't", "don't", "isn't", "aren't", "won't", "without", "myth", "false", "only"}
)
SUPPORT_AT = 0.5  # share of the claim's content words an evidence item must contain to bear on it


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if len(w) > 2 and w not in STOPWORDS}


def overlap(claim: str, text: str) -> float:
    """Share of the claim's content words found in ``text`` (0..1)."""
    words = content_words(claim)
    return len(words & content_words(text)) / len(words) if words else 0.0


def has_negation(text: str) -> bool:
    return bool(set(re.findall(r"[a-z']+", text.lower())) & NEGATIONS)


@dataclass
class PromptView:
    """What the fake can read out of a prompt."""

    text: str
    claim: str = ""
    evidence: dict[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()

    @classmethod
    def parse(cls, messages: list[BaseMessage]) -> PromptView:
        text = "\n".join(str(m.content) for m in messages)
        claims = re.findall(r"^Claim:\s*(.+)$", text, flags=re.MULTILINE)  # the last: worked examples come before the question
        evidence = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\[(E\d+)\]\s*(.+)$", text, flags=re.MULTILINE)}
        option_lines = re.findall(r"^Options:\s*(.+)$", text, flags=re.MULTILINE)
        options = tuple(o.strip() for o in option_lines[-1].split("|") if o.strip()) if option_lines else ()
        return cls(text=text, claim=claims[-1].strip() if claims else "", evidence=evidence, options=options)

    def field(self, name: str) -> str:
        """The value of the last ``Name: value`` line in the prompt ('' if none)."""
        found = re.findall(rf"^{re.escape(name)}:\s*(.+)$", self.text, flags=re.MULTILINE)
        return found[-1].strip() if found else ""

    def best_overlap(self) -> float:
        ranked = self.ranked_evidence()
        return ranked[0][1] if ranked else 0.0

    def ranked_evidence(self) -> list[tuple[str, float]]:
        scored = [(eid, overlap(self.claim, text)) for eid, text in self.evidence.items()]
        return sorted(scored, key=lambda pair: (-pair[1], int(pair[0][1:])))

    def label(self) -> str:
        """SUPPORTS / REFUTES / NOT ENOUGH INFO from the best-overlapping evidence."""
        ranked = self.ranked_evidence()
        if not ranked or ranked[0][1] < SUPPORT_AT:
            return "NOT ENOUGH INFO"
        best = self.evidence[ranked[0][0]]
        return "REFUTES" if has_negation(self.claim) != has_negation(best) else "SUPPORTS"

    def cited(self, n: int = 2) -> list[str]:
        return [eid for eid, score in self.ranked_evidence()[:n] if score > 0]


def first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]
    return sentence if len(sentence) < 300 else sentence[:297] + "..."

"""The one verdict vocabulary: one table of every word a verdict comes in, and two views of it.

Protocols name their labels their own way (desk SUPPORTS, proclaim SUPPORTED and NOT SUPPORTED, radar TRUE and
HALF-TRUE), datasets theirs (Check-COVID SUPPORT and NOTENOUGHINFO, SciFact CONTRADICT), and fact-checkers rate on
scales such as PolitiFact's (True, Mostly True, Half True, Mostly False, False, Pants on Fire), which is what a
ClaimReview's ``alternateName`` says. ``WORDS`` reads each onto one of three verdicts, and the desk shows them two ways:

- canonical (``canonical``): SUPPORTS / REFUTES / NOT ENOUGH INFO (``pipelines.core.domain.Label``), what scoring,
  datasets and calibration compare (``pipelines.eval.labels`` adds the dataset modes and the ``--label-map`` on top);
- display (``common_label``, ``COMMON_LABELS``): SUPPORTED / REFUTED / NOT ENOUGH INFO, what the card, History's
  filter, the override list, the queue's review and every export say, with the protocol's own word beside it
  (``CardLabel``).

The same word reads the same in both: a spelling is matched in any case, with hyphens, underscores, dots and extra
spaces ignored (``half true``, ``Half-True`` and ``HALF_TRUE`` are one word). The words people disagreed on, decided:
Mostly True is SUPPORTED and Mostly False REFUTED (PolitiFact: "accurate but needs clarification", "contains an
element of truth but ignores critical facts"), so a six-point rating reads as the checker would sum it up; Half True is
NOT ENOUGH INFO (part holds, part does not: the claim as stated is neither supported nor refuted, which is what a
three-class dataset's third class means); Contradicts is REFUTED (SciFact's word, natural-language inference's);
Not Enough Information is NOT ENOUGH INFO. A word outside the table stays as written on the card and is refused where
a verdict must be one of the three (a checker's override, a dataset's gold label without a ``--label-map``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple

from pipelines.core.domain import LABELS, Label

SUPPORTS: Label = "SUPPORTS"
REFUTES: Label = "REFUTES"
NEI: Label = "NOT ENOUGH INFO"


class VerdictWord(NamedTuple):
    word: str  # as its source writes it
    label: Label  # the canonical verdict it reads as
    said_by: Literal["card", "protocol", "dataset", "rating"]  # card: the card's own words; rating: a fact-checker's scale


WORDS: tuple[VerdictWord, ...] = (
    # the card's own three words
    VerdictWord("SUPPORTED", SUPPORTS, "card"),
    VerdictWord("REFUTED", REFUTES, "card"),
    VerdictWord("NOT ENOUGH INFO", NEI, "card"),
    # the protocols: desk (FEVER's words), proclaim (the courtroom's), radar
    VerdictWord("SUPPORTS", SUPPORTS, "protocol"),
    VerdictWord("REFUTES", REFUTES, "protocol"),
    VerdictWord("NOT SUPPORTED", REFUTES, "protocol"),
    VerdictWord("INCONCLUSIVE", NEI, "protocol"),
    VerdictWord("TRUE", SUPPORTS, "protocol"),
    VerdictWord("FALSE", REFUTES, "protocol"),
    VerdictWord("HALF-TRUE", NEI, "protocol"),
    # datasets: Check-COVID, SciFact, everyday spellings
    VerdictWord("SUPPORT", SUPPORTS, "dataset"),
    VerdictWord("REFUTE", REFUTES, "dataset"),
    VerdictWord("CONTRADICT", REFUTES, "dataset"),
    VerdictWord("CONTRADICTS", REFUTES, "dataset"),
    VerdictWord("NOTENOUGHINFO", NEI, "dataset"),
    VerdictWord("NEI", NEI, "dataset"),
    VerdictWord("NOT ENOUGH INFORMATION", NEI, "dataset"),
    # fact-checkers' ratings: PolitiFact's scale, and this desk's own ClaimReview alternateName for NOT ENOUGH INFO
    VerdictWord("MOSTLY-TRUE", SUPPORTS, "rating"),
    VerdictWord("MOSTLY-FALSE", REFUTES, "rating"),
    VerdictWord("PANTS ON FIRE", REFUTES, "rating"),
    VerdictWord("UNPROVEN", NEI, "rating"),
)
DISPLAY: dict[Label, str] = {SUPPORTS: "SUPPORTED", REFUTES: "REFUTED", NEI: "NOT ENOUGH INFO"}
COMMON_LABELS: tuple[str, ...] = tuple(DISPLAY[label] for label in LABELS)


def normalise(label: str) -> str:
    """A spelling as the table matches it: upper case, letters only, single spaces (``half-true.`` -> ``HALF TRUE``)."""
    return " ".join(re.sub(r"[^A-Z ]", " ", label.upper()).split())


_CANONICAL: dict[str, Label] = {normalise(w.word): w.label for w in WORDS}


def canonical(label: str | None, extra: Mapping[str, Label] | None = None) -> Label | None:
    """The canonical label (SUPPORTS / REFUTES / NOT ENOUGH INFO) for any known spelling (``extra`` first), or None."""
    if label is None:
        return None
    key = normalise(label)
    if extra:
        for alias, target in extra.items():
            if normalise(alias) == key:
                return target
    return _CANONICAL.get(key)


def common_label(label: str) -> str:
    """The label in the card's vocabulary (SUPPORTED / REFUTED / NOT ENOUGH INFO); an unknown one stays as it is."""
    found = canonical(label)
    return DISPLAY[found] if found is not None else label


def known_words() -> tuple[str, ...]:
    """Every spelling the table reads, as the table writes it (for a message that lists them)."""
    return tuple(w.word for w in WORDS)


def protocol_words(common: str) -> tuple[str, ...]:
    """The protocols' and raters' own words that read as ``common`` (SUPPORTED: SUPPORTS, TRUE, MOSTLY-TRUE), for a caption
    or a filter."""
    return tuple(w.word for w in WORDS if w.said_by in ("protocol", "rating") and DISPLAY[w.label] == common)


def checker_label(label: str) -> str:
    """A checker's verdict in the one vocabulary (a protocol's word is taken as its common one); ValueError for anything else."""
    common = common_label(label)
    if common not in COMMON_LABELS:
        raise ValueError(
            f"{' '.join(label.split())[:40]!r} is not a verdict here: choose {', '.join(COMMON_LABELS[:-1])} or {COMMON_LABELS[-1]}"
        )
    return common


@dataclass(frozen=True)
class CardLabel:
    """A label as the card shows it: the common word, and the protocol's (or checker's) own when it differs."""

    common: str
    own: str

    @classmethod
    def of(cls, label: str) -> CardLabel:
        return cls(common_label(label), label)


__all__ = [
    "COMMON_LABELS",
    "DISPLAY",
    "WORDS",
    "CardLabel",
    "VerdictWord",
    "canonical",
    "checker_label",
    "common_label",
    "known_words",
    "normalise",
    "protocol_words",
]

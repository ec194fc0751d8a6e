"""The one label mapping: every protocol's and every dataset's labels onto SUPPORTS / REFUTES / NOT ENOUGH INFO.

Protocols speak three vocabularies (FEVER's SUPPORTS/REFUTES/NOT ENOUGH INFO, the courtroom's
SUPPORTED/NOT SUPPORTED/INCONCLUSIVE, RADAR's TRUE/HALF-TRUE/FALSE) and datasets their own
(Check-COVID's SUPPORT/REFUTE/NOTENOUGHINFO). Scoring compares them on one canonical set:

| canonical | protocol labels | dataset labels |
| --- | --- | --- |
| SUPPORTS | SUPPORTS, SUPPORTED, TRUE | SUPPORT, SUPPORTS, SUPPORTED, TRUE |
| REFUTES | REFUTES, NOT SUPPORTED, FALSE | REFUTE, REFUTES, REFUTED, FALSE |
| NOT ENOUGH INFO | NOT ENOUGH INFO, INCONCLUSIVE, HALF-TRUE | NOTENOUGHINFO, NEI, NOT ENOUGH INFO |

HALF-TRUE goes to NOT ENOUGH INFO: a half-true claim is neither supported nor refuted as
stated, which is what a three-class dataset's third class means.

``three`` scoring uses all three classes. ``binary`` scoring keeps only claims whose gold
label is SUPPORTS or REFUTES (the usual binary subset of Check-COVID); a NOT ENOUGH INFO
prediction on such a claim is an abstention and counts as wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pipelines.domain import LABELS, Label

LabelMode = Literal["three", "binary"]
LABEL_MODES: tuple[LabelMode, ...] = ("three", "binary")
SUPPORTS: Label = "SUPPORTS"
REFUTES: Label = "REFUTES"
NEI: Label = "NOT ENOUGH INFO"

# Every spelling we accept, normalised by ``_normalise`` (upper case, single spaces, no punctuation).
ALIASES: dict[str, Label] = {
    # FEVER / Check-COVID / SciFact
    "SUPPORTS": SUPPORTS,
    "SUPPORT": SUPPORTS,
    "SUPPORTED": SUPPORTS,
    "REFUTES": REFUTES,
    "REFUTE": REFUTES,
    "REFUTED": REFUTES,
    "CONTRADICT": REFUTES,
    "CONTRADICTS": REFUTES,
    "NOT ENOUGH INFO": NEI,
    "NOT ENOUGH INFORMATION": NEI,
    "NOTENOUGHINFO": NEI,
    "NEI": NEI,
    # the courtroom protocol
    "NOT SUPPORTED": REFUTES,
    "INCONCLUSIVE": NEI,
    # RADAR
    "TRUE": SUPPORTS,
    "FALSE": REFUTES,
    "HALF TRUE": NEI,
}


class LabelMappingError(ValueError):
    """A label that the mapping does not know; the message lists the accepted ones."""


def _normalise(label: str) -> str:
    return " ".join(re.sub(r"[^A-Z ]", " ", label.upper()).split())


def canonical(label: str | None, extra: Mapping[str, Label] | None = None) -> Label | None:
    """The canonical label for any known spelling (``extra`` first), or None when unknown or empty."""
    if label is None:
        return None
    key = _normalise(label)
    if extra:
        for alias, target in extra.items():
            if _normalise(alias) == key:
                return target
    return ALIASES.get(key)


def require_canonical(label: str, where: str, extra: Mapping[str, Label] | None = None) -> Label:
    """Like ``canonical`` but an unknown label raises, naming where it came from and how to map it."""
    found = canonical(label, extra)
    if found is None:
        known = ", ".join(sorted({*ALIASES, *(extra or {})}))
        raise LabelMappingError(
            f"{where}: unknown label {label!r}. Use one of {known}, or map it, e.g. --label-map {label!r}=REFUTES on the CLI"
        )
    return found


def parse_label_map(pairs: list[str] | str | None) -> dict[str, Label]:
    """``["Pants on fire=REFUTES", ...]`` (or one comma-separated string) as an extra mapping."""
    if not pairs:
        return {}
    items = pairs.split(",") if isinstance(pairs, str) else pairs
    mapping: dict[str, Label] = {}
    for item in items:
        if not item.strip():
            continue
        source, sep, target = item.partition("=")
        found = ALIASES.get(_normalise(target)) if sep else None
        if not source.strip() or found is None:
            raise LabelMappingError(f"label map entry {item!r}: write it as 'THEIR LABEL=SUPPORTS' (or REFUTES, NOT ENOUGH INFO)")
        mapping[source.strip()] = found
    return mapping


def classes(mode: LabelMode) -> tuple[Label, ...]:
    """The gold classes scored in ``mode``."""
    return LABELS if mode == "three" else (SUPPORTS, REFUTES)


def keeps(gold: Label, mode: LabelMode) -> bool:
    """Whether a claim with this gold label is scored in ``mode``."""
    return gold in classes(mode)

"""Labels for scoring: the evaluation's view of the one verdict vocabulary, and which classes each mode scores.

Every protocol's and dataset's spelling is read onto SUPPORTS / REFUTES / NOT ENOUGH INFO by the one table in
``pipelines.record.labels`` (``canonical``; the card shows the same table as SUPPORTED / REFUTED / NOT ENOUGH INFO).
What this module adds: a dataset's own words mapped on the command line (``--label-map "Pants on fire=REFUTES"``, looked
up before the table), the message an unknown label gets, and the scoring modes.

``three`` scoring uses all three classes. ``binary`` scoring keeps only claims whose gold
label is SUPPORTS or REFUTES (the usual binary subset of Check-COVID); a NOT ENOUGH INFO
prediction on such a claim is an abstention and counts as wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pipelines.core.domain import LABELS, Label
from pipelines.record.labels import NEI, REFUTES, SUPPORTS, canonical, known_words

LabelMode = Literal["three", "binary"]
LABEL_MODES: tuple[LabelMode, ...] = ("three", "binary")


class LabelMappingError(ValueError):
    """A label that the mapping does not know; the message lists the accepted ones."""


def require_canonical(label: str, where: str, extra: Mapping[str, Label] | None = None) -> Label:
    """Like ``canonical`` but an unknown label raises, naming where it came from and how to map it."""
    found = canonical(label, extra)
    if found is None:
        known = ", ".join(sorted({*known_words(), *(extra or {})}))
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
        found = canonical(target) if sep else None
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


__all__ = [
    "LABEL_MODES",
    "NEI",
    "REFUTES",
    "SUPPORTS",
    "LabelMappingError",
    "LabelMode",
    "canonical",
    "classes",
    "keeps",
    "parse_label_map",
    "require_canonical",
]

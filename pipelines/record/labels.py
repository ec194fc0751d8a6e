"""The one verdict vocabulary: SUPPORTED / REFUTED / NOT ENOUGH INFO, with each protocol's own word read into it.

Every protocol names its labels its own way (desk SUPPORTS, proclaim SUPPORTED, radar TRUE
and HALF-TRUE); the card, History's filter, the override list and every export speak these
three words and show the protocol's own as a detail (``CardLabel``). Kept apart from the
card (``verdict_card`` offers the same names) so the digest and the store read it too.
"""

from __future__ import annotations

from dataclasses import dataclass

COMMON_LABELS = ("SUPPORTED", "REFUTED", "NOT ENOUGH INFO")
_COMMON = {
    "SUPPORTS": "SUPPORTED",
    "SUPPORTED": "SUPPORTED",
    "TRUE": "SUPPORTED",
    "MOSTLY-TRUE": "SUPPORTED",
    "REFUTES": "REFUTED",
    "REFUTED": "REFUTED",
    "NOT SUPPORTED": "REFUTED",
    "FALSE": "REFUTED",
    "MOSTLY-FALSE": "REFUTED",
    "NOT ENOUGH INFO": "NOT ENOUGH INFO",
    "INCONCLUSIVE": "NOT ENOUGH INFO",
    "HALF-TRUE": "NOT ENOUGH INFO",  # part holds, part does not: the claim as a whole is neither supported nor refuted
}


def common_label(label: str) -> str:
    """The label in the card's vocabulary (SUPPORTED / REFUTED / NOT ENOUGH INFO); an unknown one stays as it is."""
    return _COMMON.get(" ".join(label.split()).upper(), label)


def protocol_words(common: str) -> tuple[str, ...]:
    """The protocols' own words that read as ``common`` (SUPPORTED: SUPPORTS, TRUE, MOSTLY-TRUE), for a caption or a filter."""
    return tuple(own for own, word in _COMMON.items() if word == common and own != common)


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


__all__ = ["COMMON_LABELS", "CardLabel", "checker_label", "common_label", "protocol_words"]

"""A probability as the page, the CLI and the reasons show it: never "100%" or "1.00" short of certainty.

A calibrated probability of 0.996 is not a certainty, and rounding it to "100%" tells a
checker that it is. Within half a unit of the last digit shown from 0 or 1, the text says
"over" or "under" instead.
"""

from __future__ import annotations


def percent(p: float) -> str:
    """``p`` as a whole percentage: "over 99%" from 0.995 up to (not including) 1, "under 1%" above 0 below 0.005."""
    return _shown(p, f"{p:.0%}", "over 99%", "under 1%")


BELIEF_WORDS = {"SUPPORTS": "supported", "REFUTES": "refuted", "NOT ENOUGH INFO": "not enough info"}


def belief_line(probabilities: dict[str, float]) -> str:
    """A belief over the three labels in words: 'supported 62%, refuted 30%, not enough info 8%'."""
    return ", ".join(f"{word} {percent(probabilities.get(label, 0.0))}" for label, word in BELIEF_WORDS.items())


def decimal(p: float) -> str:
    """``p`` to two decimals: ">0.99" from 0.995 up to (not including) 1, "<0.01" above 0 below 0.005."""
    return _shown(p, f"{p:.2f}", ">0.99", "<0.01")


def _shown(p: float, rounded: str, near_one: str, near_zero: str) -> str:
    if 0.995 <= p < 1.0:
        return near_one
    if 0.0 < p < 0.005:
        return near_zero
    return rounded

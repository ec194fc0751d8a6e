"""A debate turn that repeats another's nearly word for word: a weak model echoes the text it read last.

Measured on the embedded model (bench/protocols.py's records, the first five Check-COVID dev claims):
toolmad's debaters wrote the opponent's previous answer again in 19 of 20 later turns, a word changed
here and there; proclaim's counsels in 12 of 22, madke's debaters in 8 of 13, mad's in 5 of 16.
"""

from __future__ import annotations

from difflib import SequenceMatcher

ECHO_AT = 0.9  # difflib's ratio of matching characters; two independent answers on one claim score well below


def echoes(text: str, earlier: str) -> bool:
    """``text`` is ``earlier`` again, nearly word for word (white space aside)."""
    a, b = " ".join(text.split()), " ".join(earlier.split())
    if not a or not b:
        return False
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return matcher.real_quick_ratio() >= ECHO_AT and matcher.quick_ratio() >= ECHO_AT and matcher.ratio() >= ECHO_AT

"""How alike to its claim the passage that decides it was, on train claims of two beats: what a search that found nothing near means.

A search returns its nearest passages whether or not the corpus holds anything on the claim, and the reader
then finds a side in them (on the demo corpus, a claim on hand washing was read as supported by passages on
antibiotics and masks). What does tell: how alike to the claim (MiniLM cosine) the nearest passage found is.
The passage that decides a claim sat further than 0.40 from it for 1% of Check-COVID's train claims and 10%
of LIAR-PLUS's; off-subject claims on the demo corpus found nothing nearer than 0.23-0.41, on-subject ones
0.70-0.75 (docs/measurements/2026-12-05-exhibit-likeness.md). The shipped table
(``data/deciding-likeness.json``, written by ``bench/exhibit_likeness.py --write``) holds each beat's train
likenesses; the card says how many of them were closer than this run's nearest passage when most were.
"""

from __future__ import annotations

import bisect
import json
from functools import cache
from importlib import resources

TABLE = "deciding-likeness.json"
MOST = 0.90  # the card speaks when at least this share of every beat's deciding passages was closer than the nearest found


@cache
def deciding_likeness() -> dict[str, tuple[float, ...]]:
    """Each beat's train claims' likeness to the passage that decides them, sorted (empty when the table is missing)."""
    try:
        table = json.loads(resources.files("pipelines.calibration.data").joinpath(TABLE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(name): tuple(sorted(float(x) for x in values)) for name, values in table.get("beats", {}).items()}


def far_note(nearest: float | None, *, read: int = 1) -> str:
    """The card's words when the nearest passage found is further from the claim than most deciding passages were ('' otherwise)."""
    beats = deciding_likeness()
    if nearest is None or not beats:
        return ""
    closer = {name: (len(values) - bisect.bisect_right(values, nearest), len(values)) for name, values in beats.items()}
    if any(n / total < MOST for n, total in closer.values()):
        return ""
    shares = " and ".join(f"{n} of {total} {name}" for name, (n, total) in closer.items())
    then = "; the verdict is then read from passages on other subjects" if read else ""  # none read: nothing was read from them
    return (
        f"Nothing the search found is near the claim: the nearest passage is {nearest:.2f} alike to it (MiniLM), and the passage "
        f"that decides a claim was nearer than that for {shares}. This corpus may not hold what decides this claim{then}."
    )

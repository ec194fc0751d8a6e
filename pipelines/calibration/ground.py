"""Where a reader was measured, and whether a run stands on that ground: what the verdict card says about its probability.

desk's probability is a calibration's, fitted and measured on labelled claims of one corpus
(the shipped ones: Check-COVID's paper abstracts). On claims of another beat, read from another
kind of evidence, the same reader may have no signal at all (issue 51 measured chance-level
separation on Wikipedia sentences and on fact-checkers' answers). So each calibration lists where it was measured
(``settings["measured_on"]``: the corpus, the claims, AUC, accuracy and ECE on claims it was not fitted on),
and a run's reading is on measured ground only when its calibration was measured on the corpus the
run searched and every exhibit it read came from that corpus. Elsewhere the card says plainly that
the probability is unmeasured, and shows it as a ranking, never as a frequency.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pipelines.calibration.files import Calibration
from pipelines.core.domain import Evidence

MEASURED = "measured"
UNMEASURED = "unmeasured"


@dataclass(frozen=True)
class Ground:
    """Whether a reading's probability was measured on this kind of evidence, and the card's words for it."""

    kind: str  # MEASURED or UNMEASURED
    words: str


def measurements(calibration: Calibration | None) -> list[Mapping[str, Any]]:
    """The calibration's measurements on claims it was not fitted on (``settings["measured_on"]``), well-formed ones only."""
    if calibration is None:
        return []
    found = calibration.settings.get("measured_on", [])
    return [m for m in found if isinstance(m, Mapping) and m.get("corpus")] if isinstance(found, list) else []


def measurement_words(measurement: Mapping[str, Any]) -> str:
    """One measurement in words: 'Check-COVID dev (scientific abstracts on COVID-19), 106 claims: AUC 0.86, accuracy 0.755, ECE 0.049'."""
    what = str(measurement.get("what") or measurement["corpus"])
    figures = [
        f"{name} {float(measurement[key]):.3g}"
        for key, name in (("auc", "AUC"), ("accuracy", "accuracy"), ("ece", "ECE"))
        if key in measurement
    ]
    claims = f", {int(measurement['claims'])} claims" if "claims" in measurement else ""
    return f"{what}{claims}: {', '.join(figures)}" if figures else f"{what}{claims}"


def reading_ground(calibration: Calibration | None, corpus: str, exhibits: Iterable[Evidence]) -> Ground:
    """Whether a reading of ``exhibits`` with ``calibration``, on a run that searched ``corpus``, stands on measured ground."""
    read = list(exhibits)
    if calibration is None:
        return Ground(UNMEASURED, "No calibration was fitted for this model and question: the probability is unmeasured, a ranking only.")
    found = measurements(calibration)
    if not found:
        return Ground(
            UNMEASURED,
            "This reader's calibration was never measured on claims it was not fitted on: the probability is unmeasured here, "
            "a ranking only.",
        )
    elsewhere = "; ".join(measurement_words(m) for m in found)
    here = [m for m in found if str(m["corpus"]) == corpus]
    if not here:
        return Ground(
            UNMEASURED,
            f"This reader was never measured on the corpus this run searched ({corpus}), only on {elsewhere}. "
            "Here its probability is unmeasured: read it as a ranking of this claim among others, not as a frequency.",
        )
    outside = sorted({e.source for e in read if e.source != "corpus"})
    if outside:
        kinds = " and ".join({"web": "web pages", "user": "evidence a checker pasted"}.get(s, s) for s in outside)
        return Ground(
            UNMEASURED,
            f"This reader was measured on {elsewhere}, but this run also read {kinds}, where it was never measured: "
            "the probability is unmeasured, a ranking only.",
        )
    return Ground(MEASURED, f"This reader was measured on this corpus: {measurement_words(here[0])}.")

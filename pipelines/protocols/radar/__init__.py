"""`radar`: its declaration, found through the entry point ``radar`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``, its fake responders ``fake.py``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.radar.settings import LABELS, RadarConfig

PROTOCOL = Protocol(
    name="radar",
    run="pipelines.protocols.radar.run:run_radar",
    title="RADAR: Politician vs Scientist (half-truths)",
    description=(
        "A Politician and a Scientist debate over 20 shared passages (opening, rebuttal, closing); the Scientist lists "
        "omitted context. Stops early when the stop margin and the judge's confidence clear their thresholds. "
        "TRUE / HALF-TRUE / FALSE."
    ),
    labels=LABELS,
    card=CardFacts(
        how_decided="Debaters opened and rebutted; a judge ruled as soon as it was sure enough.",
        confidence_source="the judge's probability for the label, read from the model's token probabilities or sampling",
    ),
    settings=Settings(RadarConfig, "Settings of the Politician-vs-Scientist half-truth debate."),
    gathers_evidence=True,
    decided_by={"judge": "the judge ruled"},
    fake="pipelines.protocols.radar.fake",
)

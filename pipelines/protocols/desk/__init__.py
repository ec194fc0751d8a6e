"""`desk`: its declaration, found through the entry point ``desk`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``, its fake responders ``fake.py``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.desk.settings import DeskConfig

PROTOCOL = Protocol(
    name="desk",
    run="pipelines.protocols.desk.run:run_desk",
    title="Desk (default): exhibit stances, calibrated verdict",
    description=(
        "Reads each retrieved exhibit's stance from the model's answer probabilities (option orders averaged), "
        "combines them into a calibrated verdict, and debates only when strong exhibits conflict. Built for small local models."
    ),
    probability_roles=("judge",),
    card=CardFacts(
        how_decided="Each exhibit was read for whether it supports or contradicts the claim, and the readings were weighed together.",
        confidence_source="the probability of the label, weighed from each exhibit's stance",
        quotes_model=False,  # its rationale is its weighing, which the card has said already
        debate_note=(
            "Strong exhibits pointed both ways, so two advocates argued over them and the contested exhibits were read again "
            "in the light of both sides; this verdict is that second reading (the debate is under Round 1 below)."
        ),
    ),
    settings=Settings(DeskConfig, "Settings of the desk protocol (exhibit stances, calibrated verdict)."),
    ruled_beside=False,
    default=True,
    reads_exhibits=True,
    fake="pipelines.protocols.desk.fake",
    benchmark=True,
)

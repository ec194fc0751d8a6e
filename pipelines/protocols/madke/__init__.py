"""`madke`: its declaration, found through the entry point ``madke`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``, its fake responders ``fake.py``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.madke.settings import MadkeConfig

PROTOCOL = Protocol(
    name="madke",
    run="pipelines.protocols.madke.run:run_madke",
    title="MADKE: shared knowledge pool",
    description=(
        "One evidence pool (10 corpus passages + 5 web results) before the debate; each turn each debater picks up to 3 "
        "items or none; a judge stops the debate when the debaters agree; a summarizer writes the answer."
    ),
    card=CardFacts(
        how_decided="Two debaters argued, each from evidence it chose; the debate ended when a judge found them agreeing or the rounds ran out.",
        no_confidence="the summarizer or the judge writes the label; no probability is read and no vote is taken.",
    ),
    settings=Settings(MadkeConfig, "Settings of the shared-knowledge-pool debate."),
    gathers_evidence=True,
    decided_by={"summarizer": "the summarizer wrote"},
    fake="pipelines.protocols.madke.fake",
)

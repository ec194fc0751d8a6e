"""`mad`: its declaration, found through the entry point ``mad`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.mad.settings import MadConfig

PROTOCOL = Protocol(
    name="mad",
    run="pipelines.protocols.mad.run:run_mad",
    title="Plain debate (baseline)",
    description="Two debaters argue for 3 rounds from what they know, with no retrieval; a judge rules. The yardstick for how much evidence adds.",
    card=CardFacts(
        how_decided="Two debaters argued from what the model knows (this protocol retrieves no evidence); a judge then ruled.",
        no_confidence="a judge names a label after the debate; it gives no probability and no vote is taken.",
    ),
    settings=Settings(MadConfig, "Settings of the plain debate baseline."),
    decided_by={"judge": "the judge ruled"},
)

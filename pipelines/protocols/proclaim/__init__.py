"""`proclaim`: its declaration, found through the entry point ``proclaim`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``, its fake responders ``fake.py``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.proclaim.settings import ProClaimConfig

PROTOCOL = Protocol(
    name="proclaim",
    run="pipelines.protocols.proclaim.run:run_proclaim",
    title="Courtroom (PROClaim)",
    description="Plaintiff and Defense argue over admitted evidence gathered round by round; a panel of three judges votes "
    "and the confidence is computed from the votes, the judges' scores, a role switch and self-reflection.",
    labels=("SUPPORTED", "NOT SUPPORTED", "INCONCLUSIVE"),  # stages/panel.PANEL_LABELS (a declaration imports no stage)
    card=CardFacts(
        how_decided="A court-style debate over admitted exhibits, then a panel of judges voted.",
        confidence_source="the panel's vote share and the quality of the arguments, adjusted by the role switch",
    ),
    settings=Settings(ProClaimConfig, "Settings of the courtroom protocol."),
    gathers_evidence=True,
    decided_by={"panel": "the panel voted"},
    fake="pipelines.protocols.proclaim.fake",
)

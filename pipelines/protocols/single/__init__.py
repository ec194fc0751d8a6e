"""`single`: its declaration, found through the entry point ``single`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.single.settings import SingleConfig

PROTOCOL = Protocol(
    name="single",
    run="pipelines.protocols.single.run:run_single",
    title="Single agent (baseline)",
    description="One agent: writes a query, retrieves evidence, reasons step by step, labels the claim.",
    card=CardFacts(
        how_decided="One agent searched the sources, read what it found and answered.",
        no_confidence="one agent writes a label with its answer; nothing measures how sure it is.",
    ),
    settings=Settings(SingleConfig, "Settings of the single-agent baseline."),
    ruled_beside=False,
    decided_by={"agent": "the agent answered"},
    benchmark=True,
)

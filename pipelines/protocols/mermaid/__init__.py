"""`mermaid`: its declaration, found through the entry point ``mermaid`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``, its fake responders ``fake.py``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.mermaid.settings import MermaidConfig

PROTOCOL = Protocol(
    name="mermaid",
    run="pipelines.protocols.mermaid.run:run_mermaid",
    title="MERMAID: triplets, ReAct, memory",
    description=(
        "The claim becomes (subject, relation, object) triplets; a researcher calls tools step by step (corpus, web, "
        "memory; at most 5 steps); evidence is kept in a memory that later claims recall."
    ),
    card=CardFacts(
        how_decided="A researcher agent broke the claim into facts, searched for each, and answered.",
        no_confidence="the researcher agent answers with a label; no probability is read.",
    ),
    settings=Settings(MermaidConfig, "Settings of the triplet + ReAct + memory protocol."),
    gathers_evidence=True,
    decided_by={"agent": "the agent answered"},
    fake="pipelines.protocols.mermaid.fake",
)

"""`toolmad`: its declaration, found through the entry point ``toolmad`` in pyproject.toml's ``debatedesk.protocols``.

Its run is ``run.py``, its settings ``settings.py``, its own prompts ``prompts/``, its fake responders ``fake.py``.
"""

from pipelines.protocols.base import CardFacts, Protocol, Settings
from pipelines.protocols.toolmad.settings import ToolMadConfig

PROTOCOL = Protocol(
    name="toolmad",
    run="pipelines.protocols.toolmad.run:run_toolmad",
    title="Tool-MAD (RAG vs Search)",
    description=(
        "Two debaters with different tools (local corpus vs web) argue up to 3 rounds, rewriting their queries "
        "each round; every answer gets faithfulness and answer-relevance scores; they stop on a grounded "
        "agreement, else a judge rules."
    ),
    card=CardFacts(
        how_decided="Two debaters, one searching the corpus and one the web, did not reach a grounded agreement; a judge ruled.",
        no_confidence="the label is the debaters' consensus or a judge's ruling; the F and AR scores check the answers, not the label.",
        how_decided_by={
            "consensus": "Two debaters, one searching the corpus and one the web, reached the same answer, and both answers were grounded in their evidence."
        },
    ),
    settings=Settings(ToolMadConfig, "Settings of the Tool-MAD debate (RAG vs Search, F and AR scores)."),
    gathers_evidence=True,
    scored_answers=True,
    decided_by={"judge": "the judge ruled", "consensus": "the debaters agreed on", "fallback": "the debaters' last labels give"},
    fake="pipelines.protocols.toolmad.fake",
)

"""How the fake answers each protocol's requests, one module per protocol; importing this package registers them all."""

from pipelines.llm.fake.registry import CHOICE_RESPONDERS, RESPONDERS, TEXT_RESPONDERS
from pipelines.llm.fake.responders import desk, madke, mermaid, proclaim, radar, retrieval, toolmad

__all__ = ["CHOICE_RESPONDERS", "RESPONDERS", "TEXT_RESPONDERS", "desk", "madke", "mermaid", "proclaim", "radar", "retrieval", "toolmad"]

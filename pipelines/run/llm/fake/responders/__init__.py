"""How the fake answers the requests protocols share (retrieval, the belief); each protocol's own are in its folder's
``fake.py`` (registered on first use through pipelines.protocols.base.load_fake_responders)."""

from pipelines.run.llm.fake.registry import CHOICE_RESPONDERS, RESPONDERS, TEXT_RESPONDERS
from pipelines.run.llm.fake.responders import belief, retrieval

__all__ = ["CHOICE_RESPONDERS", "RESPONDERS", "TEXT_RESPONDERS", "belief", "retrieval"]

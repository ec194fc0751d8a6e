"""The `fake` backend: a deterministic, instant stand-in for a model, for tests and demos; never a real model.

- ``prompt``: what the fake reads out of a prompt (``PromptView``) and word overlap;
- ``registry``: responders registered by schema name, option set or prompt marker;
- ``generic``: the answers where none is registered (an argument, a choice, a filled schema);
- ``responders``: the shared ones (retrieval, belief); each protocol's own are in ``pipelines/protocols/NAME/fake.py``;
- ``model``: ``FakeChatModel`` and the backend's registration (``BACKEND``).
"""

from pipelines.run.llm.fake.model import BACKEND, FakeChatModel, build_fake
from pipelines.run.llm.fake.prompt import PromptView, content_words, overlap
from pipelines.run.llm.fake.responders import CHOICE_RESPONDERS, RESPONDERS, TEXT_RESPONDERS

__all__ = [
    "BACKEND",
    "CHOICE_RESPONDERS",
    "RESPONDERS",
    "TEXT_RESPONDERS",
    "FakeChatModel",
    "PromptView",
    "build_fake",
    "content_words",
    "overlap",
]

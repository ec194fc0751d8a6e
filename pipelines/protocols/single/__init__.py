"""`single`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``single`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.single.settings import SingleConfig

PROTOCOL = declare(__name__, SingleConfig)

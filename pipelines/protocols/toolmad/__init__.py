"""`toolmad`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``toolmad`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.toolmad.settings import ToolMadConfig

PROTOCOL = declare(__name__, ToolMadConfig)

"""`desk`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``desk`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.desk.settings import DeskConfig

PROTOCOL = declare(__name__, DeskConfig)

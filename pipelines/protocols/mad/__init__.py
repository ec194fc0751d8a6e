"""`mad`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``mad`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.mad.settings import MadConfig

PROTOCOL = declare(__name__, MadConfig)

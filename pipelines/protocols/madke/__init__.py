"""`madke`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``madke`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.madke.settings import MadkeConfig

PROTOCOL = declare(__name__, MadkeConfig)

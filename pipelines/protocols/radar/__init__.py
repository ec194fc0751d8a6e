"""`radar`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``radar`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.radar.settings import RadarConfig

PROTOCOL = declare(__name__, RadarConfig)

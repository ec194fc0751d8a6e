"""`proclaim`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``proclaim`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.proclaim.settings import ProClaimConfig

PROTOCOL = declare(__name__, ProClaimConfig)

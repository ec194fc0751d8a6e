"""`mermaid`: its declaration (what protocol.toml says of it, with its run, settings and fake responders), found through
the entry point ``mermaid`` in pyproject.toml's ``debatedesk.protocols``."""

from pipelines.protocols.base import declare
from pipelines.protocols.mermaid.settings import MermaidConfig

PROTOCOL = declare(__name__, MermaidConfig)

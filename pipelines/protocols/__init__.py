"""The debate protocols, each registered by name (see base.get_protocol)."""

from pipelines.protocols import mad, madke, mermaid, radar, single  # noqa: F401

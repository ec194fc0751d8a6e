"""The debate protocols, each registered by name (see base.get_protocol)."""

from pipelines.protocols import desk, mad, madke, mermaid, proclaim, radar, single, toolmad  # noqa: F401

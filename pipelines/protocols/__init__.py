"""The debate protocols, each registered by name (see base.get_protocol)."""

from pipelines.protocols import proclaim, single, toolmad  # noqa: F401

"""DebateDesk's UI-free core: models, events, config, LLM backends, tools, protocols, store."""

__version__ = "0.1.0"

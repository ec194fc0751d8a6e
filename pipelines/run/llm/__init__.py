"""LLM backends (fake, embedded, openai) behind one registry, and the client the protocols call."""

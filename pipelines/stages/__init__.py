"""Stages shared by the protocols: retrieval, streamed arguments, label parsing."""

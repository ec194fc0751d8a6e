"""The debate protocols: one folder each, declared in pyproject.toml's ``debatedesk.protocols`` entry points (see base.py)."""

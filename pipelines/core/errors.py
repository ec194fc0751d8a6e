"""The DebateDesk error family: each message says what went wrong and how to fix it.

Recoverable failures (one search, one source, one judge) are turned into events by the
stage that meets them and the run goes on; the rest propagate.
"""

from __future__ import annotations


class DebateDeskError(Exception):
    """Base of every error the product raises on purpose."""


class InvalidClaimError(DebateDeskError, ValueError):
    """The claim is empty or too long to check."""


class RunBusyError(DebateDeskError):
    """A run another process (or another session of this one) is running: it has one owner at a time."""


class UnknownNameError(DebateDeskError, KeyError):
    """A registry lookup for a name that is not registered; lists the valid names."""

    def __init__(self, kind: str, name: str, valid: list[str]) -> None:
        self.kind, self.name, self.valid = kind, name, sorted(valid)
        super().__init__(f"unknown {kind} {name!r}; choose one of: {', '.join(self.valid)}")

    def __str__(self) -> str:
        return str(self.args[0])


class UnknownBackendError(UnknownNameError):
    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__("backend", name, valid)


class UnknownProtocolError(UnknownNameError):
    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__("protocol", name, valid)


class UnknownCorpusError(UnknownNameError):
    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__("corpus", name, valid)


class BackendUnavailableError(DebateDeskError):
    """A model endpoint could not be reached or could not be started."""


class ModelOutputError(DebateDeskError):
    """A model answered, but not in the form asked for, even after retries."""


class StageFailedError(DebateDeskError):
    """A stage that the run cannot do without failed; carries the stage name."""

    def __init__(self, stage: str, reason: str) -> None:
        self.stage, self.reason = stage, reason
        super().__init__(f"{stage} failed: {reason}")


class ToolUnavailableError(DebateDeskError):
    """An evidence tool (web search, a corpus) cannot answer right now."""


WEB_UNAVAILABLE = "web search unavailable: "  # how the web search's ToolUnavailableError begins, before the reason


class IngestionError(DebateDeskError):
    """A file could not be read into a corpus; says which file and why."""


class StoreUnavailableError(DebateDeskError):
    """The run store cannot be reached or written (database down, disk full, folder read-only); says where and what to do."""


class UnstorableTextError(DebateDeskError, ValueError):
    """Text with a NUL character, which PostgreSQL cannot keep (and SQLite is made to refuse alike): refused before any SQL."""

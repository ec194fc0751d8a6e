"""A stored time as the desk shows it: to the minute, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime


def when(ts: float | None) -> str:
    """``2026-11-26 15:47 UTC`` for a Unix time; a dash where there is none."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC") if ts else "—"

"""A stored time as the desk shows it: always in UTC, to the minute in lists, to the second in the record."""

from __future__ import annotations

from datetime import UTC, datetime


def when(ts: float | None) -> str:
    """``2026-11-26 15:47 UTC`` for a Unix time; a dash where there is none."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC") if ts else "—"


def to_the_second(ts: float | None) -> str:
    """``2026-11-26 15:47:03 UTC``, as the verdict card, the audit trail and the exports write it; a dash where there is none."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if ts else "—"


def time_of_day(ts: float) -> str:
    """``15:47:03 UTC``, for a moment inside a run the page already dates."""
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%S UTC")


def duration(seconds: float) -> str:
    """``45 s``, ``5 min 07 s``, ``1 h 03 min``: a span of time as a person reads it, to the second under an hour."""
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"

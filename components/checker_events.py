"""How the checker's interventions and a run's pauses, resumes and interruptions look in the transcript.

``RunView.feed`` hands these events here, so a live run and a replayed one show them the
same way: who did what, when, with their reason. What they change (strikes, an override,
an interruption) is kept by the run's digest and drawn by the evidence table and the verdict box.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipelines.core.events import (
    INTERVENTIONS,
    Event,
    RecordImported,
    RunInterrupted,
    RunResumed,
    StepPaused,
    VerdictOverridden,
)
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import time_of_day
from pipelines.record.digest import describe_intervention

CHECKER_EVENTS = (*INTERVENTIONS, StepPaused, RunResumed, RunInterrupted, RecordImported)


def is_checker_event(evt: Event) -> bool:
    return isinstance(evt, CHECKER_EVENTS)


def _who(evt: Event, from_file: bool = False) -> str:
    if from_file:  # what an imported file says someone did: not this desk's audit trail
        return f"📄 the imported file says **{escape_markdown(getattr(evt, 'by', ''))}** · {time_of_day(evt.at)}"
    return f"🧑‍⚖️ **{escape_markdown(getattr(evt, 'by', ''))}** · {time_of_day(evt.at)}"


def render_checker_event(evt: Event, transcript: Any, log: Callable[[str], None], *, from_file: bool = False) -> None:
    """Write one intervention or lifecycle event into ``transcript`` (and the stage ``log``), live or replayed.

    ``from_file``: the event is part of an imported record (the digest says so), shown as the file's word.
    """
    match evt:
        case RecordImported(source=source, by=by, check=check, events=count):
            log(f"📥 imported from {escape_markdown(source)}")
            # markup: every field is escaped; the rest is ours
            transcript.info(
                f"📥 **Imported** from {escape_markdown(source)} by **{escape_markdown(by)}** ({time_of_day(evt.at)}). "
                f"The {count} events below are what the file says, not this desk's doing; no verdict in them is this desk's. "
                f"The file's check: {escape_markdown(check)}."
            )
        case StepPaused(round=number, next_queries=planned):
            title = f"Paused after round {number}" if number > 0 else "Paused before the first search"
            log(f"⏸️ {title.lower()} for the checker")
            planned_text = "; ".join(f"{escape_markdown(a)}: “{escape_markdown(q)}”" for a, q in planned.items())
            if evt.plan:
                planned_text = f"{escape_markdown(evt.plan_kind)}: " + "; ".join(f"“{escape_markdown(item)}”" for item in evt.plan)
            # markup: the title is the app's, planned_text is escaped above
            transcript.info(f"⏸️ **{title}** for the checker." + (f" Planned next: {planned_text}" if planned_text else ""))
        case RunResumed(attempt=attempt, replayed=replayed):
            log(f"▶️ resumed (attempt {attempt})")
            transcript.info(  # markup: numbers and a time only
                f"▶️ **Resumed** ({time_of_day(evt.at)}, attempt {attempt}): the {replayed} events above are from before; the journal answered the calls already made."
            )
        case VerdictOverridden() if from_file:  # the card shows only this desk's verdict: the file's claim is said here
            transcript.warning(f"{_who(evt, from_file)} · {describe_intervention(evt, _escaped)}")  # markup: escaped by _escaped
        case VerdictOverridden() | RunInterrupted():
            pass  # shown in the verdict box
        case _ if isinstance(evt, INTERVENTIONS):
            transcript.markdown(
                f"{_who(evt, from_file)} · {describe_intervention(evt, _escaped)}"
            )  # markup: every quoted string is escaped by _escaped


def _escaped(text: str, limit: int) -> str:
    return escape_markdown(text[:limit])

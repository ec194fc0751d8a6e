"""How the checker's interventions and a run's pauses, resumes and interruptions look in the transcript.

``RunView.feed`` hands these events here, so a live run and a replayed one show them the
same way: who did what, when, with their reason. What they change (strikes, an override,
an interruption) is kept by the run's digest and drawn by the evidence table and the verdict box.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components.safe_text import escape_markdown
from components.verdict import when
from pipelines.events import (
    INTERVENTIONS,
    CheckerAddedEvidence,
    CheckerAddedQuery,
    CheckerAdmittedEvidence,
    CheckerEditedQuery,
    CheckerStruckEvidence,
    Event,
    RunInterrupted,
    RunResumed,
    StepPaused,
    StepResumed,
)

CHECKER_EVENTS = (*INTERVENTIONS, StepPaused, RunResumed, RunInterrupted)


def is_checker_event(evt: Event) -> bool:
    return isinstance(evt, CHECKER_EVENTS)


def _who(evt: Event) -> str:
    return f"🧑‍⚖️ **{escape_markdown(getattr(evt, 'by', ''))}** · {when(evt.at)}"


def render_checker_event(evt: Event, transcript: Any, log: Callable[[str], None]) -> None:
    """Write one intervention or lifecycle event into ``transcript`` (and the stage ``log``), live or replayed."""
    match evt:
        case StepPaused(round=number, next_queries=planned):
            title = f"Paused after round {number}" if number > 0 else "Paused before the first search"
            log(f"⏸️ {title.lower()} for the checker")
            planned_text = "; ".join(f"{escape_markdown(a)}: “{escape_markdown(q)}”" for a, q in planned.items())
            # markup: the title is the app's, planned_text is escaped above
            transcript.info(f"⏸️ **{title}** for the checker." + (f" Planned next: {planned_text}" if planned_text else ""))
        case CheckerEditedQuery(agent=agent, before=before, after=after):
            transcript.markdown(
                f"{_who(evt)} edited **{escape_markdown(agent)}**'s next query: “{escape_markdown(before)}” → “{escape_markdown(after)}”"
            )
        case CheckerAddedQuery(query=query):
            transcript.markdown(f"{_who(evt)} added a query: “{escape_markdown(query)}”")
        case CheckerStruckEvidence(evidence_id=eid, reason=reason):
            transcript.markdown(f"{_who(evt)} struck **{escape_markdown(eid)}**: {escape_markdown(reason)}")
        case CheckerAdmittedEvidence(evidence_id=eid, reason=reason):
            transcript.markdown(f"{_who(evt)} admitted **{escape_markdown(eid)}**: {escape_markdown(reason)}")
        case CheckerAddedEvidence(evidence=e):
            where = f" from {escape_markdown(e.url)}" if e.url else ""
            transcript.markdown(
                f"{_who(evt)} added evidence **{escape_markdown(e.id)}**{where}: “{escape_markdown(e.text[:300])}”"
            )  # markup: where is escaped
        case StepResumed(action=action, note=note):
            verb = "stopped the debate: the verdict comes next" if action == "stop" else "let the run continue"
            transcript.markdown(f"{_who(evt)} {verb}" + (f" — {escape_markdown(note)}" if note else ""))  # markup: verb is the app's
        case RunResumed(attempt=attempt, replayed=replayed):
            log(f"▶️ resumed (attempt {attempt})")
            transcript.info(  # markup: numbers and a time only
                f"▶️ **Resumed** ({when(evt.at)}, attempt {attempt}): the {replayed} events above are from before; the journal answered the calls already made."
            )
        case _:
            pass  # an override and an interruption show in the verdict box

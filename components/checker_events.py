"""How the checker's interventions and a run's pauses, resumes and interruptions look in the transcript.

``RunView.feed`` hands these events here, so a live run and a replayed one show them the
same way: who did what, when, with their reason.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import streamlit as st

from components.badges import label_badge
from components.safe_text import escape_markdown
from pipelines.events import (
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
    VerdictOverridden,
)

if TYPE_CHECKING:
    from components.transcript import RunView

CHECKER_EVENTS = (
    StepPaused,
    StepResumed,
    CheckerEditedQuery,
    CheckerAddedQuery,
    CheckerStruckEvidence,
    CheckerAdmittedEvidence,
    CheckerAddedEvidence,
    VerdictOverridden,
    RunResumed,
    RunInterrupted,
)


def is_checker_event(evt: Event) -> bool:
    return isinstance(evt, CHECKER_EVENTS)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%S UTC")


def _who(evt: Event) -> str:
    return f"🧑‍⚖️ **{escape_markdown(getattr(evt, 'by', ''))}** · {_when(evt.at)}"


def render_checker_event(view: RunView, evt: Event) -> None:
    """Show one intervention or lifecycle event in ``view`` (live or replayed)."""
    match evt:
        case StepPaused(round=number, next_queries=planned):
            title = f"Paused after round {number}" if number > 0 else "Paused before the first search"
            view._log(f"⏸️ {title.lower()} for the checker")
            planned_text = "; ".join(f"{escape_markdown(a)}: “{escape_markdown(q)}”" for a, q in planned.items())
            # markup: the title is the app's, planned_text is escaped above
            view.transcript.info(f"⏸️ **{title}** for the checker." + (f" Planned next: {planned_text}" if planned_text else ""))
        case CheckerEditedQuery(agent=agent, before=before, after=after):
            view.transcript.markdown(
                f"{_who(evt)} edited **{escape_markdown(agent)}**'s next query: “{escape_markdown(before)}” → “{escape_markdown(after)}”"
            )
        case CheckerAddedQuery(query=query):
            view.transcript.markdown(f"{_who(evt)} added a query: “{escape_markdown(query)}”")
        case CheckerStruckEvidence(evidence_id=eid, reason=reason):
            view.struck[eid] = reason
            view.transcript.markdown(f"{_who(evt)} struck **{escape_markdown(eid)}**: {escape_markdown(reason)}")
            view._render_evidence()
        case CheckerAdmittedEvidence(evidence_id=eid, reason=reason):
            view.struck.pop(eid, None)
            view.admitted[eid] = reason
            view.transcript.markdown(f"{_who(evt)} admitted **{escape_markdown(eid)}**: {escape_markdown(reason)}")
            view._render_evidence()
        case CheckerAddedEvidence(evidence=e):
            view.evidence[e.id] = e
            where = f" from {escape_markdown(e.url)}" if e.url else ""
            view.transcript.markdown(
                f"{_who(evt)} added evidence **{escape_markdown(e.id)}**{where}: “{escape_markdown(e.text[:300])}”"
            )  # markup: where is escaped
            view._render_evidence()
        case StepResumed(action=action, note=note):
            verb = "stopped the debate: the verdict comes next" if action == "stop" else "let the run continue"
            view.transcript.markdown(f"{_who(evt)} {verb}" + (f" — {escape_markdown(note)}" if note else ""))  # markup: verb is the app's
        case VerdictOverridden():
            view.override = evt
            render_verdicts(view)
        case RunResumed(attempt=attempt, replayed=replayed):
            view._log(f"▶️ resumed (attempt {attempt})")
            view.transcript.info(  # markup: numbers and a time only
                f"▶️ **Resumed** ({_when(evt.at)}, attempt {attempt}): the {replayed} events above are from before; the journal answered the calls already made."
            )
        case RunInterrupted(reason=reason):
            view.interrupted = True
            view.verdict_slot.warning(
                f"⏸️ The run was interrupted: {escape_markdown(reason)}. Everything so far is kept; resume it from **History**."
            )
        case _:
            pass


def render_verdicts(view: RunView) -> None:
    """The verdict box: the checker's verdict when they set one, with the model's beside it."""
    override = view.override
    if override is None:
        if view.verdict is not None:
            view._render_verdict(view.verdict)
        return
    with view.verdict_slot.container(border=True):
        st.markdown(f"### Checker's verdict {label_badge(override.label)}")
        st.caption(
            f"Set by {escape_markdown(override.by)} at {_when(override.at)}"
            + (f": {escape_markdown(override.note)}" if override.note else "")
        )
        model = override.model_verdict or view.verdict
        if model is not None:
            conf = f" · confidence {model.confidence:.2f}" if model.confidence is not None else ""
            st.markdown(f"The model's verdict, kept in the record: {label_badge(model.label)}{conf}")  # markup: conf is a number
            st.caption(f"Decided by {escape_markdown(model.decided_by)}: {escape_markdown(model.stop_reason)}")

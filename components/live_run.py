"""A run going on in the background, rendered on each rerun: the events so far, then live until it ends or pauses.

The handle lives in session state, so a rerun (a click anywhere, a page switch and back)
re-renders what happened and picks up the stream where it is; a paused run ends the
script with the review form on screen, and the form's callback wakes the run.
"""

from __future__ import annotations

import time

import streamlit as st

from components.review_form import pause_title, render_override_form, render_review_form
from components.transcript import STATUS_CHARS, RunView, log_cut
from pipelines.core.events import ArgumentDelta, StageStarted, TurnCompleted
from pipelines.core.text.safety import escape_markdown
from pipelines.protocols.base import get_protocol
from pipelines.record.store import RunStore
from pipelines.run.runner import RunHandle

POLL_S = 0.2
BEAT_S = 1.0
PAGE_BEAT_S = 20.0  # a paused run's page says it is open this often; silent for step_gate.PAGE_GONE_AFTER_S, the pause is freed


@st.fragment(run_every=PAGE_BEAT_S)
def _keep_pause_alive(handle: RunHandle) -> None:
    # Reruns on its own while the page is open, long after the script ended with the review form on screen.
    handle.page_alive()


def _stage_label(handle: RunHandle) -> str:
    stage = next((e for e in reversed(handle.events) if isinstance(e, StageStarted)), None)
    return escape_markdown(log_cut(f"{stage.stage}: {stage.detail}", STATUS_CHARS)) if stage is not None else "Working"


def render_run(handle: RunHandle, store: RunStore | None) -> RunView:
    """Render ``handle``'s events, follow it live until it finishes or waits for the checker, then show what comes next."""
    view = RunView(live=True, key=f"live-{handle.run_id}")
    handle.page_alive()
    seen = 0
    last_beat = time.monotonic()
    events = handle.events
    # What happened before this rerun: completed turns carry their whole text, their chunks need not be redrawn.
    completed = {e.turn.id for e in events[: len(events)] if isinstance(e, TurnCompleted)}
    while True:
        upto = len(handle.events)
        view.feed_all(e for e in handle.events[seen:upto] if not (isinstance(e, ArgumentDelta) and e.turn_id in completed))
        seen = upto
        if handle.done and seen >= len(handle.events):
            break
        pending = handle.pending
        if pending is not None and seen >= len(handle.events):
            view.status.update(label=f"{pause_title(pending.round)}: waiting for you", state="running", expanded=False)
            view.render_evidence()
            render_review_form(handle, pending, dict(view.digest.evidence), dict(view.digest.struck))
            _keep_pause_alive(handle)
            return view
        handle.wait(seen, timeout=POLL_S)
        if time.monotonic() - last_beat > BEAT_S:
            # Every second, new events or not: the elapsed time and the cost keep counting while an argument streams,
            # and a silent wait (a long model call) still touches the page. Streamlit can only stop or rerun a script
            # at an st call, so the script (and the server's shutdown) is never held.
            last_beat = time.monotonic()
            elapsed = time.time() - (view.digest.started_at or time.time())
            view.status.update(label=f"{_stage_label(handle)} · {elapsed:.0f} s")
            view.render_cost()
            view.refresh_evidence()
    if store is not None:
        for evt in store.events_of_type(handle.run_id, "VerdictOverridden"):
            view.feed(evt)  # a verdict the checker set after the run: the card shows it over the model's
    view.finish()
    if handle.status == "interrupted":
        st.info("⏸️ This run is interrupted. Open **History** to resume it.")
    if store is not None and view.verdict is not None:
        labels = get_protocol(handle.config.protocol).labels
        render_override_form(store, handle.run_id, labels, view.verdict.label, key=f"live-{handle.run_id}")
    return view

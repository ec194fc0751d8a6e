"""Replay page: one stored run alone, step by step, at the top of the page, for a class to watch (History shows the same
under its list, its filters and the run's record)."""

import streamlit as st

from components import state
from components.links import address_picker, run_line
from components.pages import render_page_header
from components.resources import get_services
from components.stepper import render_stepper
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when

state.ensure_framed("pages/replay.py")

store = get_services().store
render_page_header("pages/replay.py")
if store is None:
    st.error("This app runs without a run store, so there is nothing to replay.")
    st.stop()


linked = state.follow_link(state.REPLAY_PARAM)  # ?replay=ID: History's link, or one a teacher saved
if linked is not None:
    state.choose_replay_run(linked)
linked = state.replay_run()
runs = store.list_runs(limit=200)
by_id = {r.id: r for r in runs}
if linked is not None and linked not in by_id:
    found = store.get_run(linked)
    if found is None:
        st.warning(f"No run {escape_markdown(linked[:64])} on this desk: the link may be wrong, or the run was made elsewhere.")
        linked = None
        state.choose_replay_run(None)
    else:
        by_id = {linked: found, **by_id}
if not by_id:
    st.info("No run yet. Runs appear here as soon as they start on the **Verify** page.")
    st.stop()
selected = address_picker(
    "Run to replay",
    {run_id: run_line(run) for run_id, run in by_id.items()},
    chosen=linked,
    key="replay.run",
    param=state.REPLAY_PARAM,
    placeholder="Choose a run to walk through, step by step",
    on_open=state.choose_replay_run,
)
if selected is None:
    st.caption("Choose a run: its evidence, its arguments and its verdict come back in the order they happened.")
    st.stop()
run = by_id[selected]
st.subheader(escape_markdown(run.claim))
st.caption(f"{escape_markdown(run.protocol)} · {when(run.created_at)} · {'imported' if not run.own else 'this desk'}")  # markup: escaped
render_stepper(run.id, store.events(run.id), key="replay", from_start=True, play=True)  # the verdict comes last, as it did

"""Verify page: enter a claim, watch the agents retrieve and argue, read the verdict."""

import streamlit as st

from components import state
from components.config_form import render_config_form
from components.courtroom import render_courtroom_audit
from components.services import get_services
from components.transcript import RunView, replay
from pipelines.errors import DebateDeskError
from pipelines.runner import stream_run

services = get_services()
st.title("⚖️ Verify a claim")
st.sidebar.header("Run settings")
config = render_config_form(services.corpus_names())

st.text_area(
    "Claim",
    key=state.CLAIM,
    placeholder="e.g. Masks reduce transmission of respiratory viruses",
    height=90,
    help="One checkable statement. Up to 2,000 characters.",
)
st.button("Verify", type="primary", on_click=state.request_run, icon="🔎")

pending = state.take_pending_claim()
if pending is not None:
    view = None
    events = []
    try:
        for evt in stream_run(pending, config, services):
            if view is None:
                view = RunView(live=True, key="live")
            events.append(evt)
            view.feed(evt)
    except DebateDeskError as exc:
        state.set_error(str(exc))
    finally:
        if view is not None:
            view.finish()
        if events:
            state.set_last_run(getattr(events[0], "run_id", ""), events)
    render_courtroom_audit(events, key="verify")
    if state.last_error():
        st.error(f"⚠️ {state.last_error()}")
else:
    if state.last_error():
        st.error(f"⚠️ {state.last_error()}")
    events = state.last_events()
    if events:
        replay(events, key="last")
        render_courtroom_audit(events, key="verify")
    else:
        st.info("Enter a claim and press **Verify**. The agents' evidence and arguments stream in below.")

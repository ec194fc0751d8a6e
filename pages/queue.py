"""Claims queue page: claims the desk has to check, where each appeared, who has it, by when; one claim with its runs,
comments, history, review and publishing; and what the desk has published."""

import streamlit as st

from components import state
from components.claim_queue import (
    QUEUE_TABS,
    describe,
    render_add_claims,
    render_claim,
    render_claim_table,
    render_filters,
    render_message,
    render_published,
)
from components.links import address_picker
from components.notices_view import filters_in_use, in_view, render_bulk, render_notices, render_view_choice
from components.pages import render_page_header
from components.queue_checks import render_check_these
from components.resources import get_claim_queue
from components.sign_in import acting_user
from pipelines.core.text.safety import escape_markdown

state.ensure_framed("pages/queue.py")

render_page_header("pages/queue.py")
queue = get_claim_queue()
if queue is None:
    st.error("This app runs without a run store, so there is no claims queue.")
    st.stop()
if acting_user() is None:
    st.warning("Enter **your name** in the sidebar: every change to the queue is recorded with who made it.")
if (linked := state.follow_link(state.CLAIM_PARAM)) is not None:  # ?claim=ID: a colleague's link
    state.open_queue_claim(linked)
    state.show_queue_tab(QUEUE_TABS[0])
render_message()
render_notices(queue)

queue_tab, add_tab, published_tab = st.tabs(list(QUEUE_TABS), key=state.QUEUE_TABS, on_change="rerun")  # the open tab stays open
with add_tab:
    render_add_claims(queue)
with published_tab:
    render_published(queue)
with queue_tab:
    view = render_view_choice()
    where = render_filters(queue)
    claims = in_view(queue, queue.find(where), view)
    if claims:
        render_claim_table(claims, queue.record_changes(claims), queue.last_runs(claims))  # a changed record is flagged
        render_bulk(queue, claims)
        render_check_these(queue, claims)  # a desk on workers: the chosen claims submitted to them, and their progress
    elif hiding := filters_in_use(where, view):
        st.info(f"No claims match {hiding}: clear {'it' if ',' not in hiding else 'them'} to see the rest.")  # markup: our words
    else:
        st.info("No claims yet. Add some under **Add claims**; a run on **Verify** or **Batch** adds its claim here too.")
    by_id = {c.id: c for c in claims}
    chosen = state.queue_claim()
    if chosen is not None and chosen not in by_id:
        found = queue.get(chosen)
        if found is None:
            st.warning(f"No claim {escape_markdown(chosen[:40])} in the queue: the link may be wrong, or it was never added here.")
            state.open_queue_claim(None)
            chosen = None
        else:
            by_id = {chosen: found, **by_id}
    selected = address_picker(
        "Open a claim",
        {claim_id: describe(claim) for claim_id, claim in by_id.items()},
        chosen=chosen,
        key=state.QUEUE_PREFIX + "open",
        param=state.CLAIM_PARAM,
        placeholder="Choose a claim to see its runs, comments and history",
        on_open=state.open_queue_claim,
    )
    if selected is not None:
        render_claim(queue, by_id[selected])

"""Verify page: enter a claim, watch the agents retrieve and argue, read the verdict."""

import streamlit as st

from components import state
from components.claim_queue import join_claim_of, link_run_to_queue, put_queued_claim_in_box
from components.config_form import render_config_form
from components.corpus_progress import prepare_corpus
from components.courtroom import render_courtroom_audit
from components.debate_offer import render_debate_offer
from components.desk import may_change_desk, run_settings_at_desk
from components.links import render_copy_link, run_link
from components.live_run import render_run
from components.pages import render_page_header
from components.rerun import render_rerun_note
from components.resources import get_services
from components.side_by_side import render_compare_picker, replay_side_by_side, run_side_by_side
from components.sign_in import acting_person
from components.transcript import replay
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.run.runner import debate_anyway, resume_run, start_run

state.ensure_framed("pages/verify.py")

render_page_header("pages/verify.py")
showing_a_run = state.active_run() is not None or state.last_events() or state.last_comparison() or state.claim_waiting()
if not showing_a_run:  # the first thing a newcomer reads; once a run is on screen its verdict must fit the first screen
    st.markdown(
        "DebateDesk checks a claim against evidence: AI agents search your corpora (and the web, when it is on), argue over "
        "what they find, and a judge or a panel rules.  \n"
        "A run goes: type a claim, press **Verify**, watch the evidence and the arguments stream in, read a verdict that "
        "names the exhibits it rests on.  \n"
        "Every run is kept: step in between rounds with **Step mode**, replay and export it from **History**, share it with "
        "the desk through the **Claims queue**."
    )
if (checking := state.take_check_link()) is not None and (problem := put_queued_claim_in_box(checking)):  # the queue's link
    st.warning(f"⚠️ {problem}")  # markup: our words around an escaped id
# The claim box before the heavy services: on a first start it shows at once while the models and the index load
# (a built-in corpus not yet indexed is indexed below it, with a progress bar).
st.text_area(
    "Claim",
    key=state.CLAIM,
    placeholder="e.g. Masks reduce transmission of respiratory viruses",
    height=90,
    help="One checkable statement. Up to 2,000 characters.",
)
st.button("Verify", type="primary", on_click=state.request_run, icon="🔎")
services = get_services()
st.sidebar.header("Run settings")
config = render_config_form(services.corpus_names(), run_settings_at_desk(services), services.store)
compare_config = render_compare_picker(config)
prepare_corpus(services, config.corpus)

pending = state.take_pending_claim()
resume_id = state.take_resume_request()
debate = state.take_debate_request()  # "Run the debate anyway" under a run whose exhibits settled the claim
if pending is not None and compare_config is not None:
    state.set_active_run(None)  # a comparison replaces the last single run on this page
    run_side_by_side(pending, [config, compare_config], services)
    if state.last_error():
        st.error(f"⚠️ {escape_markdown(state.last_error())}")
else:
    try:
        if pending is not None:
            state.set_active_run(start_run(pending, config, services, interactive=True, by=acting_person()))
            handle = state.active_run()
            if handle is not None and (problem := link_run_to_queue(handle.run_id, pending, claim_id=state.claim_to_check(pending))):
                st.warning(f"⚠️ {escape_markdown(problem)}")
        elif debate is not None:
            source_id, claim, snapshot = debate
            state.set_active_run(start_run(claim, debate_anyway(snapshot, config), services, interactive=True, by=acting_person()))
            handle = state.active_run()
            if handle is not None and (problem := join_claim_of(source_id, handle.run_id, claim)):
                st.warning(f"⚠️ {escape_markdown(problem)}")
        elif resume_id is not None:
            limits = state.take_resume_limits()  # asked for on History; raised only by whoever may change the desk's settings
            state.set_active_run(
                resume_run(
                    resume_id,
                    services,
                    interactive=True,
                    secrets_from=config,
                    by=acting_person(),
                    limits=limits,
                    may_raise=may_change_desk(),
                )
            )
    except DebateDeskError as exc:
        state.set_error(str(exc))
        state.set_active_run(None)

    if state.last_error():
        st.error(f"⚠️ {escape_markdown(state.last_error())}")
    handle = state.active_run()
    if handle is not None:
        render_rerun_note(handle.events)
        render_copy_link(run_link(handle.run_id))  # stored as it happens: a colleague can open it while it runs
        view = render_run(handle, services.store)
        if handle.done:
            render_debate_offer(view.digest, key=handle.run_id)
            state.set_last_run(handle.run_id, handle.events)
            render_courtroom_audit(handle.events, key="verify")
    elif not state.last_error():
        events = state.last_events()
        if state.last_comparison():
            replay_side_by_side(state.last_comparison())
        elif events:
            shown = replay(events, key="last")
            render_debate_offer(shown.digest, key="last")
            render_courtroom_audit(events, key="verify")
        else:
            st.caption("The agents' evidence and arguments stream in below once you press **Verify**.")

"""History's re-run on frozen evidence: another protocol (or the models now on the Settings page) on a stored run's evidence,
with no new search; and the links between a run and its re-runs, both ways."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from components import state
from components.claim_queue import join_claim_of
from components.config_form import models_summary
from components.desk import run_settings_at_desk
from components.sign_in import acting_person
from pipelines.core.config import RunConfig
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import Event, RunStarted
from pipelines.core.text.safety import escape_markdown
from pipelines.protocols.base import PROTOCOLS
from pipelines.record.store import RunStore, RunSummary
from pipelines.run.runner import start_run
from pipelines.run.services import Services

K = "rerun."


def rerun_config(run: RunSummary, protocol: str, settings: RunConfig) -> RunConfig:
    """The re-run's config: the Settings page's models and limits, the chosen protocol, the stored run's corpus and web switch."""
    stored = RunConfig.from_snapshot(run.config) if run.config else settings
    retrieval = settings.retrieval.model_copy(update={"web_search": stored.retrieval.web_search})
    pauses = settings.pauses.model_copy(update={"step_mode": False})
    return settings.model_copy(update={"protocol": protocol, "corpus": stored.corpus, "retrieval": retrieval, "pauses": pauses})


def render_rerun_links(run: RunSummary, store: RunStore) -> None:
    """ "Re-run of ..." and "Re-runs: ..." as buttons that open the linked run here."""
    linked = [("Re-run of", store.get_run(run.source_run))] if run.source_run else []
    linked += [("Re-run as", other) for other in store.reruns_of(run.id)]
    shown = [(label, other) for label, other in linked if other is not None]
    if run.source_run and not linked[0][1]:
        st.caption(f"🔁 Re-run of run {escape_markdown(run.source_run)}, which is no longer in the store.")
    for i, (label, other) in enumerate(shown):
        assert other is not None
        st.button(
            f"🔁 {label} {other.protocol} · {other.final_verdict or other.status} · {other.id}",
            key=f"{K}link.{run.id}.{i}",
            on_click=_open,
            args=(other.id,),
            help="Open the linked run: the same evidence, another protocol or model.",
        )


def render_rerun_note(events: Sequence[Event]) -> None:
    """Above a live re-run: whose evidence it runs on, so nobody takes it for a fresh search."""
    started = events[0] if events else None
    if isinstance(started, RunStarted) and started.source_run:
        st.info(
            f"🔁 Re-run of run **{escape_markdown(started.source_run)}** on its frozen evidence: no new search; "
            "both runs link to each other in **History**."
        )


def _open(run_id: str) -> None:
    """Callback of a link: the page's run picker (its widget, key ``history.open``) shows the linked run."""
    state.open_history_run(run_id)


def render_rerun(run: RunSummary, services: Services) -> None:
    """The control: pick a protocol, start the run on this run's evidence, follow it on Verify."""
    if run.origin != "run" or run.event_count == 0:
        return
    with st.expander("🔁 Re-run on this run's evidence (no new search)"):
        settings = run_settings_at_desk(services)
        st.caption(
            "Another protocol or model on exactly the evidence this run found (its corpus passages, web results and pasted items): "
            "every search of the new run is answered from them, so a difference in verdict comes from the method or the model, not "
            "the evidence. Both runs link to each other here."
        )
        names = list(PROTOCOLS)
        protocol = st.selectbox(
            "Re-run with protocol",
            names,
            index=names.index(run.protocol) if run.protocol in names else 0,
            format_func=lambda n: f"{n} · {PROTOCOLS[n].title}",
            key=f"{K}protocol.{run.id}",
        )
        st.caption(f"Models: {escape_markdown(models_summary(settings))} (change them on the **Settings** page).")
        if st.button("🔁 Re-run on frozen evidence", key=f"{K}start.{run.id}", type="primary"):
            try:
                handle = start_run(
                    run.claim,
                    rerun_config(run, protocol, settings),
                    services,
                    interactive=True,
                    by=acting_person(),
                    frozen_from=run.id,
                )
            except DebateDeskError as exc:
                st.error(f"⚠️ {escape_markdown(str(exc))}")
                return
            state.set_error(None)
            state.set_active_run(handle)
            _join_the_claim(run, handle.run_id)
            st.switch_page("pages/verify.py")


def _join_the_claim(source: RunSummary, run_id: str) -> None:
    """A re-run joins its source run's queued claim (a published claim then flags it, until an editor confirms or corrects
    the fact-check). Why not, when it could not, is said on Verify."""
    if problem := join_claim_of(source.id, run_id, source.claim):
        state.set_error(problem)

"""The app's shared, heavy objects (embedder, indexes, store, claims queue), built once per server process and data folder."""

from __future__ import annotations

import streamlit as st

from components import state
from pipelines.core.config import AppSettings
from pipelines.core.errors import StoreUnavailableError
from pipelines.core.text.safety import escape_markdown
from pipelines.newsroom.queue import ClaimQueue
from pipelines.run.endpoint_slots import DeskLimiters
from pipelines.run.services import Services
from pipelines.run.workers import on_workers


def get_services() -> Services:
    """The services for the current settings (one set per distinct data folder, database and Chroma server)."""
    try:
        services = _services_for(AppSettings().model_dump_json())
    except StoreUnavailableError as exc:  # the database away, the disk full, the folder read-only: said plainly, tried again next time
        st.error(escape_markdown(str(exc)))
        st.stop()
    if services.spill_problems and state.first_time(SPILL_PROBLEMS):
        # A spill file refused or set aside at start (planted, another account's, cut short): once a session, named.
        for problem in services.spill_problems:
            st.warning("⚠️ Events kept on disk during a store outage: " + escape_markdown(problem))  # markup: escaped paths, reasons
    return services


SPILL_PROBLEMS = "spill_problems"  # shown once a session


@st.cache_resource(show_spinner="Loading the embedding model and the evidence index…")
def _services_for(settings_json: str) -> Services:
    services = Services.create(AppSettings.model_validate_json(settings_json))
    if on_workers(services) and services.store is not None:  # runs started here share the endpoints' bounds with the workers
        services.limiters = DeskLimiters(services.store.url)
    return services


def get_claim_queue() -> ClaimQueue | None:
    """The desk's claims queue, in the run store's database; None when the app runs without a store."""
    services = get_services()
    if services.store is None:
        return None
    return _queue_for(services.store.url)


@st.cache_resource(show_spinner=False)
def _queue_for(url: str) -> ClaimQueue:
    services = get_services()
    store = services.store
    assert store is not None and store.url == url
    if services.settings.webhook_url:  # every change, once stored, to the desk's chat tool (pipelines/newsroom/notices.py)
        from pipelines.newsroom.notices import Webhook, attach_webhook

        attach_webhook(store.engine, Webhook(services.settings.webhook_url, services.settings.data_dir))
    return ClaimQueue(store.engine)  # published fact-checks are served from it (components/published.py), not from files

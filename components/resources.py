"""The app's shared, heavy objects (embedder, indexes, store), built once per server process and data folder."""

from __future__ import annotations

import streamlit as st

from pipelines.config import AppSettings
from pipelines.errors import StoreUnavailableError
from pipelines.run.services import Services
from pipelines.text.safety import escape_markdown


def get_services() -> Services:
    """The services for the current settings (one set per distinct data folder, database and Chroma server)."""
    try:
        return _services_for(AppSettings().model_dump_json())
    except StoreUnavailableError as exc:  # the database away, the disk full, the folder read-only: said plainly, tried again next time
        st.error(escape_markdown(str(exc)))
        st.stop()


@st.cache_resource(show_spinner="Loading the embedding model and the evidence index…")
def _services_for(settings_json: str) -> Services:
    return Services.create(AppSettings.model_validate_json(settings_json))

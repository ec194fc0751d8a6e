"""The app's shared, heavy objects (embedder, indexes, store), built once per server process."""

from __future__ import annotations

import streamlit as st

from pipelines.config import AppSettings
from pipelines.runner import Services


@st.cache_resource(show_spinner="Loading the embedding model and the evidence index…")
def get_services() -> Services:
    return Services.create(AppSettings())

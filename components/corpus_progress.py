"""A built-in corpus indexed on first use, with a progress bar, so a first start says what it is doing."""

from __future__ import annotations

import streamlit as st

from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.run.services import Services


def prepare_corpus(services: Services, name: str) -> None:
    """Index ``name`` now if it is a built-in corpus not yet indexed, showing how far it has got; later calls return at once."""
    if not services.needs_indexing(name):
        return
    bar = st.progress(0.0, text=f"Preparing the {escape_markdown(name)} corpus for search (first start only)…")

    def progress(done: int, total: int) -> None:
        bar.progress(
            min(1.0, done / total) if total else 1.0, text=f"Indexing the {escape_markdown(name)} corpus: {done:,} of {total:,} passages"
        )

    try:
        services.ensure_corpus(name, progress=progress)
    except DebateDeskError as exc:
        bar.empty()
        st.error(f"The {escape_markdown(name)} corpus could not be indexed: {escape_markdown(str(exc))}")
        return
    bar.empty()

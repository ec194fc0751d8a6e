"""Stable addresses: ``<app>/history?run=ID`` opens a run, ``<app>/queue?claim=ID`` a queued claim, for any signed-in colleague."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, urlsplit, urlunsplit

import streamlit as st

from components import state
from pipelines.core.text.times import when
from pipelines.record.store import RunSummary

PAGE_PATHS = ("verify", "history", "corpora", "batch", "benchmark", "settings", "queue")  # the url paths st.navigation gives the pages


def app_url() -> str:
    """The app's own address as this browser reached it (scheme, host, port and any base path), without a page or parameters."""
    here = st.context.url
    if not here:  # no browser behind this run (AppTest): the server's configured address
        host = st.get_option("server.address") or "localhost"
        return f"http://{host}:{st.get_option('server.port')}"
    parts = urlsplit(here)
    path = parts.path.rstrip("/")
    head, _, last = path.rpartition("/")
    if last in PAGE_PATHS:
        path = head
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def run_line(run: RunSummary, *, claim: bool = True) -> str:
    """A run as a chooser lists it: only what never changes about it (its claim, protocol, start and id).

    A select box keeps its choice by the line it shows, so a status or verdict in the line would
    empty the box (and close the run, or rest a review on another one) the moment the run ended or
    was overridden. The table beside the box shows those.
    """
    return (f"{run.claim[:70]} · " if claim else "") + f"{run.protocol} · {when(run.created_at)} · {run.id}"


def run_link(run_id: str) -> str:
    return f"{app_url()}/history?{state.RUN_PARAM}={quote(run_id, safe='')}"


def claim_link(claim_id: str) -> str:
    return f"{app_url()}/queue?{state.CLAIM_PARAM}={quote(claim_id, safe='')}"


def render_copy_link(url: str, what: str = "this run", who: str = "for a signed-in colleague") -> None:
    """The address in a code box (its copy button copies it): whoever ``who`` names sees the same thing."""
    st.caption(f"🔗 Link to {what} ({who})")  # markup: our own words
    st.code(url, language=None)


def address_picker(
    label: str,
    described: dict[str, str],
    *,
    chosen: str | None,
    key: str,
    param: str,
    placeholder: str,
    on_open: Callable[[str | None], None],
) -> str | None:
    """The select box that opens one item (a run, a claim) and keeps the address on it (``?param=ID``).

    ``described`` maps each id to its line, in order; ``chosen`` is the one a link, the queue or an
    import asked to open, ``on_open`` records the person's choice. The box keeps its own value across
    reruns: it is set here, before it is drawn, only when ``chosen`` changed since it was last put in
    (a value and an index both make Streamlit warn), so what the person chose in the box stays open
    even when the page's own note of it was lost (a browser that reconnects keeps its widgets' values,
    not the rest of its session), or when the box lost its value (Streamlit drops a widget's value
    when another page runs: back from Verify, the item is open again).
    """
    options = list(described)
    box = state.keyed(key)
    if chosen != box.get(".applied") or (chosen is not None and not box.has()):  # .applied: the open request last put in
        box.set(".applied", chosen)
        box.set("", chosen if chosen in described else None)
    selected = st.selectbox(
        label,
        options,
        index=None,
        format_func=lambda item: described[item],
        placeholder=placeholder,
        key=key,
        on_change=lambda: on_open(box.get()),
    )
    state.show_in_address(param, selected)
    return selected

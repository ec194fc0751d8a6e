"""The one owner of st.session_state: every key is a constant here, read through typed getters."""

from __future__ import annotations

from typing import Any

import streamlit as st

from pipelines.events import Event, parse_event

CLAIM = "claim_text"
PENDING_CLAIM = "pending_claim"
LAST_RUN_ID = "last_run_id"
LAST_EVENTS = "last_events"
LAST_ERROR = "last_error"
CONFIG_PREFIX = "cfg."
AUDIT_PREFIX = "audit."  # widgets of the audit screens (evidence filters, charts), then a view key


def init_state() -> None:
    st.session_state.setdefault(CLAIM, "")
    st.session_state.setdefault(PENDING_CLAIM, None)
    st.session_state.setdefault(LAST_RUN_ID, None)
    st.session_state.setdefault(LAST_EVENTS, [])
    st.session_state.setdefault(LAST_ERROR, None)


def request_run() -> None:
    """on_click of Verify: remember which claim to run; the page starts it on this rerun."""
    st.session_state[PENDING_CLAIM] = st.session_state.get(CLAIM, "")
    st.session_state[LAST_ERROR] = None


def take_pending_claim() -> str | None:
    claim = st.session_state.get(PENDING_CLAIM)
    st.session_state[PENDING_CLAIM] = None
    return claim


def set_last_run(run_id: str, events: list[Event]) -> None:
    st.session_state[LAST_RUN_ID] = run_id
    st.session_state[LAST_EVENTS] = [e.model_dump(mode="json") for e in events]


def last_events() -> list[Event]:
    return [parse_event(e) for e in st.session_state.get(LAST_EVENTS, [])]


def set_error(message: str | None) -> None:
    st.session_state[LAST_ERROR] = message


def last_error() -> str | None:
    value = st.session_state.get(LAST_ERROR)
    return str(value) if value else None


def config_value(path: str, default: Any = None) -> Any:
    return st.session_state.get(CONFIG_PREFIX + path, default)

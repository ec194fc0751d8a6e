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
COMPARE_WITH = "compare_with"
LAST_COMPARISON = "last_comparison"


def init_state() -> None:
    st.session_state.setdefault(CLAIM, "")
    st.session_state.setdefault(PENDING_CLAIM, None)
    st.session_state.setdefault(LAST_RUN_ID, None)
    st.session_state.setdefault(LAST_EVENTS, [])
    st.session_state.setdefault(LAST_ERROR, None)
    st.session_state.setdefault(LAST_COMPARISON, [])


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
    st.session_state[LAST_COMPARISON] = []


def set_last_comparison(runs: list[list[Event]]) -> None:
    """The events of a side-by-side comparison (one list per protocol); replaces the last single run."""
    st.session_state[LAST_COMPARISON] = [[e.model_dump(mode="json") for e in events] for events in runs]
    st.session_state[LAST_EVENTS] = []


def last_comparison() -> list[list[Event]]:
    return [[parse_event(e) for e in events] for events in st.session_state.get(LAST_COMPARISON, [])]


def last_events() -> list[Event]:
    return [parse_event(e) for e in st.session_state.get(LAST_EVENTS, [])]


def set_error(message: str | None) -> None:
    st.session_state[LAST_ERROR] = message


def last_error() -> str | None:
    value = st.session_state.get(LAST_ERROR)
    return str(value) if value else None


def config_value(path: str, default: Any = None) -> Any:
    return st.session_state.get(CONFIG_PREFIX + path, default)

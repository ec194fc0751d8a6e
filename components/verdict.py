"""The verdict box of a run, drawn from its digest: the checker's verdict with the model's beside it, the model's, or how the run ended."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import streamlit as st

from components.badges import label_badge
from components.safe_text import escape_markdown
from pipelines.digest import RunDigest
from pipelines.models import Verdict


def when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%S UTC")


def render_verdict(slot: Any, run: RunDigest) -> None:
    """Fill ``slot`` from what the run has reached so far (live, or replayed from the store)."""
    override = run.override
    if override is not None:
        with slot.container(border=True):
            st.markdown(f"### Checker's verdict {label_badge(override.label)}")
            st.caption(
                f"Set by {escape_markdown(override.by)} at {when(override.at)}"
                + (f": {escape_markdown(override.note)}" if override.note else "")
            )
            model = override.model_verdict or run.verdict
            if model is not None:
                conf = f" · confidence {model.confidence:.2f}" if model.confidence is not None else ""
                st.markdown(f"The model's verdict, kept in the record: {label_badge(model.label)}{conf}")  # markup: conf is a number
                st.caption(f"Decided by {escape_markdown(model.decided_by)}: {escape_markdown(model.stop_reason)}")
    elif run.failure is not None:
        slot.error(
            f"❌ The run failed: {escape_markdown(run.failure)}. Everything produced before the failure is shown below and kept in History."
        )
    elif run.interruption is not None:
        slot.warning(
            f"⏸️ The run was interrupted: {escape_markdown(run.interruption)}. Everything so far is kept; resume it from **History**."
        )
    elif run.verdict is not None:
        _model_verdict(slot, run.verdict, run)
    else:
        slot.empty()


def _model_verdict(slot: Any, verdict: Verdict, run: RunDigest) -> None:
    with slot.container(border=True):
        conf = f" · confidence {verdict.confidence:.2f}" if verdict.confidence is not None else ""
        st.markdown(f"### Verdict {label_badge(verdict.label)}{conf}")  # markup: conf is a number
        st.markdown(f"**Decided by {escape_markdown(verdict.decided_by)}.** Why: {escape_markdown(verdict.stop_reason)}")
        if verdict.cited:
            st.markdown(
                "**Rests on:** " + "; ".join(f"{escape_markdown(c.id)} ({escape_markdown(c.source_label)})" for c in run.cited_evidence())
            )  # markup: joined escaped parts

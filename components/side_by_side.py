"""Side by side: two protocols on the same claim, their verdicts, confidence, cost and transcripts in two columns."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from components import state
from components.claim_queue import link_run_to_queue
from components.sign_in import acting_person
from components.transcript import RunView, replay
from pipelines.core.config import RunConfig
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import Event, RunStarted
from pipelines.newsroom.access.roles import require
from pipelines.protocols.base import get_protocol, protocol_names
from pipelines.record.verdict_card import common_label
from pipelines.run.runner import preflight
from pipelines.run.services import Services
from pipelines.run.side_by_side import stream_side_by_side, summarize_run

NO_COMPARISON = ""


def render_compare_picker(config: RunConfig) -> RunConfig | None:
    """A sidebar choice of a second protocol; the config to run it with (same claim, models and corpus), or None."""
    others = [n for n in protocol_names() if n != config.protocol]
    choice = st.sidebar.selectbox(
        "Compare with",
        [NO_COMPARISON, *others],
        key=state.COMPARE_WITH,
        format_func=lambda n: f"{n} — {get_protocol(n).title}" if n else "— no comparison —",
        help="Run a second protocol on the same claim, with the same models and corpus, and show both side by side.",
    )
    if not choice or choice not in others:
        return None
    return config.model_copy(update={"protocol": choice})


def comparison_frame(runs: Sequence[Sequence[Event]]) -> pd.DataFrame:
    """One row per run: verdict, confidence and cost (pure: no Streamlit calls)."""
    rows = []
    for events in runs:
        outcome = summarize_run(events)
        rows.append(
            {
                "protocol": outcome.protocol,
                "verdict": common_label(outcome.verdict) if outcome.verdict else ("failed" if outcome.failed else "—"),
                "protocol's word": outcome.verdict or "",
                "confidence": outcome.confidence,
                "decided by": outcome.decided_by,
                "model calls": outcome.cost.calls,
                "from cache": outcome.cost.cached_calls,  # a repeated call costs nothing: say so, or the run looks free
                "tokens in": outcome.cost.tokens_in,
                "tokens out": outcome.cost.tokens_out,
                "spent": round(outcome.cost.spent, 6) if outcome.cost.priced else None,  # empty without prices
                "model time (s)": outcome.cost.model_seconds,
                "wall time (s)": outcome.cost.wall_seconds,
            }
        )
    return pd.DataFrame(rows)


def run_side_by_side(claim: str, configs: Sequence[RunConfig], services: Services) -> None:
    """Run every config on ``claim`` at once, streaming each into its own column; keeps the events for reruns."""
    try:
        require(acting_person(), "run")  # the role as the users file says now: a removed user runs nothing
        for config in configs:
            preflight(claim, config, services)
    except DebateDeskError as exc:
        state.set_error(str(exc))
        return
    summary = st.empty()
    views = []
    for index, (column, config) in enumerate(zip(st.columns(len(configs)), configs, strict=True)):
        with column:
            st.markdown(f"#### {get_protocol(config.protocol).title}")  # markup: a registered protocol's title
            views.append(RunView(live=True, key=f"compare-{index}"))
    runs: list[list[Event]] = [[] for _ in configs]
    try:
        for index, evt in stream_side_by_side(claim, configs, services):
            runs[index].append(evt)
            views[index].feed(evt)  # each view writes into the column it was made in
    except DebateDeskError as exc:
        state.set_error(str(exc))
    finally:
        for view in views:
            view.finish()
        if any(runs):
            state.set_last_comparison(runs)
    for events in runs:  # each run joins the claim's queued claim (or makes one), as a single run on Verify does
        started = next((e for e in events if isinstance(e, RunStarted)), None)
        if started is not None and (problem := link_run_to_queue(started.run_id, claim)):
            state.set_error(problem)
    _render_summary(summary, runs)


def replay_side_by_side(runs: Sequence[Sequence[Event]]) -> None:
    """A finished comparison again, as it looked live."""
    summary = st.empty()
    for index, (column, events) in enumerate(zip(st.columns(len(runs)), runs, strict=True)):
        with column:
            outcome = summarize_run(events)
            st.markdown(f"#### {get_protocol(outcome.protocol).title}")  # markup: a registered protocol's title
            replay(list(events), key=f"compare-replay-{index}")
    _render_summary(summary, runs)


def _render_summary(slot: object, runs: Sequence[Sequence[Event]]) -> None:
    with slot.container(border=True):  # type: ignore[attr-defined]
        st.markdown("**⚖️ Side by side** — same claim, same models and corpus; the runs went at the same time, so their wall times overlap.")
        st.dataframe(
            comparison_frame(runs),
            hide_index=True,
            width="stretch",
            column_config={"confidence": st.column_config.NumberColumn(format="%.2f")},
        )

"""A stored run walked through step by step (for a class or an audit): Previous, Next and a slider over the run's steps
(``pipelines.record.replay.steps``), the run as it stood at that step, and the courtroom's audit of that much of it.
History shows it under the run; the Replay page shows it alone, at the top, for a room to watch."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from components import state
from components.courtroom import render_courtroom_audit
from components.transcript import replay
from pipelines.core.events import Event
from pipelines.core.text.safety import escape_markdown
from pipelines.record.replay import steps


def render_stepper(run_id: str, events: Sequence[Event], *, key: str = "history", from_start: bool = False) -> None:
    """The run at one of its steps: at first its last (History: the run as it ended, for an audit), or with ``from_start``
    its first (Replay: a class watches the debate unfold before it sees the verdict)."""
    cuts = steps(list(events))
    slider = state.keyed(f"{state.HISTORY_STEP}.{key}.{run_id}")  # the step shown, kept per run
    slider.setdefault("", 1 if from_start else len(cuts))
    if len(cuts) > 1:

        def move(delta: int, total: int = len(cuts)) -> None:
            slider.set("", max(1, min(total, int(slider.get("", total)) + delta)))

        nav = st.columns([1, 6, 1])
        nav[0].button("◀ Previous", key=f"{key}.prev", on_click=move, args=(-1,), width="stretch")
        nav[2].button("Next ▶", key=f"{key}.next", on_click=move, args=(1,), width="stretch")
        nav[1].slider(
            "Step", 1, len(cuts), key=slider.key(), format="%d", help="Walk through the run as it happened, for a class or an audit."
        )
    step = cuts[int(slider.get("", len(cuts))) - 1]
    st.caption(
        f"Step {cuts.index(step) + 1} of {len(cuts)}: **{escape_markdown(step.title)}** ({step.end} of {len(events)} events)"
    )  # markup: numbers
    replay(list(events[: step.end]), key=f"{key}-{run_id}-{step.end}")
    render_courtroom_audit(list(events[: step.end]), key=f"{key}-{run_id}")

"""A stored run walked through step by step (for a class or an audit): Previous, Next and a slider over the run's steps
(``pipelines.record.replay.steps``), the run as it stood at that step, and the courtroom's audit of that much of it.
History shows it under the run; the Replay page shows it alone, at the top, for a room to watch, and can play it: one
step on every few seconds, so a teacher talks over it while it unfolds, stopping at the verdict."""

from __future__ import annotations

import time
from collections.abc import Sequence

import streamlit as st

from components import state
from components.courtroom import render_courtroom_audit
from components.transcript import replay
from pipelines.core.events import Event
from pipelines.core.text.safety import escape_markdown
from pipelines.record.replay import Step, steps

PLAY_SPEEDS = (2, 4, 8, 15)  # seconds a step, to choose from


def _due(last: float, now: float, every: float) -> bool:
    """A step's seconds are over (a tick a moment early, the clock of reruns, counts)."""
    return now - last >= every * 0.95


def step_after(current: int, total: int, last: float, now: float, every: float) -> tuple[int, float]:
    """Where a playing replay stands at ``now``: one step on once ``every`` seconds have passed since it last moved (at
    ``last``), never past the last step. Returns the step and when it last moved."""
    if current >= total or not _due(last, now, every):
        return current, last
    return current + 1, now


def render_stepper(run_id: str, events: Sequence[Event], *, key: str = "history", from_start: bool = False, play: bool = False) -> None:
    """The run at one of its steps: at first its last (History: the run as it ended, for an audit), or with ``from_start``
    its first (Replay: a class watches the debate unfold before it sees the verdict). With ``play``, a Play button moves
    it on by itself; only the stepper reruns then, on a clock, until the last step."""
    cuts = steps(list(events))
    slider = state.keyed(f"{state.HISTORY_STEP}.{key}.{run_id}")  # the step shown, kept per run
    slider.setdefault("", 1 if from_start else len(cuts))
    if not play or len(cuts) < 2:
        _render_step(run_id, events, cuts, slider, key)
        return
    player = state.keyed(f"{state.REPLAY_PLAY}.{run_id}.")
    every = _render_play_controls(player, slider, len(cuts), key)

    @st.fragment(run_every=every)
    def playing() -> None:
        if every is not None:
            current, now = int(slider.get("", len(cuts))), time.time()
            if current != player.get("at", current):  # moved by hand while playing: its seconds start from there
                player.set("last", now)
            player.set("at", current)
            last = float(player.get("last", 0.0))
            moved, last = step_after(current, len(cuts), last, now, every)
            if moved != current:
                slider.set("", moved)
                player.set("last", last)
                player.set("at", moved)
            elif current >= len(cuts) and _due(last, now, every):  # the verdict shown its while
                player.set("on", False)
                st.rerun()  # the whole page: the clock stops
        _render_step(run_id, events, cuts, slider, key)

    playing()


def _render_play_controls(player: state.Keyed, slider: state.Keyed, total: int, key: str) -> float | None:
    """Play or Pause, and the seconds a step; returns the seconds while playing, else None."""

    def toggle() -> None:
        on = not player.get("on", False)
        player.set("on", on)
        player.set("last", time.time())
        if on and int(slider.get("", total)) >= total:  # played to the end before: from the start again
            slider.set("", 1)

    left, right = st.columns([1, 3])
    on = bool(player.get("on", False))
    left.button(
        "⏸ Pause" if on else "▶ Play", key=f"{key}.play", on_click=toggle, width="stretch", type="primary" if not on else "secondary"
    )
    player.setdefault("every", 4)
    every = right.select_slider("Seconds a step", PLAY_SPEEDS, key=player.key("every"), help="How long each step shows while playing.")
    return float(every) if on else None


def _render_step(run_id: str, events: Sequence[Event], cuts: list[Step], slider: state.Keyed, key: str) -> None:
    """The Previous and Next buttons and the slider, then the run as it stood at the step shown."""
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

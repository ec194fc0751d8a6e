"""The judge's belief round by round: a pure plotly builder, the same readings in words, and the panel that shows both.

Every protocol reads the judge's probabilities of supported / refuted / not enough info after
its rounds (``BeliefRead``); the chart draws them as three lines, with the final verdict's
confidence as a star on its label's line, and the text names the round that moved the belief
most and by how much, so a checker who cannot read the chart reads the same thing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from pipelines.core.domain import Verdict
from pipelines.core.events import BeliefRead
from pipelines.core.text.probability import BELIEF_WORDS, percent
from pipelines.core.text.safety import escape_markdown
from pipelines.eval.labels import canonical
from pipelines.record.labels import common_label
from pipelines.stages.belief import READ_AGAIN
from pipelines.stages.exhibit_reading import READING_VERDICTS

COLOURS = {"SUPPORTS": "#2ca02c", "REFUTES": "#d62728", "NOT ENOUGH INFO": "#7f7f7f"}
LINES = tuple((label, name, COLOURS[label]) for label, name in BELIEF_WORDS.items())  # (label, name, colour)
WORDS = BELIEF_WORDS
VERDICT_X = "verdict"
UNSETTLED_NUMBER = "desk's confidence, not p(not enough info)"  # what such a NOT ENOUGH INFO verdict's number is (the card says how)


def is_the_reading(readings: Sequence[BeliefRead], verdict: Verdict) -> bool:
    """Whether the verdict is the last reading itself, calibrated (not a ruling compared with it)."""
    return bool(readings) and verdict.decided_by in READING_VERDICTS and readings[-1].method == "exhibits"


def reading_name(reading: BeliefRead) -> str:
    """The x-axis name of a reading, from what it was read after: 'round 2', 'step 3', 'role switch', 'closing', 'end'.

    'before the debate' for round 0; 'round N' for a reading that does not say (records made before ``over``).
    """
    if reading.round == 0:
        return "before the debate"
    what = reading.over.split(":", 1)[0].strip()
    numbered = re.fullmatch(r"after (round|step) (\d+)", what)
    if numbered:
        return f"{numbered.group(1)} {numbered.group(2)}"
    if what.startswith("after the "):
        return what.removeprefix("after the ")
    if what == "at the end":
        return "end"
    return f"round {reading.round}"


def _at(reading: BeliefRead) -> str:
    """The reading's moment in a sentence: 'round 2', 'the role switch'."""
    name = reading_name(reading)
    return name if re.fullmatch(r"(round|step) \d+|before the debate", name) else f"the {name}"


def build_belief_figure(readings: Sequence[BeliefRead], verdict: Verdict | None = None) -> go.Figure:
    """Three lines (supported, refuted, not enough info) over the readings, and the verdict's confidence where it states one."""
    ordered = list(readings)
    xs = [reading_name(r) for r in ordered]
    figure = go.Figure()
    for label, name, colour in LINES:
        figure.add_trace(
            go.Scatter(
                x=xs,
                y=[r.probabilities.get(label, 0.0) for r in ordered],
                mode="lines+markers",
                name=f"p({name})",
                line={"color": colour},
                hovertext=[r.over for r in ordered],
            )
        )
    side = canonical(verdict.label) if verdict is not None else None
    if verdict is not None and verdict.confidence is not None and side is not None:
        said = f"{common_label(verdict.label)} {percent(verdict.confidence)}"
        # A NOT ENOUGH INFO verdict that is desk's reading states desk's confidence, not a point of the lines: a star at 35%
        # beside a grey line at 22% read as two probabilities of one thing. The legend says what it is; the star is hollow.
        unsettled = side == "NOT ENOUGH INFO" and is_the_reading(ordered, verdict)
        name = f"verdict: {said} ({UNSETTLED_NUMBER})" if unsettled else f"verdict: {said}"
        figure.add_trace(
            go.Scatter(
                x=[VERDICT_X],
                y=[verdict.confidence],
                mode="markers+text",
                name=name,
                text=[said],
                textposition="top left",  # the verdict is the last category, at the chart's right edge: centred, it was clipped
                hovertext=[name],
                marker={"symbol": "star-open" if unsettled else "star", "size": 16, "color": COLOURS[side]},
            )
        )
    figure.update_layout(
        height=300,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        yaxis={"range": [0, 1.05], "title": "probability"},
        xaxis={"title": "", "type": "category"},
        legend={"orientation": "h", "y": -0.2},
        title={"text": "The judge's belief after each round", "font": {"size": 14}},
    )
    return figure


def belief_lines(readings: Sequence[BeliefRead]) -> list[str]:
    """Each reading in words, with how far it moved the likeliest answer since the reading before (plain text)."""
    lines = []
    previous: BeliefRead | None = None
    for r in readings:
        p = r.probabilities
        text = f"{reading_name(r).capitalize()} ({r.over}): " + ", ".join(
            f"{name} {percent(p.get(label, 0.0))}" for label, name, _ in LINES
        )
        if previous is not None:
            text += f"; {_move(previous, r)}"
        lines.append(text)
        previous = r
    return lines


def biggest_move(readings: Sequence[BeliefRead]) -> str:
    """Which reading moved the belief most, and by how much (plain text; '' with fewer than two readings)."""
    if len(readings) < 2:
        return ""
    pairs = list(itertools.pairwise(readings))
    before, after = max(pairs, key=lambda pair: _shift(*pair))
    if _shift(before, after) < 0.005:
        return f"The belief did not move over the {len(readings)} readings."
    label = max(WORDS, key=lambda k: abs(after.probabilities.get(k, 0.0) - before.probabilities.get(k, 0.0)))
    was, now = before.probabilities.get(label, 0.0), after.probabilities.get(label, 0.0)
    return f"The belief moved most at {_at(after)}: {WORDS[label]} from {percent(was)} to {percent(now)} ({(now - was) * 100:+.0f} points)."


def verdict_line(readings: Sequence[BeliefRead], verdict: Verdict | None) -> str:
    """How the last reading compares with the verdict (plain text)."""
    if verdict is None or not readings:
        return ""
    last = readings[-1]
    believed = max(WORDS, key=lambda k: last.probabilities.get(k, 0.0))
    side = canonical(verdict.label)
    stated = f" ({percent(verdict.confidence)})" if verdict.confidence is not None else " (it states no confidence)"
    largest = f"{WORDS[believed]} {percent(last.probabilities.get(believed, 0.0))}"
    if is_the_reading(readings, verdict):
        # The verdict is this reading itself, its label taken against the share a side needs, not as its largest part: on a
        # NOT ENOUGH INFO verdict "differs from the judge's last belief, supported 50%" read as a contradiction.
        said = f"The verdict {common_label(verdict.label)}{stated} is the last reading itself, calibrated"
        if side == believed:
            return f"{said}."
        why = (
            verdict.rationale if side == "NOT ENOUGH INFO" else f"{WORDS.get(side, side)} is the likelier side of what addresses the claim"
        )
        return f"{said}; its largest share is {largest}, but {why[:1].lower()}{why[1:]}"
    agree = "agrees with" if side == believed else "differs from"
    return f"The verdict {common_label(verdict.label)}{stated} {agree} the judge's last belief, {largest}."


def belief_caption(readings: Sequence[BeliefRead]) -> str:
    """How the readings were made, and how far this model's belief could be read when it was calibrated (Markdown, escaped)."""
    if all(r.method == "exhibits" for r in readings):
        text = (
            "Weighed as desk weighs its exhibits: each item's stance read on its own from the model's answer letters in both "
            "option orders, then weighed and calibrated; after a round or a debate, the items argued over are read again with "
            "the arguments made about them."
        )
        if any(READ_AGAIN in r.over for r in readings):
            text += (
                " Measured on the embedded model, an exhibit read with an argument beside it leans the argument's way, a misreading "
                "too: a swing says what the arguments did to the model's reading, and the calibrated ruling reads the exhibits "
                "again only where strong ones point both ways."
            )
        return text
    text = "Read from the judge's answer letters in both orders of the two sides (averaged): a reading beside the ruling, not the ruling itself."
    sampled = next((r.note for r in readings if r.method == "sampling"), "")
    measured = next((r.reliability for r in readings if r.reliability), "")
    return " ".join(
        [text, *(escape_markdown(t) for t in (f"{sampled}." if sampled else "", measured) if t)]
    )  # what a reading stored: escaped


def _shift(before: BeliefRead, after: BeliefRead) -> float:
    return max(abs(after.probabilities.get(k, 0.0) - before.probabilities.get(k, 0.0)) for k in WORDS)


def _move(before: BeliefRead, after: BeliefRead) -> str:
    label = max(WORDS, key=lambda k: abs(after.probabilities.get(k, 0.0) - before.probabilities.get(k, 0.0)))
    delta = (after.probabilities.get(label, 0.0) - before.probabilities.get(label, 0.0)) * 100
    return f"{WORDS[label]} {delta:+.0f} points" if abs(delta) >= 0.5 else "unchanged"


class BeliefPanel:
    """The belief chart and its text in one slot, redrawn as readings arrive and once more with the verdict."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.readings: list[BeliefRead] = []
        self.verdict: Verdict | None = None
        self.renders = 0

    def add(self, reading: BeliefRead) -> None:
        self.readings.append(reading)

    def render(self, slot: Any) -> None:
        if not self.readings:
            return
        self.renders += 1
        with slot.container(border=True):
            st.markdown("**📈 The judge's belief, round by round**")
            st.plotly_chart(build_belief_figure(self.readings, self.verdict), key=f"{self.key}-belief-{self.renders}", width="stretch")
            text = [*belief_lines(self.readings), biggest_move(self.readings), verdict_line(self.readings, self.verdict)]
            st.markdown("\n".join(f"- {escape_markdown(t)}" for t in text if t))  # markup: each line escaped here
            st.caption(belief_caption(self.readings))

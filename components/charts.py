"""Pure chart builders: data in, a plotly figure out (no Streamlit calls)."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go


@dataclass(frozen=True)
class ConfidencePoint:
    """One round's readings: the stop margin (None when no stop agent ran) and the judge's confidence."""

    round: int
    phase: str
    verdict_confidence: float
    stop_margin: float | None = None
    label: str = ""
    stopped: bool = False


def build_confidence_figure(points: list[ConfidencePoint], tau_s: float | None = None, tau_v: float | None = None) -> go.Figure:
    """Stop margin s and verdict confidence c per round, with their thresholds as dashed lines."""
    ordered = sorted(points, key=lambda p: p.round)
    figure = go.Figure()
    figure.add_trace(
        _scatter(
            ordered,
            [p.verdict_confidence for p in ordered],
            mode="lines+markers+text",
            name="verdict confidence c",
            text=[p.label for p in ordered],
            textposition="top center",
            line={"color": "#1f77b4"},
        )
    )
    with_margin = [p for p in ordered if p.stop_margin is not None]
    if with_margin:
        figure.add_trace(
            _scatter(
                with_margin, [p.stop_margin for p in with_margin], mode="lines+markers", name="stop margin s", line={"color": "#ff7f0e"}
            )
        )
    stops = [p for p in ordered if p.stopped]
    if stops:
        star = {"symbol": "star", "size": 16, "color": "#2ca02c"}
        figure.add_trace(_scatter(stops, [p.verdict_confidence for p in stops], mode="markers", name="stopped here", marker=star))
    if tau_v is not None:
        figure.add_hline(y=tau_v, line_dash="dash", line_color="#1f77b4", annotation_text=f"τv = {tau_v:.2f}")
    if tau_s is not None:
        figure.add_hline(y=tau_s, line_dash="dash", line_color="#ff7f0e", annotation_text=f"τs = {tau_s:+.2f}")
    figure.update_layout(
        height=300,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        yaxis={"range": [-1.05, 1.05], "title": "value"},
        xaxis={"title": "round"},
        legend={"orientation": "h", "y": -0.25},
        title={"text": "Stop margin and verdict confidence per round", "font": {"size": 14}},
    )
    return figure


def _scatter(points: list[ConfidencePoint], values: list[float | None], **style: object) -> go.Scatter:
    """One series over the rounds the points were read in (x: "round · phase")."""
    return go.Scatter(x=[f"{p.round} · {p.phase}" for p in points], y=values, **style)

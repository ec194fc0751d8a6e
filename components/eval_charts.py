"""Figures of evaluations: accuracy and cost per protocol, a reliability diagram, confusion matrices.

Pure builders (a report in, a plotly figure out, no Streamlit), so they are tested without
the app; only pages call ``st.plotly_chart``. Labels from datasets and models are shown as
plot text, which plotly escapes.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pipelines.eval import metrics
from pipelines.eval.harness import EvalReport

SHORT_LABELS = {"NOT ENOUGH INFO": "NEI"}  # fits a heatmap's axis without turning sideways
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def report_label(report: EvalReport) -> str:
    """A short name that tells evaluations apart: protocol, backend, size and the id's tail."""
    return f"{report.protocol} · {report.backend} · {report.claims} · {report.id[-6:]}"


def results_frame(reports: Sequence[EvalReport]) -> pd.DataFrame:
    """One row per evaluation with its headline figures and cost per claim (for st.dataframe)."""
    rows = []
    for r in reports:
        rows.append(
            {
                "evaluation": report_label(r),
                "dataset": f"{r.dataset}/{r.split}",
                "labels": r.labels,
                "claims": r.claims,
                "failed": r.failed,
                "accuracy": round(r.accuracy, 3),
                "ceiling": round(r.ceiling, 3),
                "macro-F1": round(r.macro_f1, 3),
                "ECE": None if r.calibration.ece is None else round(r.calibration.ece, 3),
                "ECE claims": r.calibration.covered,
                "sel. acc. @50%": _selective(r, 0.5),
                "sel. acc. @80%": _selective(r, 0.8),
                "evidence recall": None if r.evidence_recall is None else round(r.evidence_recall, 3),
                "calls / claim": round(r.per_claim("calls"), 2),
                "cached calls": r.cost.cached_calls,
                "tokens in / claim": round(r.per_claim("tokens_in")),
                "tokens out / claim": round(r.per_claim("tokens_out")),
                "retrievals / claim": round(r.per_claim("retrieval_calls"), 2),
                "s / claim": round(r.per_claim("wall_seconds"), 2),
                "wall s": round(r.cost.wall_seconds, 1),
                "id": r.id,
            }
        )
    return pd.DataFrame(rows)


def _selective(report: EvalReport, coverage: float) -> float | None:
    """Accuracy on the ``coverage`` share of the claims whose verdict states a confidence, surest first."""
    rows = report.rows
    found = metrics.selective_accuracy(
        [r.confidence if r.status == "completed" else None for r in rows], [r.correct for r in rows], coverage
    )
    return None if found is None else round(found, 3)


def claims_frame(report: EvalReport) -> pd.DataFrame:
    """One row per claim of an evaluation (for st.dataframe)."""
    return pd.DataFrame([row.flat_row() for row in report.rows])


def axis_label(report: EvalReport) -> str:
    """Two short lines for a category axis: the protocol, then backend, size and id tail."""
    return f"{report.protocol}<br>{report.backend} · {report.claims} · {report.id[-6:]}"


def build_accuracy_cost_figure(reports: Sequence[EvalReport]) -> go.Figure:
    """Three panels side by side: accuracy and macro-F1, model calls and tokens per claim, seconds per claim."""
    names = [axis_label(r) for r in reports]
    fig = make_subplots(rows=1, cols=3, subplot_titles=("Accuracy and macro-F1", "Model calls and tokens per claim", "Seconds per claim"))
    fig.add_trace(go.Bar(name="accuracy", x=names, y=[r.accuracy for r in reports], marker_color=PALETTE[0]), row=1, col=1)
    fig.add_trace(go.Bar(name="macro-F1", x=names, y=[r.macro_f1 for r in reports], marker_color=PALETTE[1]), row=1, col=1)
    fig.add_trace(go.Bar(name="model calls", x=names, y=[r.per_claim("calls") for r in reports], marker_color=PALETTE[2]), row=1, col=2)
    fig.add_trace(
        go.Bar(
            name="tokens (thousands)",
            x=names,
            y=[(r.per_claim("tokens_in") + r.per_claim("tokens_out")) / 1000 for r in reports],
            marker_color=PALETTE[4],
        ),
        row=1,
        col=2,
    )
    fig.add_trace(go.Bar(name="seconds", x=names, y=[r.per_claim("wall_seconds") for r in reports], marker_color=PALETTE[3]), row=1, col=3)
    fig.update_yaxes(range=[0, 1], row=1, col=1)
    fig.update_xaxes(tickangle=0)
    fig.update_layout(barmode="group", height=420, margin={"t": 80, "b": 10}, legend={"orientation": "h", "y": 1.18, "x": 0})
    return fig


def build_reliability_figure(reports: Sequence[EvalReport]) -> go.Figure:
    """Accuracy against stated confidence per bin (marker size = claims in the bin); the diagonal is perfect calibration.

    Evaluations whose verdicts state no confidence have nothing to plot and are named in the title.
    """
    return build_reliability_lines([(report_label(r), r.calibration) for r in reports])


def build_reliability_lines(named: Sequence[tuple[str, metrics.Calibration]], title: str = "Reliability diagram") -> go.Figure:
    """The reliability diagram of each named set of confidences (an evaluation, a calibration's cross-validated fit)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfectly calibrated", line={"dash": "dash", "color": "gray"}))
    without: list[str] = []
    for i, (name, calibration) in enumerate(named):
        bins = [b for b in calibration.bins if b.count]
        if not bins:
            without.append(name)
            continue
        ece = calibration.ece or 0.0
        fig.add_trace(
            go.Scatter(
                x=[b.mean_confidence for b in bins],
                y=[b.accuracy for b in bins],
                mode="lines+markers",
                name=f"{name} (ECE {ece:.3f})",
                marker={"size": [8 + 4 * b.count**0.5 for b in bins], "color": PALETTE[i % len(PALETTE)]},
                customdata=[[b.count, b.lower, b.upper] for b in bins],
                hovertemplate="confidence %{x:.2f}<br>accuracy %{y:.2f}<br>%{customdata[0]} claims in [%{customdata[1]:.1f}, %{customdata[2]:.1f})",
            )
        )
    if without:
        title += f" — no confidence stated by: {', '.join(without)}"
    fig.update_layout(
        title={"text": title, "font": {"size": 13}},
        xaxis={"title": "stated confidence", "range": [0, 1]},
        yaxis={"title": "accuracy", "range": [0, 1.02]},
        height=420,
        margin={"t": 50, "b": 10},
    )
    return fig


def selective_curves(reports: Sequence[EvalReport]) -> list[tuple[str, list[tuple[float, float]]]]:
    """Each evaluation that states a confidence: its accuracy on the share of claims it is surest of, from 10% to all."""
    found = []
    for r in reports:
        curve = metrics.coverage_curve([x.confidence if x.status == "completed" else None for x in r.rows], [x.correct for x in r.rows])
        if curve:
            found.append((report_label(r), curve))
    return found


def build_selective_figure(curves: Sequence[tuple[str, Sequence[tuple[float, float]]]], title: str = "Selective accuracy") -> go.Figure:
    """Accuracy on the claims a verdict is surest of, against the share of claims kept: a useful confidence slopes down to the right."""
    fig = go.Figure()
    for i, (name, curve) in enumerate(curves):
        fig.add_trace(
            go.Scatter(
                x=[c for c, _ in curve],
                y=[a for _, a in curve],
                mode="lines+markers",
                name=name,
                marker={"color": PALETTE[i % len(PALETTE)]},
                hovertemplate="surest %{x:.0%} of the claims<br>accuracy %{y:.2f}<extra></extra>",
            )
        )
    fig.update_layout(
        title={"text": title + ("" if curves else " — no evaluation here states a confidence"), "font": {"size": 13}},
        xaxis={"title": "share of claims kept, surest first", "range": [0, 1.02], "tickformat": ".0%"},
        yaxis={"title": "accuracy on them", "range": [0, 1.02]},
        height=420,
        margin={"t": 50, "b": 10},
    )
    return fig


def build_confusion_figure(report: EvalReport) -> go.Figure:
    """Counts of gold (rows) against predicted (columns) as an annotated heatmap."""
    cm = report.confusion
    fig = go.Figure(
        go.Heatmap(
            z=[list(row) for row in cm.counts],
            x=[SHORT_LABELS.get(c, c) for c in cm.columns],
            y=[SHORT_LABELS.get(r, r) for r in cm.rows],
            text=[[str(n) for n in row] for row in cm.counts],
            texttemplate="%{text}",
            colorscale="Blues",
            showscale=False,
            hovertemplate="gold %{y}<br>predicted %{x}<br>%{z} claims<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": f"{report_label(report)}: accuracy {report.accuracy:.2f}", "font": {"size": 13}},
        xaxis={"title": "predicted", "side": "bottom"},
        yaxis={"title": "gold", "autorange": "reversed"},
        height=330,
        margin={"t": 50, "b": 10, "l": 10, "r": 10},
    )
    return fig

"""Pure builders for the courtroom audit screens: tables as DataFrames, charts as plotly figures.

No Streamlit here: pages and components hand the results to st.dataframe / st.plotly_chart,
and tests check them directly.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pipelines.protocols.proclaim.record import CourtRecord
from pipelines.run.tools.web import is_web_url

STATUS_COLOURS = {
    "admitted": "#2e7d32",
    "disputed": "#ef6c00",
    "discarded": "#c62828",
    "redundant": "#9e9e9e",
    "not assessed": "#616161",
}
LABEL_COLOURS = {"SUPPORTED": "#2e7d32", "NOT SUPPORTED": "#c62828", "INCONCLUSIVE": "#757575"}
SIDE_COLOURS = {"Plaintiff": "#1565c0", "Defense": "#ad1457"}
DASHES = {"Plaintiff": "solid", "Defense": "dot"}  # the sides often coincide: a dash and a symbol keep both visible
SYMBOLS = {"Plaintiff": "circle", "Defense": "diamond-open"}
EXHIBIT_COLUMNS = [
    "id",
    "status",
    "w",
    "r",
    "c",
    "reason",
    "novelty",
    "round",
    "found by",
    "source",
    "link",
    "title",
    "cited in",
    "query",
    "text",
]


def exhibit_frame(record: CourtRecord) -> pd.DataFrame:
    """One row per exhibit: id, status and reason, r, c, w, novelty, round, who found it, source, link, where cited."""
    rows = []
    for x in record.exhibits.values():
        e, a = x.evidence, x.admissibility
        reason = a.reason if a else ""
        if x.status == "redundant" and x.novelty is not None:
            reason = f"novelty {x.novelty:.2f} below {record.setting('novelty_admit_at', 0.2):.2f}: too close to the pool"
        rows.append(
            {
                "id": e.id,
                "status": x.status,
                "w": a.weight if a else None,
                "r": a.relevance if a else None,
                "c": a.credibility if a else None,
                "reason": reason,
                "novelty": x.novelty,
                "round": e.round,
                "found by": e.found_by,
                "source": e.source_label,
                "link": e.url if e.url and is_web_url(e.url) else "",
                "title": e.title,
                "cited in": ", ".join(x.cited_in),
                "query": e.query,
                "text": e.text,
            }
        )
    frame = pd.DataFrame(rows, columns=EXHIBIT_COLUMNS)
    for column in ("w", "r", "c", "novelty"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame


def filter_exhibits(
    frame: pd.DataFrame, statuses: list[str] | None = None, found_by: list[str] | None = None, text: str = "", cited_only: bool = False
) -> pd.DataFrame:
    """The rows matching every filter given (an empty filter keeps everything)."""
    kept = frame
    if statuses:
        kept = kept[kept["status"].isin(statuses)]
    if found_by:
        kept = kept[kept["found by"].isin(found_by)]
    if text.strip():
        needle = text.strip().lower()
        haystack = (
            kept["id"].str.lower() + " " + kept["title"].str.lower() + " " + kept["text"].str.lower() + " " + kept["source"].str.lower()
        )
        kept = kept[haystack.str.contains(needle, regex=False)]
    if cited_only:
        kept = kept[kept["cited in"] != ""]
    return kept


def build_admissibility_scatter(record: CourtRecord) -> go.Figure:
    """Relevance against credibility, one point per ruled exhibit, coloured by status, with the w = r x c thresholds as curves."""
    frame = exhibit_frame(record).dropna(subset=["r", "c"])
    fig = go.Figure()
    admit, discard = record.setting("admit_above", 0.5), record.setting("discard_at_or_below", 0.1)
    for threshold, name in ((admit, f"w = {admit:g} (admit above)"), (discard, f"w = {discard:g} (discard at or below)")):
        xs = [x / 100 for x in range(max(1, int(threshold * 100)), 101)]
        fig.add_trace(
            go.Scatter(
                x=xs, y=[threshold / x for x in xs], mode="lines", name=name, line={"dash": "dot", "color": "#9e9e9e"}, hoverinfo="skip"
            )
        )
    for status, colour in STATUS_COLOURS.items():
        rows = frame[frame["status"] == status]
        if rows.empty:
            continue
        # exhibits with the same r and c share one marker, labelled with all their ids
        groups = rows.groupby(["r", "c"], sort=False)
        points = [
            (
                r,
                c,
                ", ".join(g["id"]),
                "<br>".join(
                    f"<b>{i}</b> w {w:.2f}: {t} — {why}" for i, w, t, why in zip(g["id"], g["w"], g["title"], g["reason"], strict=True)
                ),
                len(g),
            )
            for (r, c), g in groups
        ]
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] for p in points],
                mode="markers+text",
                name=status,
                text=[p[2] for p in points],
                textposition="top center",
                marker={"color": colour, "size": [10 + 3 * min(p[4] - 1, 4) for p in points], "line": {"width": 1, "color": "white"}},
                customdata=[p[3] for p in points],
                hovertemplate="r %{x:.2f} · c %{y:.2f}<br>%{customdata}<extra>" + status + "</extra>",
            )
        )
    fig.update_layout(
        title="Admissibility: relevance × credibility",
        xaxis={"title": "relevance r", "range": [-0.03, 1.05]},
        yaxis={"title": "credibility c", "range": [-0.03, 1.08]},
        height=420,
        margin={"t": 50, "b": 40, "l": 50, "r": 20},
        legend={"orientation": "h", "y": -0.18},
    )
    return fig


def build_vote_chart(record: CourtRecord) -> go.Figure:
    """Votes per label, each bar naming the judges who cast them."""
    labels = ["SUPPORTED", "NOT SUPPORTED", "INCONCLUSIVE"]
    judges = {label: [v.judge for v in record.votes if v.label == label] for label in labels}
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=[len(judges[label]) for label in labels],
            marker_color=[LABEL_COLOURS[label] for label in labels],
            text=[", ".join(judges[label]) for label in labels],
            textposition="inside",
            hovertemplate="%{x}: %{y} vote(s)<br>%{text}<extra></extra>",
        )
    )
    failed = len(record.failed_judges)
    fig.update_layout(
        title="Panel votes" + (f" ({failed} judge{'s' * (failed != 1)} failed)" if failed else ""),
        yaxis={"title": "votes", "dtick": 1, "range": [0, max(3, len(record.votes))]},
        height=320,
        margin={"t": 50, "b": 40, "l": 50, "r": 20},
    )
    return fig


def confidence_terms(record: CourtRecord) -> list[tuple[str, float]]:
    """The signed terms that add up to c_final: vote share, judge quality, delta_rs, delta_ref, then clamp and floor."""
    c = record.confidence
    if c is None:
        return []
    terms = [
        ("vote share", c.vote_share_term),
        ("judge quality", c.quality_term),
        ("role switch (delta_rs)", c.delta_rs),
        ("reflection (delta_ref)", c.delta_ref),
    ]
    clamped = min(1.0, max(0.0, c.unclamped))
    if abs(clamped - c.unclamped) > 1e-12:
        terms.append(("clamp to [0, 1]", clamped - c.unclamped))
    if c.floor_applied:
        terms.append(("floor", c.c_final - clamped))
    return terms


def build_confidence_chart(record: CourtRecord) -> go.Figure:
    """The confidence as a waterfall: each signed term stacked on the last, ending in c_final."""
    terms = confidence_terms(record)
    c = record.confidence
    names = [name for name, _ in terms] + (["c_final"] if c is not None else [])
    values = [value for _, value in terms] + ([c.c_final] if c is not None else [])
    fig = go.Figure(
        go.Waterfall(
            x=names,
            y=values,
            measure=["relative"] * len(terms) + (["total"] if c is not None else []),
            text=[f"{v:+.3f}" for _, v in terms] + ([f"{c.c_final:.3f}"] if c is not None else []),
            textposition="outside",
            increasing={"marker": {"color": "#1565c0"}},
            decreasing={"marker": {"color": "#c62828"}},
            totals={"marker": {"color": "#212121"}},
            connector={"line": {"color": "#9e9e9e", "dash": "dot"}},
            hovertemplate="%{x}: %{text}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Confidence, term by term",
        yaxis={
            "title": "confidence",
            "range": [min(0.0, *_running(values[: len(terms)])) - 0.05, max(1.0, *_running(values[: len(terms)])) + 0.12],
        },
        height=380,
        margin={"t": 50, "b": 40, "l": 50, "r": 20},
        showlegend=False,
    )
    return fig


def _running(values: list[float]) -> list[float]:
    total, sums = 0.0, []
    for v in values:
        total += v
        sums.append(total)
    return sums or [0.0]


def build_rounds_chart(record: CourtRecord) -> go.Figure:
    """Three panels across rounds: the critic's scores and provisional leaning, each side's s_ref, pool size and mean novelty."""
    rounds = sorted(record.rounds)
    debate = [r for r in rounds if r >= 1]
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.09,
        subplot_titles=("Provisional verdict (critic)", "Self-reflection s_ref", "Evidence pool"),
        specs=[[{}], [{}], [{"secondary_y": True}]],
    )
    for side, colour in SIDE_COLOURS.items():
        style = {"line": {"color": colour, "dash": DASHES[side]}, "marker": {"symbol": SYMBOLS[side], "size": 9}}
        scores = [record.rounds[r].critic_scores.get(side) for r in debate]
        fig.add_trace(go.Scatter(x=debate, y=scores, mode="lines+markers", name=f"critic: {side}", **style), row=1, col=1)
        values = [record.rounds[r].s_ref.get(side) for r in debate]
        fig.add_trace(go.Scatter(x=debate, y=values, mode="lines+markers", name=f"s_ref: {side}", **style), row=2, col=1)
    leanings = [record.rounds[r].leaning for r in debate]
    fig.add_trace(
        go.Scatter(
            x=debate,
            y=[10.9] * len(debate),
            mode="markers+text",
            text=[lean or "—" for lean in leanings],
            textposition="middle right",
            textfont={"size": 10},
            marker={"color": [LABEL_COLOURS.get(lean, "#bdbdbd") for lean in leanings], "size": 11, "symbol": "square"},
            name="leaning",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(x=rounds, y=[record.rounds[r].pool_size for r in rounds], name="pool size", marker_color="#90caf9", opacity=0.7),
        row=3,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=debate,
            y=[record.rounds[r].mean_novelty for r in debate],
            mode="lines+markers",
            name="mean novelty",
            line={"color": "#00897b"},
        ),
        row=3,
        col=1,
        secondary_y=True,
    )
    exhausted = record.setting("novelty_exhausted_below", 0.10)
    fig.add_hline(y=exhausted, line={"dash": "dot", "color": "#00897b"}, row=3, col=1, secondary_y=True)  # type: ignore[arg-type]
    if record.stop is not None:
        fig.add_vline(x=record.stop.round, line={"dash": "dot", "color": "#616161"})
        fig.add_annotation(
            x=record.stop.round, y=0.08, xref="x2", yref="y2", text=f"stopped: {record.stop.rule} ", xanchor="right", showarrow=False
        )
    fig.update_yaxes(title_text="score /10", range=[0, 11.8], row=1, col=1)
    fig.update_yaxes(title_text="s_ref", range=[0, 1.05], row=2, col=1)
    fig.update_yaxes(title_text="items", row=3, col=1)
    fig.update_yaxes(title_text="novelty", range=[0, 1.05], dtick=0.25, row=3, col=1, secondary_y=True)
    fig.update_xaxes(title_text="round (0 = opening retrieval)", dtick=1, row=3, col=1)
    fig.update_layout(height=760, margin={"t": 60, "b": 90, "l": 60, "r": 40}, legend={"orientation": "h", "y": -0.13})
    return fig


def premise_frame(record: CourtRecord) -> pd.DataFrame:
    """The premise checklist: addressed or not, how close the best sentence came, and which turns addressed it."""
    checks = {c.index: c for c in record.premise_checks}
    rows = []
    for i, premise in enumerate(record.premises, start=1):
        check = checks.get(i)
        rows.append(
            {
                "premise": f"P{i}. {premise}",
                "addressed": bool(check and check.addressed),
                "best similarity": check.similarity if check else None,
                "addressed by": ", ".join(check.turns) if check else "",
            }
        )
    return pd.DataFrame(rows, columns=["premise", "addressed", "best similarity", "addressed by"])


def judge_frame(record: CourtRecord) -> pd.DataFrame:
    """One row per judge that answered: model, three scores, their mean, vote."""
    rows = []
    for v in record.votes:
        scores = v.scores
        mean = sum(scores.values()) / len(scores) if scores else None
        rows.append({"judge": v.judge, "model": v.model, **scores, "mean quality": mean, "vote": v.label})
    return pd.DataFrame(rows)

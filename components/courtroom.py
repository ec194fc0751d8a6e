"""The courtroom audit screens: evidence inspector, panel, rounds and premise checklist, for live or stored runs.

``render_courtroom_audit(events)`` renders nothing for runs that are not courtroom runs, so
a page can call it for every run. Figures come from components.proclaim_charts.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.badges import label_badge
from components.proclaim_charts import (
    STATUS_COLOURS,
    build_admissibility_scatter,
    build_confidence_chart,
    build_rounds_chart,
    build_vote_chart,
    confidence_terms,
    exhibit_frame,
    filter_exhibits,
    premise_frame,
)
from components.state import AUDIT_PREFIX
from pipelines.core.events import Event
from pipelines.core.text.safety import escape_markdown
from pipelines.protocols.proclaim.record import CourtRecord
from pipelines.stages.admissibility import FROM_READING

TABS = ["🧾 Evidence inspector", "⚖️ Panel", "📈 Rounds", "✅ Premises"]


def render_courtroom_audit(events: list[Event], key: str = "run") -> None:
    record = CourtRecord.from_events(events)
    if not record.is_courtroom:
        return
    st.subheader("Court record")
    inspector, panel, rounds, premises = st.tabs(TABS)
    with inspector:
        render_evidence_inspector(record, key)
    with panel:
        render_panel(record, key)
    with rounds:
        render_rounds(record, key)
    with premises:
        render_premises(record)


def render_evidence_inspector(record: CourtRecord, key: str) -> None:
    frame = exhibit_frame(record)
    if frame.empty:
        st.caption("No exhibits yet.")
        return
    counts = frame["status"].value_counts()
    read = " (r from desk's stance reading, 2 × p(addresses the claim) − 1; c not rated)" if _from_reading(frame) else ""
    st.caption(  # markup: counts of the fixed statuses, the run's numeric settings and a fixed phrase
        " · ".join(f"**{counts.get(s, 0)}** {s}" for s in STATUS_COLOURS if counts.get(s, 0))
        + f" — w = r × c{read}; admitted above {record.setting('admit_above', 0.5):g}, discarded at or below "
        f"{record.setting('discard_at_or_below', 0.1):g}; new items join only with novelty ≥ {record.setting('novelty_admit_at', 0.2):g}."
    )
    left, middle, right, last = st.columns([2, 2, 2, 1])
    statuses = left.multiselect("Status", [s for s in STATUS_COLOURS if counts.get(s, 0)], key=f"{AUDIT_PREFIX}{key}.status")
    found_by = middle.multiselect("Found by", sorted(frame["found by"].unique()), key=f"{AUDIT_PREFIX}{key}.found_by")
    text = right.text_input("Search", key=f"{AUDIT_PREFIX}{key}.search", placeholder="id, title, text or source")
    cited_only = last.toggle("Cited only", key=f"{AUDIT_PREFIX}{key}.cited")
    shown = filter_exhibits(frame, statuses, found_by, text, cited_only)
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        key=f"{AUDIT_PREFIX}{key}.table",
        column_config={
            "w": st.column_config.ProgressColumn("w = r×c", min_value=0.0, max_value=1.0, format="%.2f"),
            "r": st.column_config.NumberColumn("r", format="%.2f"),
            "c": st.column_config.NumberColumn("c", format="%.2f"),
            "novelty": st.column_config.NumberColumn("novelty", format="%.2f", help="1 - max cosine to the pool when it was found"),
            "link": st.column_config.LinkColumn("link", display_text="open ↗"),
            "reason": st.column_config.TextColumn("reason", width="large"),
            "text": st.column_config.TextColumn("text", width="large"),
        },
    )
    st.caption(f"{len(shown)} of {len(frame)} exhibits. Click a column header to sort.")
    st.plotly_chart(build_admissibility_scatter(record), key=f"{AUDIT_PREFIX}{key}.scatter")


def _from_reading(frame: pd.DataFrame) -> bool:
    """Whether the court ruled from desk's stance reading (a grounded court, ``proclaim.relevance_from``)."""
    return bool(frame["reason"].astype(str).str.startswith(FROM_READING).any())


def render_panel(record: CourtRecord, key: str) -> None:
    c = record.confidence
    if c is None and not record.votes and not record.failed_judges:
        st.caption("The panel has not ruled yet.")
        return
    if c is not None:
        split = f" — {escape_markdown(c.tie_break)}" if c.tie_break else ""
        st.markdown(  # markup: numbers, a badge and the escaped tie-break
            f"#### {label_badge(c.label)} by {c.winning_votes} of {c.total_votes} judge{'s' * (c.total_votes != 1)}{split}"
            f" · confidence **{c.c_final:.2f}**"
        )
    cards = st.columns(max(1, len(record.votes) + len(record.failed_judges)))
    for column, vote in zip(cards, record.votes, strict=False):
        with column.container(border=True):
            st.markdown(f"**{escape_markdown(vote.judge)}** {label_badge(vote.label)}")
            st.caption(f"model: {escape_markdown(vote.model)}")
            mean = sum(vote.scores.values()) / len(vote.scores) if vote.scores else 0.0
            st.markdown(  # markup: escaped names and numbers
                "  \n".join(f"{escape_markdown(name.replace('_', ' '))}: **{value:.1f}**/10" for name, value in vote.scores.items())
                + f"  \nmean quality: **{mean:.2f}**"
            )
            st.markdown(escape_markdown(vote.reason))
    for column, failure in zip(cards[len(record.votes) :], record.failed_judges, strict=False):
        with column.container(border=True):
            st.markdown(f"**{escape_markdown(failure.stage.removeprefix('panel: '))}** :red-badge[failed]")
            st.error(escape_markdown(failure.reason))
    left, right = st.columns(2)
    left.plotly_chart(build_vote_chart(record), key=f"{AUDIT_PREFIX}{key}.votes")
    if c is not None:
        right.plotly_chart(build_confidence_chart(record), key=f"{AUDIT_PREFIX}{key}.confidence")
        _render_confidence_sum(record)


def _render_confidence_sum(record: CourtRecord) -> None:
    c = record.confidence
    assert c is not None
    w_vote, w_quality = record.setting("vote_share_weight", 0.8), record.setting("quality_weight", 0.3)
    judges = c.total_votes
    lines = [
        f"- vote share: {w_vote:g} × {c.winning_votes}/{c.total_votes} = **{c.vote_share_term:.3f}**",
        f"- judge quality: {w_quality:g} × {c.quality_sum:.2f}/{10 * judges} = **{c.quality_term:.3f}** → c_base **{c.c_base:.3f}**",
    ]
    if record.role_switch is not None:
        lines.append(f"- role switch: gamma **{record.role_switch.gamma:.1f}**/10 → delta_rs **{c.delta_rs:+.2f}**")
    else:
        lines.append(f"- role switch: off or not scored → delta_rs **{c.delta_rs:+.2f}**")
    if c.s_ref is not None:
        lines.append(
            f"- reflection: max({record.setting('ref_floor', -0.15):g}, ({c.s_ref:.3f} − {record.setting('ref_center', 0.5):g}) × "
            f"{record.setting('ref_scale', 0.6):g}) = **{c.delta_ref:+.3f}** (winning side's last s_ref)"
        )
    else:
        lines.append("- reflection: no winning side → delta_ref **0**")
    adjust = [name for name, _ in confidence_terms(record) if name in ("clamp to [0, 1]", "floor")]
    lines.append(f"- sum **{c.unclamped:.3f}**" + (f", then {' and '.join(adjust)}" if adjust else "") + f" → c_final **{c.c_final:.3f}**")
    st.markdown("\n".join(lines))  # markup: numbers and the app's names of adjustments


def render_rounds(record: CourtRecord, key: str) -> None:
    if record.stop is not None:
        st.info(  # markup: a round number and escaped text
            f"Stopped after round {record.stop.round} by **{escape_markdown(record.stop.rule)}**: {escape_markdown(record.stop.detail)}"
        )
    elif record.rounds:
        st.caption("The debate is still going.")
    if not record.rounds:
        st.caption("No rounds yet.")
        return
    st.plotly_chart(build_rounds_chart(record), key=f"{AUDIT_PREFIX}{key}.rounds")
    for expert in record.experts:
        verdict = f"granted: {escape_markdown(expert.persona)}" if expert.granted else "refused"
        st.markdown(  # markup: verdict is escaped above
            f":blue-badge[expert witness] Round {expert.round}: {escape_markdown(expert.requested_by)} asked for an expert in "
            f"*{escape_markdown(expert.field)}* — {verdict}. {escape_markdown(expert.reason)}"
        )


def render_premises(record: CourtRecord) -> None:
    frame = premise_frame(record)
    if frame.empty:
        st.caption("No premises yet.")
        return
    for row in frame.itertuples(index=False):
        mark = ":green-badge[addressed]" if row.addressed else ":red-badge[not addressed]"
        best = f" (closest sentence {row._2:.2f})" if row._2 is not None else ""
        by = f" — by {escape_markdown(row._3)}" if row._3 else " — not addressed by any argument"
        st.markdown(f"{mark} {escape_markdown(row.premise)}{best}{by}")  # markup: mark is a badge, best a number, by escaped
    st.caption(
        f"A premise counts as addressed when a sentence of an argument has cosine ≥ {record.setting('premise_addressed_at', 0.5):g} to it."
    )

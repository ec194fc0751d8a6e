"""History's compare: any two stored runs, whatever their claims' wording, read side by side."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from components.badges import label_badge
from pipelines.domain import Evidence
from pipelines.record.compare import RunComparison, RunSide
from pipelines.text.probability import percent
from pipelines.text.safety import escape_markdown


def comparison_table(comparison: RunComparison) -> pd.DataFrame:
    """Verdict, confidence and cost of both runs, one column each (pure: no Streamlit calls)."""

    def column(side: RunSide) -> dict[str, str]:
        confidence = percent(side.confidence) if side.confidence is not None else "none stated"
        verdict = side.label + (f" ({side.own_label})" if side.own_label and side.own_label != side.label else "")
        return {
            "claim": side.claim,
            "protocol": side.protocol,
            "verdict": verdict + (", the checker's" if side.overridden else ""),
            "confidence": "the checker's verdict" if side.overridden else confidence,
            "model calls": f"{side.cost.calls:,}",
            "tokens sent / written": f"{side.cost.tokens_in:,} / {side.cost.tokens_out:,}",
            "model time": f"{side.cost.model_seconds:.1f} s",
            "arguments": f"{len(side.turns)}",
        }

    left, right = column(comparison.left), column(comparison.right)
    return pd.DataFrame({"": list(left), comparison.left.run_id: list(left.values()), comparison.right.run_id: list(right.values())})


def render_comparison(comparison: RunComparison) -> None:
    """The two runs: a table of verdicts and cost, the exhibits both used and each alone, the arguments side by side."""
    agree = "reach the same verdict" if comparison.agree else "reach different verdicts"
    wording = "" if comparison.same_claim else " The two claims are worded differently: read each run's claim in the table."
    st.markdown(  # markup: app text, the badges of two labels, and numbers
        f"The two runs {agree}: {label_badge(comparison.left.label)} and {label_badge(comparison.right.label)}.{wording}"
    )
    st.table(comparison_table(comparison))
    st.markdown(  # markup: numbers
        f"**Exhibits:** {len(comparison.shared)} found by both · {len(comparison.left_only)} only by the first · "
        f"{len(comparison.right_only)} only by the second"
    )
    if comparison.shared:
        st.table(
            pd.DataFrame(
                [
                    {
                        "first run's id": s.left_id,
                        "second run's id": s.right_id,
                        "title": s.title,
                        "the first rests on it": "yes" if s.left_cited else "no",
                        "the second rests on it": "yes" if s.right_cited else "no",
                    }
                    for s in comparison.shared
                ]
            )
        )
    left, right = st.columns(2)
    _lone(left, "Only the first run found", comparison.left_only, comparison.left_cited)
    _lone(right, "Only the second run found", comparison.right_only, comparison.right_cited)
    st.markdown("**The arguments, side by side**")
    left, right = st.columns(2)
    for column, side in ((left, comparison.left), (right, comparison.right)):
        with column:
            st.caption(f"{escape_markdown(side.protocol)} · {escape_markdown(side.run_id)}")
            if not side.turns:
                st.caption("No arguments: this protocol rules without a debate, or the run stopped before one.")
            for turn in side.turns:
                with st.container(border=True):
                    st.markdown(f"**{escape_markdown(turn.agent)}**, round {turn.round}")  # markup: escaped agent name, a number
                    st.markdown(escape_markdown(turn.text))


def _lone(column: st.delta_generator.DeltaGenerator, title: str, items: Sequence[Evidence], cited: frozenset[str]) -> None:
    with column:
        st.markdown(f"**{title}** ({len(items)})")  # markup: app text and a number
        for item in items:
            rests = " · the run rests on it" if item.id in cited else ""
            name = item.title or item.source_label or item.id
            st.markdown(f"- {escape_markdown(item.id)} · {escape_markdown(name)}{rests}")  # markup: escaped parts

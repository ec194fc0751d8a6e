"""Two runs compared (``pipelines.record.compare``): a table of verdicts, confidence and cost, then the exhibits both used and
each used alone. Tables show text as text; nothing here is Markdown from a run."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pipelines.core.domain import Evidence
from pipelines.core.text.probability import decimal
from pipelines.record.compare import ComparedRun, RunComparison


def _row(side: str, run: ComparedRun) -> dict[str, object]:
    return {
        "run": side,
        "claim, as worded": run.claim,
        "protocol": run.protocol,
        "verdict": run.verdict.common if run.verdict else "no verdict",
        "protocol's word": run.verdict.own if run.verdict else "",
        "confidence": decimal(run.confidence) if run.confidence is not None else "not stated",
        "model calls": run.cost.calls,
        "tokens": run.cost.tokens_in + run.cost.tokens_out,
        "model seconds": round(run.cost.model_seconds, 1),
        "exhibits used": len(run.used),
        "id": run.id,
    }


def _exhibits(items: list[tuple[str, Evidence, bool]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"id": eid, "cited by the verdict": "yes" if cited else "", "source": e.title or e.source_label, "text": e.text}
            for eid, e, cited in items
        ],
        columns=["id", "cited by the verdict", "source", "text"],
    )


def render_comparison(cmp: RunComparison) -> None:
    st.dataframe(pd.DataFrame([_row("this run", cmp.left), _row("the other", cmp.right)]), hide_index=True, width="stretch")
    notes = []
    if not cmp.same_wording:
        notes.append("the two claims are worded differently")
    notes.append("the verdicts agree" if cmp.same_verdict else "the verdicts differ")
    st.caption(
        "; ".join(notes).capitalize() + ". Exhibits are matched by their text, whatever each run numbered them."
    )  # markup: our words
    left, right = cmp.left, cmp.right
    st.markdown(f"**Exhibits both used** ({len(cmp.both)})")
    st.dataframe(
        _exhibits([(f"{a.id} / {b.id}", a, a.id in left.cited or b.id in right.cited) for a, b in cmp.both]),
        hide_index=True,
        width="stretch",
    )
    one, two = st.columns(2)
    with one:
        st.markdown(f"**Only this run** ({len(cmp.left_only)})")
        st.dataframe(_exhibits([(e.id, e, e.id in left.cited) for e in cmp.left_only]), hide_index=True, width="stretch")
    with two:
        st.markdown(f"**Only the other** ({len(cmp.right_only)})")
        st.dataframe(_exhibits([(e.id, e, e.id in right.cited) for e in cmp.right_only]), hide_index=True, width="stretch")

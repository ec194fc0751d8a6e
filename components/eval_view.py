"""The Benchmark page's pieces: past evaluations kept in the run database, the comparison table and plots."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from components.eval_charts import (
    build_accuracy_cost_figure,
    build_confusion_figure,
    build_reliability_figure,
    build_selective_figure,
    claims_frame,
    report_label,
    results_frame,
    selective_curves,
)
from components.resources import get_services
from pipelines.core.text.safety import escape_markdown
from pipelines.eval.harness import EvalReport, ceiling_note
from pipelines.eval.records import EvalStore


@st.cache_resource
def get_eval_store() -> EvalStore | None:
    """Evaluations live in the run database; none without one."""
    store = get_services().store
    return EvalStore(store.engine) if store is not None else None


def render_comparison(reports: Sequence[EvalReport]) -> None:
    """The results table, accuracy and cost per protocol, the reliability diagram, and a confusion matrix each."""
    st.dataframe(results_frame(reports).drop(columns=["id"]), hide_index=True, width="stretch")
    st.caption(
        "ECE: expected calibration error of the confidence each verdict states for its own label (10 bins); "
        "claims whose verdict states none (e.g. `single`) are left out, and 'ECE claims' says how many were used. "
        "Selective accuracy: the accuracy on the 50% (80%) of those claims the verdict is surest of; a confidence worth reading "
        "gives more there than on all claims. "
        "Evidence recall: share of the gold rationale's sentences among those retrieved. A failed run counts as wrong. "
        "Ceiling: the best accuracy reachable from the claims' text alone (below 1 when identical texts carry different gold labels)."
    )
    for report in reports:
        note = ceiling_note(report)
        if note:
            st.warning(f"⚠️ {escape_markdown(report_label(report))}: {escape_markdown(note)}.")
    st.plotly_chart(build_accuracy_cost_figure(reports))
    reliability, selective = st.columns(2)
    with reliability:
        st.plotly_chart(build_reliability_figure(reports))
    with selective:
        st.plotly_chart(build_selective_figure(selective_curves(reports)))
    columns = st.columns(min(len(reports), 3))
    for i, report in enumerate(reports):
        with columns[i % len(columns)]:
            st.plotly_chart(build_confusion_figure(report), key=f"confusion-{report.id}")
    for report in reports:
        with st.expander(f"Claims of {report_label(report)}"):
            st.caption(  # markup: escaped fields and the seed number
                f"Evaluation {escape_markdown(report.id)} · {escape_markdown(report.dataset)}/{escape_markdown(report.split)} · "
                f"seed {report.seed} · labels {escape_markdown(report.labels)}"
            )
            st.dataframe(claims_frame(report), hide_index=True, width="stretch")

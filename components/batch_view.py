"""The Batch page's results: a table of every claim, the failures spelled out, CSV and JSONL downloads."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.record.verdict_card import common_label
from pipelines.run.batch import ClaimOutcome, to_csv, to_jsonl
from pipelines.run.services import Services
from pipelines.run.workers import BatchProgress, batch_progress, cancel_batch, failure_reasons

STATUS_LABELS = {"completed": "✅ completed", "failed": "❌ failed", "stopped": "🛑 stopped by budget", "skipped": "⏭️ not started"}


def outcomes_frame(outcomes: Sequence[ClaimOutcome]) -> pd.DataFrame:
    """One row per claim, in input order (pure: no Streamlit calls)."""
    rows = [
        {
            "#": o.index + 1,
            "id": o.id,
            "status": STATUS_LABELS[o.status],
            "verdict": common_label(o.verdict) if o.verdict else o.verdict,
            "protocol's word": o.verdict,
            "confidence": o.confidence,
            "claim": o.claim,
            "sources": "; ".join(o.sources),
            "model calls": o.cost.calls,
            "cached": o.cost.cached_calls,
            "tokens in": o.cost.tokens_in,
            "tokens out": o.cost.tokens_out,
            "spent": round(o.cost.spent, 6) if o.cost.priced else None,  # empty without prices: unknown, not zero
            "s": round(o.seconds, 1),
            "run": o.run_id,
            "error": o.error,
        }
        for o in sorted(outcomes, key=lambda o: o.index)
    ]
    return pd.DataFrame(rows)


def render_outcomes_table(outcomes: Sequence[ClaimOutcome], slot: object | None = None) -> None:
    """The table, into ``slot`` (an st.empty, for live updates) or the page."""
    target = slot if slot is not None else st
    target.dataframe(  # type: ignore[attr-defined]
        outcomes_frame(outcomes),
        hide_index=True,
        width="stretch",
        column_config={"claim": st.column_config.TextColumn(width="large"), "error": st.column_config.TextColumn(width="large")},
    )


def render_batch_results(outcomes: Sequence[ClaimOutcome], file_stem: str = "batch-results") -> None:
    """Summary line, failures with their reasons, the table, and the two downloads."""
    failed = [o for o in outcomes if o.status != "completed"]
    done = len(outcomes) - len(failed)
    budget = [o for o in outcomes if o.status in ("stopped", "skipped")]
    if budget:
        st.warning(  # markup: counts only
            f"🛑 The batch reached its spend limit: {done} of {len(outcomes)} claims checked, "
            f"{sum(o.status == 'stopped' for o in budget)} stopped mid-run (resumable from History), "
            f"{sum(o.status == 'skipped' for o in budget)} not started. Raise the limit on the Settings page to go on."
        )
    if len(failed) > len(budget):
        st.warning(
            f"⚠️ {done} of {len(outcomes)} claims checked; {len(failed) - len(budget)} failed (the rest went on):"
        )  # markup: counts only
    if failed:
        for o in sorted((o for o in failed if o.status != "skipped"), key=lambda o: o.index):
            st.markdown(f"- **{escape_markdown(o.id)}**: {escape_markdown(o.error)}")
    else:
        said = (
            "The claim was checked; it is a stored run."
            if len(outcomes) == 1
            else f"All {len(outcomes)} claims checked; each is a stored run."
        )
        st.success(f"✅ {said}")  # markup: counts only
    render_outcomes_table(outcomes)
    left, right = st.columns(2)
    left.download_button(
        "Download CSV", to_csv(outcomes), file_name=f"{file_stem}.csv", mime="text/csv", icon="⬇️", width="stretch", on_click="ignore"
    )
    right.download_button(
        "Download JSONL",
        to_jsonl(outcomes),
        file_name=f"{file_stem}.jsonl",
        mime="application/jsonl",
        icon="⬇️",
        width="stretch",
        on_click="ignore",
    )


# --- a batch submitted to the desk's workers (pipelines/run/workers.py) -------------------------------------

PROGRESS_LABELS = {
    "waiting": "⏳ waiting",
    "running": "🔄 running",
    "completed": "✅ completed",
    "failed": "❌ failed",
    "stopped": "🛑 stopped by budget",
    "skipped": "⏭️ not started",
    "cancelled": "⏹️ cancelled",
}
WATCH_EVERY_S = 2.0


def progress_frame(progress: BatchProgress) -> pd.DataFrame:
    """One row per claim of a submitted batch, as the store says now (pure: no Streamlit calls)."""
    rows = [
        {
            "#": c.index + 1,
            "id": c.id,
            "status": PROGRESS_LABELS.get(c.state, c.state),
            "worker": c.worker,
            "verdict": common_label(c.verdict) if c.verdict else None,
            "claim": c.claim,
            "run": c.run_id,
            "attempts": c.attempts or None,  # times a worker took it (a killed worker's claim, a retried failure: more than 1)
            "error": c.error,
        }
        for c in progress.claims
    ]
    return pd.DataFrame(rows)


def progress_line(progress: BatchProgress) -> str:
    """The counts, and the workers (host:pid, from the store) running claims now: plain text, escaped where it is shown."""
    workers = sorted({c.worker for c in progress.claims if c.state == "running" and c.worker})
    parts = [
        f"{progress.count('completed')} of {len(progress.claims)} completed",
        f"{progress.count('running')} running" + (f" on {', '.join(workers)}" if workers else ""),
        f"{progress.count('waiting')} waiting",
    ]
    if failed := progress.count("failed"):
        parts.append(f"{failed} failed")
    if not_run := progress.count("stopped", "skipped", "cancelled"):
        parts.append(f"{not_run} stopped or not started")
    return " · ".join(parts)


def render_submitted_batch(services: Services, queue: str, batch: str = "") -> None:
    """A submitted batch's progress (one submission's, when ``batch`` names one on a shared queue) read from the store,
    refreshed every few seconds while the page is open."""

    @st.fragment(run_every=WATCH_EVERY_S)
    def watch() -> None:
        try:
            progress = failure_reasons(services, batch_progress(services, queue, batch))
        except DebateDeskError as exc:
            st.error(f"⚠️ {escape_markdown(str(exc))}")
            return
        if not progress.claims:
            st.info("This batch has no claims.")
            return
        st.progress(
            progress.count("completed", "failed", "stopped", "skipped", "cancelled") / len(progress.claims),
            text=escape_markdown(progress_line(progress)),
        )
        st.dataframe(
            progress_frame(progress),
            hide_index=True,
            width="stretch",
            column_config={"claim": st.column_config.TextColumn(width="large"), "error": st.column_config.TextColumn(width="large")},
        )
        if not progress.finished:
            st.button(
                "Cancel the claims not started", key=f"cancel-{queue}-{batch}", icon="⏹️", on_click=_cancel, args=(services, queue, batch)
            )
        else:
            st.success(f"✅ Done: {escape_markdown(progress_line(progress))}. Each checked claim is a stored run (History).")

    watch()


def _cancel(services: Services, queue: str, batch: str = "") -> None:
    from components.sign_in import acting_person
    from pipelines.newsroom.access.roles import require

    try:
        require(acting_person(), "run")
        cancelled = cancel_batch(services, queue, batch)
        st.toast(f"{cancelled} claim(s) cancelled; those running finish.")  # markup: a count only
    except DebateDeskError as exc:
        st.toast(f"⚠️ {escape_markdown(str(exc))}")

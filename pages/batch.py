"""Batch page: a file or a pasted list of claims checked as a queue; results to read and download."""

import streamlit as st

from components import state
from components.batch_view import render_batch_results, render_outcomes_table, render_submitted_batch
from components.claim_queue import link_run_to_queue, queue_details
from components.config_form import render_config_form
from components.desk import run_settings_at_desk
from components.pages import render_page_header
from components.resources import get_services
from components.sign_in import acting_person
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.newsroom.access.roles import acting_name, require
from pipelines.run.batch import (
    MAX_BATCH_CLAIMS,
    MAX_CONCURRENCY,
    BatchInputError,
    BatchItem,
    iter_batch,
    parse_claims_file,
    parse_claims_text,
)
from pipelines.run.workers import list_batches, on_workers, submit_batch

state.ensure_framed("pages/batch.py")


services = get_services()
render_page_header("pages/batch.py")
# A shared desk with workers: the page submits the claims to the desk's queue and watches; it never runs them itself.
to_workers = on_workers(services)
st.caption(
    f"Check up to {MAX_BATCH_CLAIMS:,} claims in one go with the run settings in the sidebar. Each claim becomes a normal stored run; "
    "a claim that fails is reported and the rest go on. The spend limits on the **Settings** page apply to each run and to the "
    "whole batch: once the batch's limit is reached no claim starts. "
    + (
        "On this desk the claims go to its workers; their progress is read from the store, so closing this tab loses nothing. "
        if to_workers
        else ""
    )
    + "Each claim joins the **Claims queue** (with its url, date, claimant, assignee, due and tags columns when the file has them)."
)
st.sidebar.header("Run settings")
config = render_config_form(services.corpus_names(), run_settings_at_desk(services), services.store)

upload_tab, paste_tab = st.tabs(["📄 Upload a file", "✍️ Paste a list"])
with upload_tab:
    upload = st.file_uploader(
        "Claims file",
        type=["csv", "jsonl", "txt"],
        help="CSV with a 'claim' column (an 'id' column is optional), JSON lines with a \"claim\" field, or text with one claim per line. UTF-8.",
    )
with paste_tab:
    st.text_area(
        "Claims, one per line", key=state.BATCH_PASTE, height=160, placeholder="Masks reduce transmission of respiratory viruses\n…"
    )
if to_workers:
    concurrency = 0  # each worker's own --concurrency
    st.caption("This desk checks batches on its workers (`python -m pipelines worker`): the claims are submitted and run there.")
else:
    concurrency = st.slider(
        "Claims at once",
        min_value=1,
        max_value=MAX_CONCURRENCY,
        value=2,
        help="How many claims run side by side. Model calls to one backend stay within its 'Parallel calls' setting across all of them.",
    )
start = st.button("Submit to the workers" if to_workers else "Check all", type="primary", icon="▶️")


def _submit(items: list[BatchItem], label: str) -> None:
    """The claims to the desk's workers, each joining the claims queue as it is submitted (its run's id is known then);
    the page watches them below."""
    details, left_out = queue_details(items)
    submitted = submit_batch(items, config, services, by=acting_name(acting_person(), "run"), label=label)
    state.keyed(state.BATCH_WATCHED).set("", submitted.queue)
    st.toast(f"{submitted.jobs} claim{'s' if submitted.jobs != 1 else ''} submitted to the workers.")  # markup: a count only
    _say_left_out(left_out)
    unlinked = [
        problem
        for run_id, item in zip(submitted.run_ids, items, strict=True)
        if (problem := link_run_to_queue(run_id, item.claim, details=details[item.index]))
    ]
    if unlinked:
        st.warning(f"⚠️ {len(unlinked)} run(s): {escape_markdown(unlinked[0])}")


def _say_left_out(left_out: list[str]) -> None:
    """The details of the file that do not read, said before the claims run, so a long batch's file can be mended."""
    if left_out:
        more = f" (and {len(left_out) - 3} more)" if len(left_out) > 3 else ""
        st.warning(  # markup: escaped
            f"⚠️ Some details in the file do not read and are left out of the claims queue (the claims run all the same): "
            f"{escape_markdown('; '.join(left_out[:3]))}{more}."
        )


def _run_here(items: list[BatchItem]) -> None:
    """The claims run in this app, K at a time, the table filling in as each finishes."""
    progress = st.progress(0.0, text=f"0 of {len(items)} claims checked")
    table = st.empty()
    outcomes = []
    unlinked: list[str] = []
    details, left_out = queue_details(items)
    _say_left_out(left_out)
    for outcome in iter_batch(items, config, services, concurrency=concurrency):
        outcomes.append(outcome)
        if outcome.run_id and (problem := link_run_to_queue(outcome.run_id, outcome.claim, details=details[outcome.index])):
            unlinked.append(problem)
        failed = sum(o.status == "failed" for o in outcomes)
        stopped = sum(o.status in ("stopped", "skipped") for o in outcomes)
        progress.progress(
            len(outcomes) / len(items),
            text=f"{len(outcomes)} of {len(items)} claims checked"
            + (f" ({failed} failed)" if failed else "")
            + (f" ({stopped} stopped or not started: the batch's spend limit)" if stopped else ""),
        )
        render_outcomes_table(outcomes, slot=table)
    table.empty()
    progress.empty()
    state.set_batch_outcomes(outcomes)
    if unlinked:
        st.warning(f"⚠️ {len(unlinked)} run(s): {escape_markdown(unlinked[0])}")


if start:
    state.set_batch_error(None)
    try:
        require(acting_person(), "run")  # the role as the users file says now: a removed user runs nothing
        pasted = state.keyed(state.BATCH_PASTE).get("", "")
        if upload is not None:
            items = parse_claims_file(upload.getvalue(), upload.name)
        elif pasted.strip():
            items = parse_claims_text(pasted)
        else:
            raise BatchInputError("upload a file or paste some claims first")
        if to_workers:
            _submit(items, upload.name if upload is not None else "pasted list")
        else:
            _run_here(items)
    except DebateDeskError as exc:
        state.set_batch_error(str(exc))

if state.batch_error():
    st.error(f"⚠️ {escape_markdown(state.batch_error())}")
if to_workers:
    try:
        queues = list_batches(services)
    except DebateDeskError as exc:
        queues = []
        st.error(f"⚠️ {escape_markdown(str(exc))}")
    if queues:
        watched = state.keyed(state.BATCH_WATCHED).get()
        choice = st.selectbox(
            "Submitted batch",
            queues,
            index=queues.index(watched) if watched in queues else 0,
            help="Every batch submitted at this desk, newest first.",
        )
        render_submitted_batch(services, choice)
    elif not state.batch_error():
        st.info("Upload a file or paste a list, then press **Submit to the workers**. Progress appears here, read from the store.")
outcomes = state.batch_outcomes()
if to_workers:
    pass  # a submitted batch's results are on its table above, and each claim's run in History
elif outcomes:
    render_batch_results(outcomes)
elif not state.batch_error():
    st.info("Upload a file or paste a list, then press **Check all**. Results appear here as each claim finishes.")

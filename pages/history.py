"""History page: every run, filtered; open one to replay it, step through it, compare, export, override, resume or import."""

from datetime import UTC, date, datetime, time

import pandas as pd
import streamlit as st

from components import state
from components.comments import render_comments
from components.debate_offer import render_debate_offer
from components.desk import render_resume_with_limits
from components.links import address_picker, render_copy_link, run_line, run_link
from components.pages import render_page_header
from components.rerun import render_rerun, render_rerun_links
from components.resources import get_claim_queue, get_services
from components.review_form import render_override_form
from components.run_compare import render_comparison
from components.sign_in import acting_person
from components.stepper import render_stepper
from components.transcript import replay
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when
from pipelines.newsroom.access.roles import require
from pipelines.protocols.base import PROTOCOLS, get_protocol
from pipelines.record.compare import compare_runs
from pipelines.record.digest import digest
from pipelines.record.export import EXPORT_FORMATS, claimreview_refusal, export_filename, export_run
from pipelines.record.importer import import_run
from pipelines.record.signing import desk_key, existing_desk_key
from pipelines.record.store import RUN_STATUSES, RunFilter, RunSummary
from pipelines.record.verdict_card import common_label, imported_summary, imported_trail

state.ensure_framed("pages/history.py")

STATUS_ICONS = {"completed": "✅", "failed": "❌", "interrupted": "⏸️", "running": "⏳"}
FORMAT_LABELS = {"json": "JSON record", "md": "Markdown report", "csv": "CSV row", "claimreview": "ClaimReview JSON-LD"}

services = get_services()
store = services.store
render_page_header("pages/history.py")
if store is None:
    st.error("This app runs without a run store, so there is no history.")
    st.stop()
store.reconcile()  # runs left running by a process that died show as interrupted (and can be resumed)
queue = get_claim_queue()
if (linked := state.follow_link(state.RUN_PARAM)) is not None:  # ?run=ID: a colleague's link
    if store.has_run(linked):
        state.open_history_run(linked)
    else:
        st.warning(f"No run {escape_markdown(linked[:64])} in this desk's History: the link may be wrong, or the run was made elsewhere.")


def status_icon(run: RunSummary) -> str:
    return "🛑" if run.stop_reason else STATUS_ICONS.get(run.status, "")


def status_text(run: RunSummary) -> str:
    """The status, and why a run stopped short when a spend limit stopped it."""
    return f"{status_icon(run)} {run.status}" + (f" · {run.stop_reason}" if run.stop_reason else "")


def import_uploaded() -> None:
    upload = state.keyed(state.HISTORY_IMPORT).get()
    if upload is None:
        return
    assert store is not None
    try:
        # The person at the desk, as every action records it (never a name in the file), with the role as the users
        # file says now: a removed user imports nothing.
        by = require(acting_person(), "import").name
        if not by:
            state.set_message(state.IMPORT_MESSAGE, ("error", "Enter your name in the sidebar first: the record keeps who imported it."))
            return
        done = import_run(store, upload.getvalue(), source=upload.name, by=by, desk=existing_desk_key(services.settings.data_dir))
    except (DebateDeskError, ValueError) as exc:
        state.set_message(state.IMPORT_MESSAGE, ("error", str(exc)))
        return
    summary = done.summary
    state.open_history_run(summary.id)
    note = "Imported" if done.new else "Already in History"
    kind = "success" if done.check.intact else "warning"
    state.set_message(
        state.IMPORT_MESSAGE,
        (kind, f"{note}: {summary.claim[:80]} ({summary.event_count} events). The record is {done.check.summary()}."),
    )


with st.expander("📥 Import a JSON transcript for audit"):
    st.caption(
        "A record exported here or by another desk, or written by hand in the same schema (`python -m pipelines schema`). "
        "Its signature and chain are checked (`python -m pipelines verify-record FILE` does the same), and it is kept as "
        "what the file says: a verdict in it is never this desk's."
    )
    st.file_uploader("Run record (.json)", type=["json"], key=state.HISTORY_IMPORT, on_change=import_uploaded)
message = state.take_message(state.IMPORT_MESSAGE)
if message:
    kind, text = message
    if kind == "error":
        st.error("⚠️ " + escape_markdown(text))
    elif kind == "warning":
        st.warning("⚠️ " + escape_markdown(text))  # it quotes the imported claim
    else:
        st.success(escape_markdown(text))  # it quotes the imported claim

facets = store.facets()
c1, c2, c3, c4, c5 = st.columns([3, 2, 2, 2, 2])
claim_filter = c1.text_input("Claim contains", key="history.claim")
verdicts = c2.multiselect("Verdict", facets["verdicts"], key="history.verdicts")
protocols = c3.multiselect("Protocol", sorted(set(facets["protocols"]) | set(PROTOCOLS)), key="history.protocols")
statuses = c4.multiselect("Status", list(RUN_STATUSES), key="history.statuses")
dates = c5.date_input("Dates", value=(), key="history.dates", help="One day, or a range")
since = until = None
if isinstance(dates, tuple | list) and dates:
    first, last = dates[0], dates[-1]
    since = datetime.combine(first, time.min, UTC).timestamp()
    until = datetime.combine(last, time.max, UTC).timestamp()
elif isinstance(dates, date):
    since, until = datetime.combine(dates, time.min, UTC).timestamp(), datetime.combine(dates, time.max, UTC).timestamp()

runs = store.list_runs(
    limit=500,
    where=RunFilter(
        claim=claim_filter, verdicts=tuple(verdicts), protocols=tuple(protocols), statuses=tuple(statuses), since=since, until=until
    ),
)
if not runs:
    st.info("No runs match. Runs appear here as soon as they start on the **Verify** page (or are imported above).")
    st.stop()

table = pd.DataFrame(
    [
        {
            "started": when(r.created_at),
            "claim": r.claim,
            "protocol": r.protocol,
            "status": ("📥 imported · " if not r.own else "") + status_text(r),  # another desk's file: marked where the eye starts
            "verdict": common_label(r.final_verdict) if r.final_verdict else "",
            "model's word": r.verdict or "",  # the protocol's own label for what the model ruled
            "checker": f"{common_label(r.checker_verdict)} by {r.checker_by}" + (f", {when(r.checker_at)}" if r.checker_at else "")
            if r.checker_verdict
            else "",
            "model calls": r.cost.calls,
            "cached": r.cost.cached_calls,
            "tokens": r.cost.tokens_in + r.cost.tokens_out,
            "spent": round(r.cost.spent, 6) if r.cost.priced else None,  # empty when the run had no prices
            "events": r.event_count,
            "origin": f"re-run of {r.source_run}" if r.source_run else r.origin,
            "by": r.started_by or "",
            "id": r.id,
        }
        for r in runs
    ]
)
own = sum(r.own for r in runs)
st.caption(  # markup: numbers and our words; the desk's own count, apart from what was imported
    f"{own} run{'s' if own != 1 else ''} of this desk"
    + (f" · {len(runs) - own} imported (📥, another desk's file)" if own != len(runs) else "")
)
st.dataframe(table, hide_index=True, width="stretch", height=min(400, 38 + 35 * len(runs)))

by_id = {r.id: r for r in runs}
chosen = state.history_run()
if chosen is not None and chosen not in by_id and (linked := store.get_run(chosen)) is not None:
    by_id = {chosen: linked, **by_id}  # opened by a link, the queue or an import, though the filter leaves it out
selected = address_picker(
    "Open a run",
    {run_id: run_line(run) for run_id, run in by_id.items()},
    chosen=chosen,
    key=state.HISTORY_PICKER,
    param=state.RUN_PARAM,
    placeholder="Choose a run to replay, export or compare",
    on_open=state.open_history_run,
)
if selected is None:
    st.stop()
run = by_id[selected]  # read with the list above, moments ago
events = store.events(run.id)
chain_state = store.stored_chain(run.id).describe()

st.subheader(escape_markdown(run.claim))
st.caption(  # markup: an icon from a fixed table, times, numbers and escaped fields
    f"{escape_markdown(status_text(run))} · {escape_markdown(run.protocol)} · started {when(run.created_at)} · "
    f"finished {when(run.finished_at)} · {len(events)} events · attempts {run.attempts} · app {escape_markdown(run.app_version)} · "
    f"{escape_markdown(run.origin)} · id {escape_markdown(run.id)} · chain {escape_markdown(chain_state)}"
    + (f" · started by {escape_markdown(run.started_by)}" if run.started_by else "")
)
read = digest(events)
if read.imported is not None:  # what the file says stays the file's word, apart from this desk's own trail
    with st.container(border=True):
        imported = read.imported
        said_line = imported_summary(read)
        st.markdown(f"**📥 {escape_markdown(said_line[:1].upper() + said_line[1:])}**")  # markup: escaped
        st.caption(f"{when(imported.at)}. The file's check: {escape_markdown(imported.check)}.")  # markup: a time and escaped text
        said = imported_trail(read)
        if said:
            st.markdown(  # markup: times and escaped text
                "\n".join(f"- {when(a.at)} · the file says {escape_markdown(a.by or '?')} · {escape_markdown(a.what)}" for a in said)
            )
        st.caption(
            "None of this is this desk's verdict or audit trail: the card, the filter and ClaimReview use only this desk's own."
        )  # the cost, per stage and with its cached calls, is the replay's first line below
render_rerun_links(run, store)
render_copy_link(run_link(run.id))
in_queue = queue.claim_of_run(run.id) if queue is not None else None
if in_queue is not None:
    st.page_link(
        "pages/queue.py", label=f"In the claims queue: {in_queue.status}", icon="📥", query_params={state.CLAIM_PARAM: in_queue.id}
    )
comments = queue.comments_on_run(run.id) if queue is not None else []

actions = st.columns(1 + len(EXPORT_FORMATS))
freed = bool(run.stop_reason and run.stop_reason.startswith("paused at round"))  # its page went away: anyone may take it over
if freed:
    st.info(
        "⏸️ This run is paused and nobody holds the pause (the page that held it went away). Take it over to review the round "
        "yourself: it is recorded with your name and the time. Until then it is stopped, with everything so far kept."
    )
if (
    run.resumable
    and run.origin == "run"
    and actions[0].button(
        "⏸️ Take over" if freed else "▶️ Resume",
        type="primary",
        key="history.resume",
        help="You become the one the pause waits for (recorded with your name)."
        if freed
        else "Go on from the last completed step; calls already made are not made again.",
    )
):
    state.request_resume(run.id)
    st.switch_page("pages/verify.py")
if run.resumable and run.origin == "run" and run.stop_reason and run.stop_reason.startswith("stopped by"):
    render_resume_with_limits(run)
for column, fmt in zip(actions[1:], EXPORT_FORMATS, strict=True):
    if fmt == "claimreview" and (refusal := claimreview_refusal(run)) is not None:  # a fact-check only for what this desk reviewed
        column.button(f"⬇️ {FORMAT_LABELS[fmt]}", disabled=True, key=f"history.dl.{fmt}", help=refusal[:1].upper() + refusal[1:] + ".")
        continue
    try:
        signer = desk_key(services.settings.data_dir) if fmt == "json" else None  # made on first use, in the data folder
        data = export_run(
            run, events, fmt, public_url=services.settings.public_url, comments=comments, signer=signer, stored_chain=chain_state
        )
    except DebateDeskError as exc:
        column.button(f"⬇️ {FORMAT_LABELS[fmt]}", disabled=True, key=f"history.dl.{fmt}", help=str(exc))
        continue
    column.download_button(
        f"⬇️ {FORMAT_LABELS[fmt]}", data=data, file_name=export_filename(run, fmt), mime=EXPORT_FORMATS[fmt][1], key=f"history.dl.{fmt}"
    )

render_rerun(run, services)
render_debate_offer(read, key=f"history-{run.id}")  # its debate was not run, desk's exhibits settling the claim: run it anyway

labels = get_protocol(run.protocol).labels if run.protocol in PROTOCOLS else ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
render_override_form(store, run.id, labels, run.verdict, key=f"history-{run.id}")

if queue is not None:
    with st.expander(f"💬 Comments on this run and its exhibits ({len(comments)})", expanded=bool(comments)):
        render_comments(queue, key=f"history.comments.{run.id}", run_id=run.id, exhibits=list(digest(events).evidence))

tab_replay, tab_compare = st.tabs(["📼 Replay, step by step", "🆚 Compare with another run"])
with tab_replay:
    st.page_link(
        "pages/replay.py", label="Open the replay on its own page (for a class)", icon="🎓", query_params={state.REPLAY_PARAM: run.id}
    )
    render_stepper(run.id, events, key="history")

with tab_compare:
    # Any run: those of the same queued claim and of this exact text first, then the rest, newest first.
    family = [r for r in (store.get_run(rid) for rid in (queue.runs_of(in_queue.id) if queue and in_queue else [])) if r is not None]
    pool = [*family, *store.runs_with_claim(run.claim, exclude=run.id), *store.list_runs(limit=300)]
    others = list({o.id: o for o in pool if o.id != run.id}.values())
    if not others:
        st.info("No other run yet. Run a claim on **Verify** with another protocol or model to compare.")
    else:
        other_id = st.selectbox(
            "Compare with",
            [o.id for o in others],
            format_func=lambda rid: run_line(next(o for o in others if o.id == rid)),
            key=f"history.compare.{run.id}",
            help="Any stored run, whatever its claim's wording: the runs of the same queued claim and of the same text come first.",
        )
        other = next(o for o in others if o.id == other_id)
        render_comparison(compare_runs(run, events, other, store.events(other.id)))
        st.markdown("**The arguments side by side**")
        left, right = st.columns(2)
        for column, shown in ((left, run), (right, other)):
            with column:
                config = shown.config
                model = config.get("debater", {})
                st.markdown(
                    f"**{escape_markdown(shown.protocol)}** · {escape_markdown(str(model.get('backend', '?')))} {escape_markdown(str(model.get('model') or ''))}"
                )
                st.caption(  # markup: a time and numbers
                    f"{when(shown.created_at)} · {shown.cost.calls} calls · {shown.cost.tokens_in + shown.cost.tokens_out:,} tokens{shown.cost.spent_note()} · {shown.cost.model_seconds:.1f} s"
                )
                replay(store.events(shown.id), key=f"compare-{shown.id}")

"""The claims queue's widgets: adding claims, the filtered list, one claim (runs, comments, history), review and publishing.

Every action is a callback that takes its person from ``sign_in.acting_user`` and leaves a one-line message for the next
run of the page; the queue (``pipelines.newsroom``) checks roles and input itself. What a user or a file wrote is escaped
wherever it is shown as Markdown; tables show it as plain text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import UTC, date, datetime
from typing import Any

import pandas as pd
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from components import state
from components.comments import render_comments
from components.links import app_url, claim_link, render_copy_link, run_line
from components.resources import get_claim_queue, get_services
from components.seen_before import on_intake, render_outside_reviews, render_seen_before
from components.sign_in import acting_user
from pipelines.core.config import AppSettings
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when
from pipelines.newsroom.access.users import User, UsersFile, UsersFileError
from pipelines.newsroom.intake import claims_from_file, claims_from_text, details_of_item
from pipelines.newsroom.publishing import confirm, correct, missing_appearance, publish, served_url, unpublish
from pipelines.newsroom.queue import (
    CLAIM_STATUSES,
    CLOSED_STATUSES,
    NEXT_STATUSES,
    Appearance,
    ClaimQueue,
    NewClaim,
    Publication,
    QueueClaim,
    QueueError,
    QueueFilter,
    parse_tags,
)
from pipelines.record.store import RunStore, RunSummary
from pipelines.record.verdict_card import COMMON_LABELS, common_label
from pipelines.run.batch import BatchItem

K = state.QUEUE_PREFIX
STATUS_ICONS = {"new": "🆕", "checking": "🔎", "in review": "🧑‍⚖️", "published": "📰", "dismissed": "🗑️"}
NOBODY = "(nobody)"
UNKNOWN_LANGUAGE = "(not told)"
QUEUE_TABS = ("📥 Queue", "➕ Add claims", "📰 Published")


def status_text(status: str) -> str:
    return f"{STATUS_ICONS.get(status, '')} {status}"


def act(action: Callable[[User], str], *, editor_only: str = "") -> None:
    """Run one queue action as the acting person; its outcome (or why not, plainly) is the page's next message."""
    user = acting_user()
    if user is None:
        state.set_message(
            state.QUEUE_MESSAGE, ("error", "⚠️ Enter your name in the sidebar first: every change to the queue records who made it.")
        )
        return
    try:
        done = action(user)
    except DebateDeskError as exc:
        state.set_message(state.QUEUE_MESSAGE, ("error", f"⚠️ {escape_markdown(str(exc))}"))
        return
    except (SQLAlchemyError, OSError) as exc:  # the database or the disk went away: nothing half-done is kept, the form keeps its input
        state.set_message(
            state.QUEUE_MESSAGE,
            ("error", f"⚠️ The change was not saved: the run database did not answer ({escape_markdown(type(exc).__name__)}). Try again."),
        )
        return
    state.set_message(state.QUEUE_MESSAGE, ("success", done))


def render_message() -> None:
    message = state.take_message(state.QUEUE_MESSAGE)
    if message:
        getattr(st, message[0])(message[1])  # markup: our words around escaped values


def desk_people(queue: ClaimQueue) -> list[str]:
    """Whom a claim can go to: the desk's users (with a users file), and anyone a claim was assigned to before."""
    names = set(queue.facets()["assignees"])
    path = AppSettings().users_file
    if path is not None:
        with suppress(UsersFileError):  # the sign-in form says what is wrong with the file
            names |= {u.name for u in UsersFile.load(path).people()}
    user = acting_user()
    if user is not None:
        names.add(user.name)
    return sorted(names, key=str.lower)


# --- adding claims ---------------------------------------------------------------------


def render_add_claims(queue: ClaimQueue) -> None:
    typed, pasted, from_file, reviews = st.tabs(["✍️ Type one", "📋 Paste a list", "📄 From a file", "🌐 Other fact-checkers' reviews"])
    with typed:
        st.text_area("Claim", key=K + "new.text", max_chars=2000, height=80, placeholder="The statement to check, as it was made")
        c1, c2, c3 = st.columns([3, 1, 2])
        c1.text_input("Where it appeared (address)", key=K + "new.url", max_chars=2000, placeholder="https://…")
        c2.date_input("When", value=None, key=K + "new.on", format="YYYY-MM-DD")
        c3.text_input("Claimant (who said it)", key=K + "new.claimant", max_chars=300)
        c4, c5, c6 = st.columns([2, 1, 3])
        c4.selectbox(
            "Assignee",
            desk_people(queue),
            index=None,
            key=K + "new.assignee",
            accept_new_options=AppSettings().users_file is None,
            placeholder="nobody yet",
        )
        c5.date_input("Due date (to finish by)", value=None, key=K + "new.due", format="YYYY-MM-DD")
        c6.text_input("Tags (comma-separated)", key=K + "new.tags", max_chars=500)
        st.text_input(
            "Language (ISO code, e.g. en, es)", key=K + "new.language", max_chars=16, placeholder="told from the text when left empty"
        )
        st.button("➕ Add to the queue", key=K + "new.go", type="primary", on_click=act, args=(_add_typed(queue),))
    with pasted:
        st.text_area("Claims, one per line", key=K + "paste", height=140)
        st.button("➕ Add these", key=K + "paste.go", on_click=act, args=(_add_pasted(queue),))
    with from_file:
        st.file_uploader(
            "Claims file",
            type=["csv", "jsonl", "txt"],
            key=K + "file",
            help="As the Batch page reads it: CSV with a 'claim' column, JSON lines with a \"claim\" field, or one claim per line. "
            "Optional columns: url, date, claimant, assignee, due, tags.",
        )
        st.button("➕ Add from the file", key=K + "file.go", on_click=act, args=(_add_file(queue),))
    with reviews:
        render_outside_reviews(queue, act)


def _day(value: Any) -> str:
    return value.isoformat() if isinstance(value, date) else ""


def _add_typed(queue: ClaimQueue) -> Callable[[User], str]:
    def action(user: User) -> str:
        get = state.keyed(K + "new.").get
        claim = queue.add(
            NewClaim(
                text=str(get("text", "")),
                appearance=Appearance(url=str(get("url", "")), on=_day(get("on")), claimant=str(get("claimant", ""))),
                assignee=str(get("assignee") or ""),
                due_on=_day(get("due")),
                tags=parse_tags(str(get("tags", ""))),
                language=str(get("language", "")),
            ),
            user,
        )
        state.keyed(K + "new.").clear("text", "url", "claimant", "tags", "language")
        state.open_queue_claim(claim.id)
        state.show_queue_tab(QUEUE_TABS[0])  # show the claim just added
        return f"Added: {escape_markdown(claim.text[:80])}" + on_intake(queue, [claim], user)

    return action


def _add_pasted(queue: ClaimQueue) -> Callable[[User], str]:
    def action(user: User) -> str:
        added = queue.add_many(claims_from_text(str(state.keyed(K).get("paste", ""))), user)
        state.keyed(K).clear("paste")
        return f"Added {len(added)} claim{'s' if len(added) != 1 else ''} to the queue." + on_intake(queue, added, user)

    return action


def _add_file(queue: ClaimQueue) -> Callable[[User], str]:
    def action(user: User) -> str:
        upload = state.keyed(K).get("file")
        if upload is None:
            return "Choose a file first."
        added = queue.add_many(claims_from_file(upload.getvalue(), upload.name), user)
        found = on_intake(queue, added, user)
        return f"Added {len(added)} claim{'s' if len(added) != 1 else ''} from {escape_markdown(upload.name)}." + found

    return action


# --- the list ------------------------------------------------------------------------------


def render_filters(queue: ClaimQueue) -> QueueFilter:
    facets = queue.facets()
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    text = c1.text_input("Claim, claimant or address contains", key=K + "f.text")
    statuses = c2.multiselect("Status", list(CLAIM_STATUSES), key=K + "f.status", format_func=status_text)
    assignees = c3.multiselect("Assignee", [NOBODY, *facets["assignees"]], key=K + "f.assignee")
    tags = c4.multiselect("Tags", facets["tags"], key=K + "f.tags")
    c5, c6, c7, _ = st.columns([3, 2, 2, 2])
    due = c5.date_input(
        "Due on or before", value=None, key=K + "f.due", format="YYYY-MM-DD", help="claims whose due date is this day or earlier"
    )
    claimant = c6.selectbox("Claimant", facets["claimants"], index=None, key=K + "f.claimant", placeholder="anyone")
    languages = c7.multiselect("Language", [UNKNOWN_LANGUAGE, *facets["languages"]], key=K + "f.language")
    return QueueFilter(
        text=text,
        statuses=tuple(statuses),
        assignees=tuple("" if a == NOBODY else a for a in assignees),
        tags=tuple(tags),
        due_by=_day(due),
        claimant=claimant or "",
        languages=tuple("" if code == UNKNOWN_LANGUAGE else code for code in languages),
    )


def render_claim_table(
    claims: list[QueueClaim], changed: dict[str, list[str]] | None = None, last_runs: dict[str, str] | None = None
) -> None:
    """The list; ``changed``: per published claim, what changed in its record since publication (flagged in its status);
    ``last_runs``: per claim, how its newest run ended (the reviewed verdict is the editor's, a column of its own)."""
    today = datetime.now(UTC).date().isoformat()
    changed, last_runs = changed or {}, last_runs or {}
    table = pd.DataFrame(
        [
            {
                "status": status_text(c.status) + (" ⚠️ record changed" if changed.get(c.id) else "") + (" 🔁 repeats" if c.repeats else ""),
                "reviewed": c.reviewed_verdict.common if c.reviewed_verdict else "",
                "last run": last_runs.get(c.id, ""),
                "id": c.id,
                "claim": c.text,
                "assignee": c.assignee,
                "due": c.due_on + (" ⚠️ overdue" if c.due_on and c.due_on < today and c.status not in CLOSED_STATUSES else ""),
                "claimant": c.appearance.claimant,
                "tags": ", ".join(c.tags),
                "language": c.language,
            }
            for c in claims
        ]
    )
    st.caption(f"{len(claims)} claim{'s' if len(claims) != 1 else ''}")
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=min(400, 38 + 35 * len(claims)),
        column_config={  # the verdicts and the id whole; the claim takes the room that is left
            "reviewed": st.column_config.TextColumn("reviewed", width=135, help="The verdict an editor's review stands by"),
            "last run": st.column_config.TextColumn(
                "last run", width=135, help="How the claim's newest run ended: its verdict, or its state"
            ),
            "claim": st.column_config.TextColumn("claim", width="medium"),
            "id": st.column_config.TextColumn("id", width=110),  # 12 characters, whole
        },
    )


def describe(claim: QueueClaim) -> str:
    """The claim in the chooser: only what never changes (the chooser keeps its choice by this text, so a status in it
    would lose the open claim the moment its status changed)."""
    return f"{claim.text[:90]} · {claim.id}"


# --- one claim -------------------------------------------------------------------------------


def render_claim(queue: ClaimQueue, claim: QueueClaim) -> None:
    services = get_services()
    store = services.store
    st.subheader(escape_markdown(claim.text))
    where = claim.appearance
    facts = [
        status_text(claim.status),
        f"assigned to {escape_markdown(claim.assignee)}" if claim.assignee else "nobody assigned",
        f"due {claim.due_on}" if claim.due_on else "no due date",
    ]
    if claim.tags:
        facts.append("tags: " + ", ".join(escape_markdown(t) for t in claim.tags))
    st.caption(" · ".join(facts))  # markup: our words, dates we checked, escaped names and tags
    said = [
        f"said by **{escape_markdown(where.claimant)}**" if where.claimant else "claimant unknown",
        f"on {where.on}" if where.on else "",
        f"at {escape_markdown(where.url)}" if where.url else "",  # an http(s) address (checked when added): the renderer links it
    ]
    st.markdown(" ".join(s for s in said if s))  # markup: escaped fields and dates we checked
    st.caption(f"Added by {escape_markdown(claim.created_by)} on {when(claim.created_at)} · id {escape_markdown(claim.id)}")
    render_copy_link(claim_link(claim.id), "this claim")
    render_seen_before(queue, claim, act)

    if claim.status not in CLOSED_STATUSES:  # a link, not a button: a page switch from a button's run could lose
        # the race with a rerun the browser already asked of this page, and leave the person here with the claim closed
        st.page_link("pages/verify.py", label="Check it on Verify", icon="🔎", query_params={state.CHECK_PARAM: claim.id})

    # Keyed and tracked, the box stays open across reruns (a message above it coming or going would otherwise fold it shut);
    # a form, so choosing and typing send nothing until Save.
    with (
        st.expander("✏️ Change status, assignee, due date, tags, where it appeared", key=f"{K}edit.{claim.id}.open", on_change="rerun"),
        st.form(f"{K}edit.{claim.id}.form", border=False),
    ):
        _render_edit(queue, claim)

    runs = [r for r in (store.get_run(rid) for rid in queue.runs_of(claim.id)) if r is not None] if store else []
    st.markdown(f"#### Runs ({len(runs)})")
    if not runs:
        st.caption("No run yet. **Check it on Verify**, or put it in a Batch file.")
    for run in runs:
        _render_run_line(run)

    st.markdown("#### Review and publishing")
    _render_review(queue, store, claim, runs)

    st.markdown("#### Comments")
    render_comments(queue, key=f"{K}comments.{claim.id}", claim_id=claim.id)

    st.markdown("#### History of changes")
    history = queue.history(claim.id)
    st.dataframe(
        pd.DataFrame([{"when": when(h.at), "who": h.by, "what": h.describe()} for h in history]),
        hide_index=True,
        width="stretch",
    )


def _render_run_line(run: RunSummary) -> None:
    verdict = common_label(run.final_verdict) if run.final_verdict else "no verdict"
    cols = st.columns([6, 2])
    cols[0].markdown(  # markup: a label of ours or an escaped one, a time, an escaped id
        f"**{escape_markdown(verdict)}** · {escape_markdown(run.protocol)} · {escape_markdown(run.status)} · {when(run.created_at)}"
        + (f" · by {escape_markdown(run.started_by)}" if run.started_by else "")
        + f" · `{run.id}`"
    )
    cols[1].page_link("pages/history.py", label="Open in History", icon="🗂️", query_params={state.RUN_PARAM: run.id})


def _render_edit(queue: ClaimQueue, claim: QueueClaim) -> None:
    key = f"{K}edit.{claim.id}."
    options = [claim.status, *NEXT_STATUSES[claim.status]]
    c1, c2, c3 = st.columns(3)
    c1.selectbox("Status", options, key=key + "status", format_func=status_text)
    people = desk_people(queue)
    c2.selectbox(
        "Assignee",
        [NOBODY, *people],
        index=1 + people.index(claim.assignee) if claim.assignee in people else 0,
        key=key + "assignee",
        accept_new_options=AppSettings().users_file is None,
    )
    c3.date_input(
        "Due date (to finish by)", value=date.fromisoformat(claim.due_on) if claim.due_on else None, key=key + "due", format="YYYY-MM-DD"
    )
    t1, t2 = st.columns([4, 1])
    t1.text_input("Tags (comma-separated)", value=", ".join(claim.tags), key=key + "tags", max_chars=500)
    t2.text_input("Language (ISO code)", value=claim.language, key=key + "language", max_chars=16, help="en, es, fr...; empty: not told")
    c4, c5, c6 = st.columns([3, 1, 2])
    c4.text_input("Where it appeared (address)", value=claim.appearance.url, key=key + "url", max_chars=2000)
    c5.date_input(
        "When", value=date.fromisoformat(claim.appearance.on) if claim.appearance.on else None, key=key + "on", format="YYYY-MM-DD"
    )
    c6.text_input("Claimant", value=claim.appearance.claimant, key=key + "claimant", max_chars=300)
    st.form_submit_button("💾 Save", key=key + "go", on_click=act, args=(_save(queue, claim, key),))


def _save(queue: ClaimQueue, claim: QueueClaim, key: str) -> Callable[[User], str]:
    def action(user: User) -> str:
        get = state.keyed(key).get
        assignee = str(get("assignee") or "")
        queue.update(
            claim.id,
            user,
            appearance=Appearance(url=str(get("url", "")), on=_day(get("on")), claimant=str(get("claimant", ""))),
            assignee="" if assignee == NOBODY else assignee,
            due_on=_day(get("due")),
            tags=parse_tags(str(get("tags", ""))),
            language=str(get("language", "")),
        )
        status = str(get("status") or claim.status)
        if status != claim.status:
            queue.set_status(claim.id, status, user)
        return "Saved."

    return action


def _render_review(queue: ClaimQueue, store: RunStore | None, claim: QueueClaim, runs: list[RunSummary]) -> None:
    user = acting_user()
    changed = _render_review_status(queue, claim)
    if user is not None and user.role != "editor":
        st.caption(f"🔒 Only an editor reviews and publishes; you are signed in as a {user.role}.")  # markup: a role of ours
        return
    if claim.status == "dismissed":
        return
    if not runs:
        st.caption("An editor reviews a claim once a run has checked it.")
        return
    version = claim.publish_version  # what the editor sees; each action below is refused if another editor moved it meanwhile
    _render_review_form(queue, claim, runs)
    if claim.status == "published":
        _render_correction(queue, store, claim, version, bool(changed))
        return
    if claim.reviewed_verdict is not None and claim.status == "in review":
        _render_publish(queue, store, claim, version)


def _render_review_status(queue: ClaimQueue, claim: QueueClaim) -> list[str]:
    """Where the claim's review stands, for anyone: the review, published (and what changed since) or withdrawn, and
    the published versions. Returns how the record changed since publication (nothing unless published)."""
    if claim.reviewed_verdict is not None:
        st.markdown(  # markup: a label of ours, an escaped name, a time
            f"Reviewed: **{escape_markdown(claim.reviewed_verdict.common)}** by {escape_markdown(claim.reviewed_by)}, {when(claim.reviewed_at)}"
            + (f" (on run `{claim.reviewed_run}`)" if claim.reviewed_run else "")
        )
        st.markdown("> " + escape_markdown(claim.review_reason).replace("  \n", "  \n> "))
    changed = queue.record_changes([claim]).get(claim.id, []) if claim.status == "published" else []
    steps = queue.publications(claim.id)
    if claim.status == "published":
        fixes = [p for p in steps if p.action == "corrected" and p.at >= (claim.published_at or 0)]
        st.success(  # markup: escaped names, times, a count
            f"📰 Published by {escape_markdown(claim.published_by)} on {when(claim.published_at)}."
            + (f" Corrected {len(fixes)}×, last by {escape_markdown(fixes[-1].by)} on {when(fixes[-1].at)}." if fixes else "")
        )
        if changed:
            st.warning(  # markup: our words around escaped lines
                "⚠️ The record changed since publication: "
                + "; ".join(escape_markdown(c.rstrip(".")) for c in changed)
                + ". An editor confirms the published rating or publishes a correction."
            )
        url = served_url(app_url(), claim.id)
        render_copy_link(url, "the published ClaimReview", "public: anyone can open it")
    elif claim.withdrawn is not None:
        st.info("↩️ Withdrawn: its address now says the fact-check was withdrawn, when and why.")
    _render_versions(claim, steps)
    return changed


def _render_review_form(queue: ClaimQueue, claim: QueueClaim, runs: list[RunSummary]) -> None:
    """The editor's review: the verdict the desk stands by, the run it rests on and the reason, sent together."""
    key = f"{K}review.{claim.id}."
    title = (
        "🧑‍⚖️ Review again (then correct the published fact-check)"
        if claim.status == "published"
        else "🧑‍⚖️ Review: the verdict the desk stands by"
    )
    with (  # kept open across reruns, and a form: choosing a verdict and typing the reason send nothing until Record
        st.expander(title, expanded=claim.reviewed_verdict is None and claim.status == "in review", key=key + "open", on_change="rerun"),
        st.form(key + "form", border=False),
    ):
        latest = runs[-1]
        model = common_label(latest.final_verdict) if latest.final_verdict else None
        current = claim.reviewed_verdict.common if claim.reviewed_verdict else model
        st.selectbox(
            "Reviewed verdict",
            list(COMMON_LABELS),
            index=COMMON_LABELS.index(current) if current in COMMON_LABELS else 0,
            key=key + "label",
        )
        st.selectbox(
            "Resting on the run",
            [r.id for r in reversed(runs)],
            format_func=lambda rid: run_line(next(r for r in runs if r.id == rid), claim=False),  # its verdict: in the runs listed above
            key=key + "run",
        )
        st.text_area(
            "Reason (published as the explanation, in full)", value=claim.review_reason, key=key + "reason", max_chars=5000, height=120
        )
        st.form_submit_button("Record the review", key=key + "go", icon="🖊️", on_click=act, args=(_review(queue, claim, key),))


def _render_publish(queue: ClaimQueue, store: RunStore | None, claim: QueueClaim, version: int) -> None:
    """A reviewed claim: Publish, after a warning (and a box to tick) when it lacks who made the claim or where."""
    missing = missing_appearance(claim)
    if missing:
        st.warning(  # markup: our words only
            f"⚠️ This claim has no {' and no '.join(missing)}: a fact-check says who made the claim and where, and Google's "
            "markup recommends both. Add them under **Change status, assignee…**, or publish without them."
        )
        st.checkbox(f"Publish without {' or '.join(missing)}", key=f"{K}publish.bare.{claim.id}")
    st.button(
        "Publish",
        key=f"{K}publish.{claim.id}",
        type="primary",
        icon="📰",
        on_click=act,
        args=(_publish(queue, store, claim, version, missing),),
    )
    st.caption("Publishing puts the ClaimReview JSON-LD at a public address and lists it under **Published**.")


def _render_correction(queue: ClaimQueue, store: RunStore | None, claim: QueueClaim, version: int, changed: bool) -> None:
    """A published claim: confirm the published rating, publish a correction, or unpublish; each names the version it saw."""
    with st.expander("✍️ Correct, confirm or unpublish", expanded=changed, key=f"{K}fix.{claim.id}.open", on_change="rerun"):
        st.caption(
            "**Publish a correction**: the address serves a new version from the current review (review again above to change "
            "the rating), keeps its first publication date, and shows a note of what changed, who and why. "
            "**Confirm**: the published rating stands; recorded with your name. Every earlier version stays listed below."
        )
        st.text_area(
            "Why (the correction note, or why the rating stands, or why it is withdrawn)",
            key=f"{K}fix.{claim.id}.why",
            max_chars=2000,
            height=80,
        )
        c1, c2, c3 = st.columns(3)
        c1.button(
            "Publish a correction",
            key=f"{K}correct.{claim.id}",
            type="primary",
            icon="✍️",
            on_click=act,
            args=(_correct(queue, store, claim, version),),
        )
        c2.button(
            "Confirm the published rating", key=f"{K}confirm.{claim.id}", icon="✅", on_click=act, args=(_confirm(queue, claim, version),)
        )
        c3.button("Unpublish", key=f"{K}unpub.go.{claim.id}", icon="↩️", on_click=act, args=(_unpublish(queue, claim, version),))


def _render_versions(claim: QueueClaim, steps: list[Publication]) -> None:
    """Every version the claim's address served, and every confirmation, readable as it was."""
    if not steps:
        return
    with st.expander(f"🗂️ Published versions ({len(steps)})", key=f"{K}versions.{claim.id}.open", on_change="rerun"):
        for step in reversed(steps):
            st.markdown(  # markup: our words, a time, escaped name and note
                f"**v{step.version} · {escape_markdown(step.action)}** by {escape_markdown(step.by)}, {when(step.at)}"
                + (f": {escape_markdown(step.note)}" if step.note else "")
            )
            if step.document is not None:
                st.json(step.document, expanded=False)


def _review(queue: ClaimQueue, claim: QueueClaim, key: str) -> Callable[[User], str]:
    def action(user: User) -> str:
        get = state.keyed(key).get
        done = queue.review(claim.id, user, str(get("label", "")), str(get("reason", "")), run_id=get("run"))
        verdict = escape_markdown(done.reviewed_verdict.common if done.reviewed_verdict else "")
        if done.status == "published":
            return f"Reviewed again: {verdict}. The published fact-check is unchanged until you publish a correction (or confirm it)."
        return f"Reviewed: {verdict}. Publish it when ready."

    return action


def _publish(queue: ClaimQueue, store: RunStore | None, claim: QueueClaim, version: int, missing: list[str]) -> Callable[[User], str]:
    app = app_url()

    def action(user: User) -> str:
        confirmed = bool(state.keyed(K).get(f"publish.bare.{claim.id}"))
        if missing and not confirmed:
            raise QueueError(
                f"this claim has no {' and no '.join(missing)}; add them, or tick “Publish without {' or '.join(missing)}” first"
            )
        settings = AppSettings()
        publish(
            queue,
            store,
            claim.id,
            user,
            organisation=settings.organisation,
            app_url=app,
            public_url=settings.public_url,
            expect_version=version,
            without_appearance=confirmed,  # a claim given them since the page was drawn needs no tick
        )
        return f"Published at {escape_markdown(served_url(app, claim.id))}"

    return action


def _correct(queue: ClaimQueue, store: RunStore | None, claim: QueueClaim, version: int) -> Callable[[User], str]:
    app = app_url()

    def action(user: User) -> str:
        settings = AppSettings()
        done = correct(
            queue,
            store,
            claim.id,
            user,
            str(state.keyed(f"{K}fix.{claim.id}.").get("why", "")),
            organisation=settings.organisation,
            app_url=app,
            public_url=settings.public_url,
            expect_version=version,
        )
        state.keyed(f"{K}fix.{claim.id}.").clear("why")
        return f"Correction published (version {done.publish_version}) at {escape_markdown(served_url(app, claim.id))}."

    return action


def _confirm(queue: ClaimQueue, claim: QueueClaim, version: int) -> Callable[[User], str]:
    def action(user: User) -> str:
        confirm(queue, claim.id, user, str(state.keyed(f"{K}fix.{claim.id}.").get("why", "")), expect_version=version)
        state.keyed(f"{K}fix.{claim.id}.").clear("why")
        return "Confirmed: the published rating stands; recorded with your name."

    return action


def _unpublish(queue: ClaimQueue, claim: QueueClaim, version: int) -> Callable[[User], str]:
    def action(user: User) -> str:
        unpublish(
            queue,
            claim.id,
            user,
            reason=str(state.keyed(f"{K}fix.{claim.id}.").get("why", "")),
            organisation=AppSettings().organisation,
            expect_version=version,
        )
        state.keyed(f"{K}fix.{claim.id}.").clear("why")
        return "Unpublished: its address now says the fact-check was withdrawn; every version stays in the record."

    return action


# --- published -------------------------------------------------------------------------------


def render_published(queue: ClaimQueue) -> None:
    published = queue.published()
    if not published:
        st.info("Nothing published yet. An editor reviews a checked claim, then presses **Publish**.")
        return
    app = app_url()
    changed = queue.record_changes(published)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "published": when(c.published_at),
                    "verdict": c.reviewed_verdict.common if c.reviewed_verdict else "",
                    "claim": c.text,
                    "ClaimReview": served_url(app, c.id),
                    "claim page": claim_link(c.id),
                    "claimant": c.appearance.claimant,
                    "editor": c.published_by,
                    "version": c.publish_version,
                    "record changed": "⚠️ " + "; ".join(changed[c.id]) if changed.get(c.id) else "",
                }
                for c in published
            ]
        ),
        hide_index=True,
        width="stretch",
        column_config={
            "ClaimReview": st.column_config.LinkColumn("ClaimReview (JSON-LD)", display_text="open"),
            "claim page": st.column_config.LinkColumn("In the queue", display_text="open"),
        },
    )
    st.caption(
        "Each ClaimReview is served as JSON at its address for as long as the claim stays published (paste it into the article's "
        '`<script type="application/ld+json">` block, or point a fact-check index at it).'
    )


__all__ = [
    "QUEUE_TABS",
    "describe",
    "link_run_to_queue",
    "queue_details",
    "render_add_claims",
    "render_claim",
    "render_claim_table",
    "render_filters",
    "render_message",
    "render_published",
]


def queue_details(items: Sequence[BatchItem]) -> tuple[list[NewClaim], list[str]]:
    """Where each batch row's claim appeared and the rest, from its columns, every detail that reads; and the details left
    out, each named (the claims run all the same)."""
    details, problems = [], []
    for item in items:
        claim, left_out = details_of_item(item)
        details.append(claim)
        problems += left_out
    return details, problems


def put_queued_claim_in_box(claim_id: str) -> str | None:
    """``?check=ID`` on Verify: the queued claim's text goes into the claim box and the run started from it joins that claim.
    Returns why not, plainly (nothing in the box changes then)."""
    queue = get_claim_queue()
    if queue is None:
        return "This app runs without a run store, so there is no claims queue to check a claim from."
    try:
        claim = queue.get(claim_id)
    except (SQLAlchemyError, OSError) as exc:
        return f"The queued claim could not be read: the run database did not answer ({type(exc).__name__}). Try the link again."
    if claim is None:
        return f"No claim {escape_markdown(claim_id[:40])} in the claims queue: the link may be wrong."
    if claim.status in CLOSED_STATUSES:
        return f"That claim is {claim.status} on the claims queue, so it is not checked again from there."
    state.check_on_verify(claim.id, claim.text)
    return None


def join_claim_of(source_run: str, run_id: str, text: str) -> str | None:
    """A run started from another (a re-run, a debate run anyway) joins the other's queued claim, whatever its status: a
    published claim's record then shows it. Returns why not, plainly, when it could not; None when the other has no claim."""
    queue = get_claim_queue()
    claim = queue.claim_of_run(source_run) if queue is not None else None
    return link_run_to_queue(run_id, text, claim_id=claim.id) if claim is not None else None


def link_run_to_queue(run_id: str, text: str, *, claim_id: str | None = None, details: NewClaim | None = None) -> str | None:
    """After a run starts on Verify or Batch: it joins its queued claim (or makes one). Returns why not, plainly, when it could not."""
    queue = get_claim_queue()
    if queue is None:
        return None
    user = acting_user() or User(username="", name="(no name given)", role="checker")  # only where nobody signs in
    try:
        try:
            queue.link_run(run_id, text, user, claim_id=claim_id, details=details)
        except QueueError:
            if details is None:
                raise
            queue.link_run(run_id, text, user, claim_id=claim_id)  # a row's other columns did not read: the claim all the same
    except DebateDeskError as exc:
        return f"the run is stored, but not linked to the claims queue: {exc}"
    except (SQLAlchemyError, OSError) as exc:
        return f"the run is stored, but not linked to the claims queue: the database did not answer ({type(exc).__name__})"
    return None

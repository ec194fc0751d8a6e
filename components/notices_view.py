"""The queue page's part for a person's own work: their notices (read and unread), the "assigned to me" and "mentioning
me" views, and changes to many claims at once (status, assignee, a tag, dismiss), each recorded per claim."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from components import state
from components.claim_queue import act, desk_people, status_text
from components.sign_in import acting_user
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when
from pipelines.newsroom.access.users import User
from pipelines.newsroom.notices import mark_read, mentioning, notices_for
from pipelines.newsroom.queue import CLAIM_STATUSES, ClaimQueue, QueueClaim, QueueError, QueueFilter

K = "queue.mine."
VIEWS = ("All claims", "Assigned to me", "Mentioning me")


def render_notices(queue: ClaimQueue) -> None:
    """The person's notices, newest first, with how many are unread; Mark all read."""
    user = acting_user()
    if user is None:
        return
    notices = notices_for(queue.engine, user, limit=50)
    unread = sum(n.unread for n in notices)
    title = f"🔔 Notices ({unread} new)" if unread else "🔔 Notices"
    with st.expander(title, expanded=False, key=K + "notices.open", on_change="rerun"):
        if not notices:
            st.caption("Nothing yet: a claim assigned to you, a comment that mentions you (@your name), or a review or "
                       "publication of a claim of yours shows here.")  # fmt: skip
            return
        for notice in notices:
            dot = "🔵 " if notice.unread else ""
            st.markdown(f"{dot}{escape_markdown(notice.text)}")  # markup: an escaped text
            st.caption(f"{when(notice.at)} · {escape_markdown(notice.claim_text[:100])}")  # markup: a time of ours, an escaped claim
        if unread:
            st.button("Mark all read", key=K + "read", on_click=_mark_read, args=(queue,))


def _mark_read(queue: ClaimQueue) -> None:
    user = acting_user()
    if user is not None:
        mark_read(queue.engine, user)


def render_view_choice() -> str:
    return str(st.segmented_control("Show", VIEWS, default=VIEWS[0], key=K + "view") or VIEWS[0])


def in_view(queue: ClaimQueue, claims: list[QueueClaim], view: str) -> list[QueueClaim]:
    """The claims the chosen view shows: all, the person's own, or those whose comments mention them."""
    user = acting_user()
    if view == VIEWS[0] or user is None:
        return claims
    if view == VIEWS[1]:
        return [c for c in claims if c.assignee == user.name]
    mentioned = mentioning(queue.engine, user, [c.id for c in claims])
    return [c for c in claims if c.id in mentioned]


def filters_in_use(where: QueueFilter, view: str) -> str:
    """The filters that are set, in words ("the view Assigned to me, Status and Tags"), or "" when none is."""
    names = [name for name, value in (
        ("Claim, claimant or address", where.text.strip()), ("Status", where.statuses), ("Assignee", where.assignees),
        ("Tags", where.tags), ("Due on or before", where.due_by), ("Claimant", where.claimant), ("Language", where.languages),
    ) if value]  # fmt: skip
    if view != VIEWS[0]:
        names.insert(0, f"the view {view}")
    return (", ".join(names[:-1]) + " and " + names[-1]) if len(names) > 1 else "".join(names)


def render_bulk(queue: ClaimQueue, claims: Sequence[QueueClaim]) -> None:
    """Change many claims at once; each claim's change is recorded in its own history, and one refused is named."""
    if len(claims) < 2:
        return
    with st.expander("🧰 Change several claims at once", key=K + "bulk.open", on_change="rerun"):
        labels = {c.id: f"{c.text[:70]} · {c.id}" for c in claims}
        st.multiselect("Claims", list(labels), format_func=labels.get, key=K + "bulk.ids")
        c1, c2, c3 = st.columns(3)
        c1.selectbox(
            "Status", ["(leave)", *CLAIM_STATUSES], key=K + "bulk.status", format_func=lambda s: s if s == "(leave)" else status_text(s)
        )
        c2.selectbox("Assignee", ["(leave)", "(nobody)", *desk_people(queue)], key=K + "bulk.assignee")
        c3.text_input("Add a tag", key=K + "bulk.tag", max_chars=60)
        st.button("Apply to the chosen claims", key=K + "bulk.go", on_click=act, args=(_apply(queue),))


def _apply(queue: ClaimQueue) -> Callable[[User], str]:
    def action(user: User) -> str:
        get = state.keyed(K).get
        ids = list(get("bulk.ids") or [])
        if not ids:
            return "Choose the claims first."
        status, assignee, tag = get("bulk.status", "(leave)"), get("bulk.assignee", "(leave)"), str(get("bulk.tag", "")).strip()
        done, refused = 0, []
        for claim_id in ids:
            try:
                claim = queue.get(claim_id)
                if claim is None:
                    raise QueueError("no longer in the queue")
                if assignee != "(leave)":
                    queue.update(claim_id, user, assignee="" if assignee == "(nobody)" else assignee)
                if tag:
                    queue.update(claim_id, user, tags=(*claim.tags, tag))
                if status != "(leave)":
                    queue.set_status(claim_id, status, user)
                done += 1
            except QueueError as exc:
                refused.append(f"{claim_id}: {exc}")
        state.keyed(K).set("bulk.ids", [])
        said = f"Changed {done} of {len(ids)} claims; each change is in its claim's history."
        if refused:
            said += "  \n⚠️ Not changed: " + "; ".join(escape_markdown(r) for r in refused[:5])
        return said

    return action

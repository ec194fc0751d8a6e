"""Comments on a queued claim, a run, or one exhibit of a run: the list (author, time, text) and a box to add one."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from components import state
from components.sign_in import acting_user
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when
from pipelines.newsroom.queue import ClaimQueue, QueueError
from pipelines.record.comments import Comment, CommentRefusedError, check_comment

RUN = "the run"


def render_comment_list(comments: Sequence[Comment], *, empty: str = "No comments yet.") -> None:
    if not comments:
        st.caption(empty)  # markup: the caller's constant
        return
    for c in comments:
        about = f" on {escape_markdown(c.about)}" if c.run_id else ""
        with st.container(border=True):
            st.markdown(f"**{escape_markdown(c.author)}**{about} · {when(c.at)}")  # markup: escaped name and exhibit id, a time
            st.markdown(escape_markdown(c.text))


def render_comments(
    queue: ClaimQueue, *, key: str, claim_id: str | None = None, run_id: str | None = None, exhibits: Sequence[str] = ()
) -> None:
    """The comments on a claim (``claim_id``) or on a run and its exhibits (``run_id``, ``exhibits`` its evidence ids), and the box."""
    comments = queue.comments_on_claim(claim_id) if claim_id else queue.comments_on_run(run_id or "")
    render_comment_list(comments)
    message = state.take_message(state.COMMENT_MESSAGE + key)
    if message:
        getattr(st, message[0])(message[1])
    if run_id and exhibits:
        st.selectbox("Comment on", [RUN, *exhibits], key=f"{key}.on", format_func=lambda e: e if e == RUN else f"exhibit {e}")
    st.text_area("Your comment", key=f"{key}.text", max_chars=4000, height=80, placeholder="Seen by everyone on the desk, kept in exports.")
    st.button("💬 Add comment", key=f"{key}.go", on_click=_add, args=(queue, key, claim_id, run_id))


def _add(queue: ClaimQueue, key: str, claim_id: str | None, run_id: str | None) -> None:
    user = acting_user()
    if user is None:
        state.set_message(
            state.COMMENT_MESSAGE + key, ("error", "⚠️ Enter your name in the sidebar first: every comment carries its author.")
        )
        return
    form = state.keyed(f"{key}.")
    on = form.get("on", RUN)
    evidence_id = None if on == RUN else str(on)
    try:
        # What the record keeps is checked first: something visible, no NUL, about a run and an exhibit that exist.
        text = check_comment(queue.engine, str(form.get("text", "")), run_id=run_id, evidence_id=evidence_id)
        queue.comment(user, text, claim_id=claim_id, run_id=run_id, evidence_id=evidence_id)
    except (QueueError, CommentRefusedError) as exc:
        state.set_message(state.COMMENT_MESSAGE + key, ("error", f"⚠️ {escape_markdown(str(exc))}"))
        return
    except (SQLAlchemyError, OSError) as exc:  # the database went away: the comment stays in the box to send again
        state.set_message(
            state.COMMENT_MESSAGE + key, ("error", f"⚠️ Not saved: the run database did not answer ({type(exc).__name__}). Try again.")
        )
        return
    form.clear("text")

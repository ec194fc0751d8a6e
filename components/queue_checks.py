"""The claims queue's "check these" on a desk whose work runs on workers: the chosen claims submitted as jobs to the desk's
``claims`` queue (``pipelines.run.workers.submit_claims``), each run linked to its claim at once, and each submission's
progress read from the store (completed, running on which worker, failed with its reason).

A single-user desk (SQLite, or ``batch_on_workers`` off) shows none of this: a claim is checked on Verify, or many in a
Batch file, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from components.batch_view import render_submitted_batch
from components.claim_queue import act, link_run_to_queue
from components.desk import run_settings_at_desk
from components.resources import get_services
from components.sign_in import acting_person
from components.state import keyed
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when
from pipelines.newsroom.access.users import User
from pipelines.newsroom.queue import CLOSED_STATUSES, ClaimQueue, QueueClaim, QueueError
from pipelines.run.services import Services
from pipelines.run.workers import CLAIMS_QUEUE, Submission, list_submissions, on_workers, submit_claims

K = "queue.check."
CHECK = keyed(K)  # the form's widgets and what it keeps between reruns


def render_check_these(queue: ClaimQueue, claims: Sequence[QueueClaim]) -> None:
    """Choose claims among those listed, submit them to the workers, and watch a submission's progress."""
    services = get_services()
    if not on_workers(services):
        return
    with st.container(border=True):
        st.markdown("**🔎 Check on the workers**")
        labels = {c.id: f"{c.text[:70]} · {c.id}" for c in claims if c.status not in CLOSED_STATUSES}
        st.multiselect(
            "Claims to check",
            list(labels),
            format_func=lambda claim_id: labels.get(claim_id, claim_id),
            key=K + "ids",
            placeholder="Choose among the claims listed above (not published or dismissed)",
        )
        st.button("Check these", key=K + "go", type="primary", icon="▶️", on_click=act, args=(_check(queue, services),))
        st.caption(
            "Each claim becomes a run on one of the desk's workers (`python -m pipelines worker`) with the desk's run settings, "
            "and joins its claim here at once; closing this tab loses nothing."
        )
        try:
            submissions = list_submissions(services, CLAIMS_QUEUE)
        except DebateDeskError as exc:
            st.error(f"⚠️ {escape_markdown(str(exc))}")
            return
        if not submissions:
            return
        by_batch = {s.batch: s for s in submissions}
        batch = st.selectbox(
            "Checks submitted from the queue",
            list(by_batch),
            format_func=lambda b: _describe(by_batch[b]),
            key=K + "watch",
            help="Every submission from this desk's queue, newest first; its progress is read from the store.",
        )
        if batch is not None:
            render_submitted_batch(services, CLAIMS_QUEUE, batch)


def _describe(submission: Submission) -> str:
    """Plain text for a select box (its options are shown as text, never Markdown)."""
    count = f"{submission.claims} claim{'s' if submission.claims != 1 else ''}"
    return f"{when(submission.submitted_at)} · {count}" + (f" · by {submission.by}" if submission.by else "")


def _check(queue: ClaimQueue, services: Services) -> Callable[[User], str]:
    def action(user: User) -> str:
        ids = list(CHECK.get("ids") or [])
        if not ids:
            raise QueueError("choose the claims to check first")
        chosen = []
        for claim_id in ids:
            claim = queue.get(claim_id)
            if claim is None:
                raise QueueError(f"no claim {claim_id!r} in the queue any more; nothing was submitted")
            if claim.status in CLOSED_STATUSES:
                raise QueueError(f"{claim_id} is {claim.status}, so it is not checked again from the queue; nothing was submitted")
            chosen.append(claim)
        # the role ("run") is checked by submit_claims, now, as the users file says
        submitted = submit_claims([(c.id, c.text) for c in chosen], run_settings_at_desk(services), services, by=acting_person())
        unlinked = [
            p for run_id, c in zip(submitted.run_ids, chosen, strict=True) if (p := link_run_to_queue(run_id, c.text, claim_id=c.id))
        ]
        CHECK.set("ids", [])
        CHECK.set("watch", submitted.batch_id)  # show this submission's progress
        said = f"{submitted.jobs} claim{'s' if submitted.jobs != 1 else ''} submitted to the workers; progress below, read from the store."
        if unlinked:
            said += f"  \n⚠️ {len(unlinked)} run(s): {escape_markdown(unlinked[0])}"
        return said

    return action

"""Publishing a reviewed claim: schema.org ClaimReview JSON-LD, written where the app serves it at a stable address.

What goes out is what the desk stands by: the editor's reviewed verdict (never a model's verdict
nobody reviewed), the editor's whole reason as the explanation, the claimant, where and when the
claim appeared, the organisation (``DEBATEDESK_ORGANISATION``) and the editor as authors, built
by the one ClaimReview builder (``pipelines.record.claimreview``).

The file is ``<static_dir>/<claim id>.json``; with Streamlit's static file serving on
(``server.enableStaticServing``) and ``static_dir`` the app's ``static/claimreview`` folder, it is
served at ``<app>/app/static/claimreview/<claim id>.json`` as ``application/json``. The database
keeps the published JSON-LD too: ``sync_published`` writes the files again (a new machine, a
cleaned folder). A file is written whole or not at all (a temporary file, then a rename).
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipelines.access.roles import require_role
from pipelines.access.users import User
from pipelines.domain import Evidence
from pipelines.newsroom.queue import ClaimQueue, QueueClaim, QueueError
from pipelines.record.claimreview import Review, build_claimreview, claimreview_problems
from pipelines.record.digest import digest
from pipelines.record.store import RunStore
from pipelines.text.safety import json_for_html

STATIC_ROUTE = "app/static/claimreview"  # where Streamlit serves the app's static/claimreview folder


def served_url(app_url: str, claim_id: str) -> str:
    """The stable address of a published claim's JSON-LD on this app."""
    return f"{app_url.rstrip('/')}/{STATIC_ROUTE}/{claim_id}.json"


def claim_review(claim: QueueClaim, *, organisation: str, url: str, citations: list[Evidence], published_on: str) -> dict[str, Any]:
    """The ClaimReview of a reviewed claim; nothing in it is cut, and no model's word stands in for the editor's."""
    if claim.reviewed_verdict is None:
        raise QueueError("the claim has no reviewed verdict; an editor reviews it before it is published")
    if not organisation.strip():
        raise QueueError("the desk has no organisation name: set DEBATEDESK_ORGANISATION (it is the fact-check's publisher and author)")
    where = claim.appearance
    return build_claimreview(
        Review(
            claim=claim.text,
            label=claim.reviewed_verdict.common,
            explanation=claim.review_reason,
            url=url,
            published_on=published_on,
            organisation=organisation,
            author=claim.reviewed_by,
            claimant=where.claimant,
            appeared_on=where.on,
            appeared_url=where.url,
            citations=citations,
        )
    )


def publish(
    queue: ClaimQueue,
    store: RunStore | None,
    claim_id: str,
    by: User,
    *,
    organisation: str,
    app_url: str,
    static_dir: Path,
    public_url: str = "",
) -> QueueClaim:
    """An editor publishes a reviewed claim: the JSON-LD is written, then the claim marked published.

    If the database refuses the change (down, or someone changed the claim meanwhile), the file is
    taken away again, so nothing is served that the queue does not list as published.
    """
    require_role(by, "publish")
    claim = queue.get(claim_id)
    if claim is None:
        raise QueueError(f"no claim {claim_id!r} in the queue")
    if claim.status != "in review" or claim.reviewed_verdict is None:
        raise QueueError(
            f"the claim is {claim.status}{'' if claim.reviewed else ' and not reviewed'}; an editor reviews it before publishing"
        )
    url = f"{public_url.rstrip('/')}/{claim.id}" if public_url else served_url(app_url, claim.id)
    doc = claim_review(
        claim,
        organisation=organisation,
        url=url,
        citations=_citations(store, claim.reviewed_run),
        published_on=datetime.now(UTC).date().isoformat(),
    )
    problems = claimreview_problems(doc, reviewer_required=True)
    if problems:
        raise QueueError("the ClaimReview is incomplete: " + "; ".join(problems))
    path = write_claimreview(static_dir, claim.id, doc)
    try:
        return queue.mark_published(claim.id, by, doc)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def unpublish(queue: ClaimQueue, claim_id: str, by: User, *, static_dir: Path, reason: str = "") -> QueueClaim:
    """Take a claim off: recorded first (the audit entry of its publishing stays), then its file removed."""
    claim = queue.mark_unpublished(claim_id, by, reason)
    (static_dir / f"{claim_id}.json").unlink(missing_ok=True)
    return claim


def write_claimreview(static_dir: Path, claim_id: str, doc: dict[str, Any]) -> Path:
    """Write the JSON-LD whole (safe inside a ``<script>`` block too), under the claim's id, which is ours (hex)."""
    if not re.fullmatch(r"[0-9a-f]{6,32}", claim_id):
        raise QueueError(f"not a claim id: {claim_id!r}")
    path = static_dir / f"{claim_id}.json"
    tmp_name = ""
    try:
        static_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=static_dir, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as tmp:
            tmp.write(json_for_html(doc) + "\n")
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, path)
    except OSError as exc:
        if tmp_name:
            Path(tmp_name).unlink(missing_ok=True)
        raise QueueError(f"could not write the published file in {static_dir} ({exc.strerror}); nothing was published") from exc
    return path


def sync_published(queue: ClaimQueue, static_dir: Path) -> int:
    """Write the file of every published claim that lacks one; returns how many were written."""
    written = 0
    for claim in queue.published():
        if claim.claimreview and not (static_dir / f"{claim.id}.json").exists():
            write_claimreview(static_dir, claim.id, claim.claimreview)
            written += 1
    return written


def _citations(store: RunStore | None, run_id: str) -> list[Evidence]:
    if store is None or not run_id:
        return []
    run = digest(store.events(run_id))
    return run.cited_evidence() or list(run.evidence.values())[:5]


__all__ = [
    "STATIC_ROUTE",
    "claim_review",
    "publish",
    "served_url",
    "sync_published",
    "unpublish",
    "write_claimreview",
]

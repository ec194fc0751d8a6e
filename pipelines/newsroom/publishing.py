"""Publishing a reviewed claim: schema.org ClaimReview JSON-LD, written where the app serves it at a stable address.

What goes out is what the desk stands by: the editor's reviewed verdict (never a model's verdict
nobody reviewed), the editor's whole reason as the explanation, the claimant, where and when the
claim appeared, the organisation (``DEBATEDESK_ORGANISATION``) and the editor as authors. Google's
fact-check markup requires ``claimReviewed``, ``reviewRating`` (with ``alternateName``) and ``url``,
and recommends ``author``, ``datePublished`` and an ``itemReviewed`` Claim with ``author``,
``datePublished``, ``appearance`` and ``firstAppearance``; ``claimreview_problems`` checks them.

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

from pipelines.access.users import User
from pipelines.domain import Evidence
from pipelines.newsroom.queue import ClaimQueue, QueueClaim, QueueError, require_editor
from pipelines.record.digest import digest
from pipelines.record.store import RunStore
from pipelines.text.safety import json_for_html, public_http_url

STATIC_ROUTE = "app/static/claimreview"  # where Streamlit serves the app's static/claimreview folder
GOOGLE_REQUIRED = ("claimReviewed", "reviewRating", "url")
# The reviewed verdict (the card's vocabulary) -> (ratingValue on 1-5, the rating's text Google shows), as the run exports rate them.
RATINGS: dict[str, tuple[int, str]] = {"SUPPORTED": (5, "True"), "REFUTED": (1, "False"), "NOT ENOUGH INFO": (3, "Unproven")}


def served_url(app_url: str, claim_id: str) -> str:
    """The stable address of a published claim's JSON-LD on this app."""
    return f"{app_url.rstrip('/')}/{STATIC_ROUTE}/{claim_id}.json"


def build_claimreview(claim: QueueClaim, *, organisation: str, url: str, citations: list[Evidence], published_on: str) -> dict[str, Any]:
    """The ClaimReview of a reviewed claim; nothing in it is cut, and no model's word stands in for the editor's."""
    if claim.reviewed_verdict is None:
        raise QueueError("the claim has no reviewed verdict; an editor reviews it before it is published")
    if not organisation.strip():
        raise QueueError("the desk has no organisation name: set DEBATEDESK_ORGANISATION (it is the fact-check's publisher and author)")
    label = claim.reviewed_verdict.common
    value, name = RATINGS[label]
    org = {"@type": "Organization", "name": organisation.strip()}
    item: dict[str, Any] = {"@type": "Claim", "text": claim.text}
    where = claim.appearance
    if where.claimant:
        item["author"] = {"@type": "Person", "name": where.claimant}
    if where.on:
        item["datePublished"] = where.on
    if where.url and public_http_url(where.url):
        item["appearance"] = [{"@type": "CreativeWork", "url": where.url}]
        item["firstAppearance"] = {"@type": "CreativeWork", "url": where.url}
    doc: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": url,
        "claimReviewed": claim.text,
        "datePublished": published_on,
        "author": [org, {"@type": "Person", "name": claim.reviewed_by}],
        "publisher": org,
        "reviewRating": {
            "@type": "Rating",
            "ratingValue": value,
            "bestRating": 5,
            "worstRating": 1,
            "alternateName": name,
            "name": label,
            "ratingExplanation": claim.review_reason,
        },
        "itemReviewed": item,
    }
    cited = [
        {"@type": "CreativeWork", "name": e.title or e.source_label, "url": e.url} for e in citations if e.url and public_http_url(e.url)
    ]
    if cited:
        doc["citation"] = cited
    return doc


def claimreview_problems(doc: dict[str, Any]) -> list[str]:
    """What the document lacks of Google's required fact-check fields and of what this desk always publishes."""
    problems = [f"{f}: missing" for f in GOOGLE_REQUIRED if not doc.get(f)]
    if doc.get("@context") != "https://schema.org" or doc.get("@type") != "ClaimReview":
        problems.append("@context/@type: must be https://schema.org ClaimReview")
    rating = doc.get("reviewRating") or {}
    if not rating.get("alternateName"):
        problems.append("reviewRating.alternateName: missing (Google shows it)")
    if not rating.get("ratingExplanation"):
        problems.append("reviewRating.ratingExplanation: missing (the editor's reason)")
    if not (rating.get("worstRating", 0) <= rating.get("ratingValue", -1) <= rating.get("bestRating", -1)):
        problems.append("reviewRating.ratingValue: outside worstRating..bestRating")
    authors = doc.get("author") or []
    if {a.get("@type") for a in authors if isinstance(a, dict) and a.get("name")} != {"Organization", "Person"}:
        problems.append("author: needs the organisation and the editor, each with a name")
    if (doc.get("itemReviewed") or {}).get("@type") != "Claim":
        problems.append("itemReviewed.@type: must be Claim")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(doc.get("datePublished", ""))):
        problems.append("datePublished: must be an ISO date (YYYY-MM-DD)")
    return problems


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
    require_editor(by, "publish")
    claim = queue.get(claim_id)
    if claim is None:
        raise QueueError(f"no claim {claim_id!r} in the queue")
    if claim.status != "in review" or claim.reviewed_verdict is None:
        raise QueueError(
            f"the claim is {claim.status}{'' if claim.reviewed else ' and not reviewed'}; an editor reviews it before publishing"
        )
    url = f"{public_url.rstrip('/')}/{claim.id}" if public_url else served_url(app_url, claim.id)
    doc = build_claimreview(
        claim,
        organisation=organisation,
        url=url,
        citations=_citations(store, claim.reviewed_run),
        published_on=datetime.now(UTC).date().isoformat(),
    )
    problems = claimreview_problems(doc)
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
    "GOOGLE_REQUIRED",
    "STATIC_ROUTE",
    "build_claimreview",
    "claimreview_problems",
    "publish",
    "served_url",
    "sync_published",
    "unpublish",
    "write_claimreview",
]

"""Publishing a reviewed claim: schema.org ClaimReview JSON-LD at a stable public address, and its corrections.

What goes out is what the desk stands by: the editor's reviewed verdict (never a model's verdict
nobody reviewed), the editor's whole reason as the explanation, the claimant, where and when the
claim appeared, the organisation (``DEBATEDESK_ORGANISATION``) and the editor as authors, built
by the one ClaimReview builder (``pipelines.record.claimreview``).

The address is ``<app>/app/static/claimreview/<claim id>.json``; it is served from the database
(``ClaimQueue.served``, by ``components/published.py``), never from a file, so every process of
the desk serves what the store holds the moment an action commits. Publishing, correcting,
confirming and unpublishing are each one transaction with a compare-and-set on the claim's
``publish_version``: two editors at once, one wins and the other is told who did what.

A correction keeps the address and ``datePublished``, adds ``dateModified`` and a note (what
changed, who, why) both as schema.org ``correction`` (a ``CorrectionComment``) and at the head of
``reviewBody``, the text readers see; every earlier version stays in ``queue_publications``.
Unpublishing leaves the address answering a plain "withdrawn" notice (when, who, why), never a 404.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pipelines.core.domain import Evidence
from pipelines.newsroom.access.roles import require_role
from pipelines.newsroom.access.users import User
from pipelines.newsroom.queue import ClaimQueue, QueueClaim, QueueError, name_of
from pipelines.record.claimreview import Correction, Review, build_claimreview, claimreview_problems, withdrawn_notice
from pipelines.record.digest import digest
from pipelines.record.store import RunStore

STATIC_ROUTE = "app/static/claimreview"  # where components/published.py serves each claim's document from the database


def served_url(app_url: str, claim_id: str) -> str:
    """The stable address of a published claim's JSON-LD on this app."""
    return f"{app_url.rstrip('/')}/{STATIC_ROUTE}/{claim_id}.json"


def claim_review(
    claim: QueueClaim,
    *,
    organisation: str,
    url: str,
    citations: list[Evidence],
    published_on: str,
    modified_on: str = "",
    corrections: list[Correction] | None = None,
) -> dict[str, Any]:
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
            modified_on=modified_on,
            corrections=tuple(corrections or ()),
            language=claim.language,
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
    public_url: str = "",
    expect_version: int | None = None,
    without_appearance: bool = False,
) -> QueueClaim:
    """An editor publishes a reviewed claim: its ClaimReview stored, and served at its address from the same commit.

    A claim with no claimant or no address where it appeared is published only when the editor confirmed it
    (``without_appearance``), recorded in the claim's history; else a QueueError names what is missing.

    ``expect_version``: the claim's ``publish_version`` on the editor's page (None: as read now); if another editor acted
    on the claim since, nothing is published and the QueueError says who did what.
    """
    require_role(by, "publish")
    claim, version = _claim_as_seen(queue, claim_id, expect_version, refuse_if_moved=True)
    if claim.status != "in review" or claim.reviewed_verdict is None:
        raise QueueError(
            f"the claim is {claim.status}{'' if claim.reviewed else ' and not reviewed'}; an editor reviews it before publishing"
        )
    missing = missing_appearance(claim)
    if missing and not without_appearance:
        raise QueueError(
            f"this claim has no {' and no '.join(missing)}: a fact-check says who made the claim and where; add them, or confirm "
            "publishing without them"
        )
    today = _today()
    again = claim.first_published_at is not None  # published again after a withdrawal: its first day and corrections stay
    doc = claim_review(
        claim,
        organisation=organisation,
        url=_address(claim, app_url, public_url),
        citations=_citations(store, claim.reviewed_run),
        published_on=_day_of(claim.first_published_at) if claim.first_published_at is not None else today,
        modified_on=today if again else "",
        corrections=_corrections(queue, claim),
    )
    _check(doc)
    return queue.mark_published(claim.id, by, doc, expect_version=version, without=missing)


def missing_appearance(claim: QueueClaim) -> list[str]:
    """What a fact-check should say of the claim that this one lacks: who made it, where it appeared."""
    fields = (("claimant", claim.appearance.claimant), ("address where it appeared", claim.appearance.url))
    return [what for what, value in fields if not value]


def correct(
    queue: ClaimQueue,
    store: RunStore | None,
    claim_id: str,
    by: User,
    why: str,
    *,
    organisation: str,
    app_url: str,
    public_url: str = "",
    expect_version: int | None = None,
) -> QueueClaim:
    """An editor publishes a correction of a published claim from its current review (re-review it first to change the rating).

    The same address serves the new ClaimReview: ``datePublished`` kept, ``dateModified`` today, and a correction note that
    says what changed (worked out here), who and why (``why``, required); the version before stays in the record.
    """
    require_role(by, "publish")
    reason = " ".join(why.split())
    if not reason:
        raise QueueError("say why the fact-check is corrected: the note is published with it")
    claim, version = _claim_as_seen(queue, claim_id, expect_version, refuse_if_moved=True)
    if claim.status != "published" or claim.claimreview is None or claim.reviewed_verdict is None:
        raise QueueError(f"the claim is {claim.status}; only a published fact-check is corrected (publish it instead)")
    before = claim.claimreview
    today = _today()
    url = str(before.get("url") or _address(claim, app_url, public_url))  # the same address, whatever the settings say now
    published_on = str(before.get("datePublished") or today)
    citations, earlier = _citations(store, claim.reviewed_run), _corrections(queue, claim)

    def with_corrections(corrections: list[Correction]) -> dict[str, Any]:
        return claim_review(
            claim,
            organisation=organisation,
            url=url,
            citations=citations,
            published_on=published_on,
            modified_on=today,
            corrections=corrections,
        )

    # The note says what changed, so it is worked out on the document without it, then published with it.
    note = Correction(on=today, by=name_of(by), what=what_changed(before, with_corrections(earlier)), why=reason)
    doc = with_corrections([*earlier, note])
    _check(doc)
    return queue.mark_corrected(claim.id, by, doc, note.text(), expect_version=version)


def confirm(queue: ClaimQueue, claim_id: str, by: User, note: str = "", *, expect_version: int | None = None) -> QueueClaim:
    """An editor stands by the published rating after the record changed: recorded (who, when, why), the flag cleared."""
    require_role(by, "publish")
    _, version = _claim_as_seen(queue, claim_id, expect_version)
    return queue.confirm_published(claim_id, by, note, expect_version=version)


def unpublish(
    queue: ClaimQueue, claim_id: str, by: User, *, reason: str = "", organisation: str = "", expect_version: int | None = None
) -> QueueClaim:
    """Take a claim off: its address then serves a plain "withdrawn" notice (when, who, why); every version stays in the record."""
    require_role(by, "publish")
    claim, version = _claim_as_seen(queue, claim_id, expect_version)
    if claim.status != "published" or claim.claimreview is None:
        raise QueueError(queue.why_refused(claim_id, version, "the claim is not published"))
    before = claim.claimreview
    notice = withdrawn_notice(
        url=str(before.get("url", "")),
        claim=claim.text,
        organisation=organisation or str((before.get("publisher") or {}).get("name", "")),
        published_on=str(before.get("datePublished", "")),
        withdrawn_on=_today(),
        by=name_of(by),
        reason=" ".join(reason.split()),
    )
    return queue.mark_unpublished(claim_id, by, reason, withdrawn=notice, expect_version=version)


def what_changed(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What a correction changes in the published ClaimReview, in plain words (the note readers see starts with it)."""
    parts = []
    rating_before, rating_after = before.get("reviewRating") or {}, after.get("reviewRating") or {}
    if rating_before.get("alternateName") != rating_after.get("alternateName"):
        parts.append(f"rating changed from {rating_before.get('alternateName')} to {rating_after.get('alternateName')}")
    if rating_before.get("ratingExplanation") != rating_after.get("ratingExplanation"):
        parts.append("explanation rewritten")
    if before.get("citation") != after.get("citation"):
        parts.append("sources changed")
    if before.get("itemReviewed") != after.get("itemReviewed"):
        parts.append("who made the claim, or where or when, changed")
    return "; ".join(parts) or "rating and explanation unchanged"


def _claim_as_seen(
    queue: ClaimQueue, claim_id: str, expect_version: int | None, *, refuse_if_moved: bool = False
) -> tuple[QueueClaim, int]:
    """The claim and the ``publish_version`` the editor acted on (None: as read now); a QueueError when it is not in the queue.

    ``refuse_if_moved``: refuse here, naming who did what, when another editor acted on the claim since (publishing and
    correcting build a document from the claim, so they must not build it from a later version than the editor saw).
    """
    claim = queue.get(claim_id)
    if claim is None:
        raise QueueError(f"no claim {claim_id!r} in the queue")
    version = claim.publish_version if expect_version is None else expect_version
    if refuse_if_moved and claim.publish_version != version:
        raise QueueError(queue.why_refused(claim_id, version, ""))
    return claim, version


def _address(claim: QueueClaim, app_url: str, public_url: str) -> str:
    return f"{public_url.rstrip('/')}/{claim.id}" if public_url else served_url(app_url, claim.id)


def _corrections(queue: ClaimQueue, claim: QueueClaim) -> list[Correction]:
    """The corrections the claim's latest ClaimReview carries (a new version keeps every earlier note, a withdrawal loses none)."""
    served = [p.document for p in queue.publications(claim.id) if p.document and p.document.get("@type") == "ClaimReview"]
    doc = claim.claimreview or (served[-1] if served else {})
    return [Correction.of(c) for c in doc.get("correction") or [] if isinstance(c, dict)]


def _check(doc: dict[str, Any]) -> None:
    problems = claimreview_problems(doc, reviewer_required=True)
    if problems:
        raise QueueError("the ClaimReview is incomplete: " + "; ".join(problems))


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _day_of(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).date().isoformat()


def _citations(store: RunStore | None, run_id: str) -> list[Evidence]:
    if store is None or not run_id:
        return []
    run = digest(store.events(run_id))
    return run.cited_evidence() or list(run.evidence.values())[:5]


__all__ = [
    "STATIC_ROUTE",
    "claim_review",
    "confirm",
    "correct",
    "missing_appearance",
    "publish",
    "served_url",
    "unpublish",
    "what_changed",
]

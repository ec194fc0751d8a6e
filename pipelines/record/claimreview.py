"""schema.org ClaimReview JSON-LD: the one builder, for a published fact-check and for a run's export.

What goes out is a verdict a person or the desk stands by, whole: the explanation is never cut.
Google's fact-check markup requires ``claimReviewed``, ``reviewRating`` (with ``alternateName``,
the words it shows) and ``url``, and recommends ``author``, ``datePublished`` and an
``itemReviewed`` Claim with ``author``, ``datePublished``, ``appearance`` and
``firstAppearance``; ``claimreview_problems`` checks what this desk always writes.

Two callers fill a ``Review``: publishing (``pipelines.newsroom.publishing``: an editor's
reviewed verdict on a queued claim, the editor and the organisation as authors) and a run's
export (``pipelines.record.export.to_claimreview``: this desk's checker's verdict when set, else
the model's, the organisation as author and the checker as editor).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pipelines.core.domain import Evidence
from pipelines.core.text.safety import public_http_url

# The one vocabulary (the card's words) -> (ratingValue on ClaimReview's 1-5 scale, the rating's words Google shows).
RATINGS: dict[str, tuple[int, str]] = {"SUPPORTED": (5, "True"), "NOT ENOUGH INFO": (3, "Unproven"), "REFUTED": (1, "False")}
GOOGLE_REQUIRED = ("claimReviewed", "reviewRating", "url")


@dataclass(frozen=True)
class Correction:
    """A correction of a published fact-check: the day, the editor, what changed and why.

    schema.org has no correction field on ClaimReview itself; CreativeWork's ``correction`` (a ``CorrectionComment``) is
    where a crawler looks, and ``reviewBody`` is the text a reader is shown, so the note goes in both.
    """

    on: str  # YYYY-MM-DD
    by: str
    what: str
    why: str

    def text(self) -> str:
        return f"Correction, {self.on}, by {self.by}: {self.what}. Why: {self.why}"

    def json_ld(self) -> dict[str, Any]:
        return {
            "@type": "CorrectionComment",
            "text": self.text(),
            "datePublished": self.on,
            "author": {"@type": "Person", "name": self.by},
            "about": self.what,
            "description": self.why,
        }

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Correction:
        """A correction as a published document holds it."""
        return cls(
            on=str(doc.get("datePublished", "")),
            by=str((doc.get("author") or {}).get("name", "")),
            what=str(doc.get("about", "")),
            why=str(doc.get("description", "")),
        )


@dataclass(frozen=True)
class Review:
    """What a ClaimReview says: the claim, the verdict in the one vocabulary with its explanation, who stands by it, where."""

    claim: str
    label: str  # SUPPORTED, REFUTED or NOT ENOUGH INFO
    explanation: str
    url: str
    published_on: str  # YYYY-MM-DD
    organisation: str
    author: str = ""  # the person who reviewed it, named as an author beside the organisation
    editor: str = ""  # a checker who set the verdict on a run (a run's export), named as its editor
    modified_on: str = ""  # YYYY-MM-DD when that checker set it
    claimant: str = ""
    appeared_on: str = ""  # when the claim appeared (YYYY-MM-DD)
    appeared_url: str = ""
    citations: list[Evidence] = field(default_factory=list)
    corrections: tuple[Correction, ...] = ()  # oldest first; each published version keeps every earlier one
    language: str = ""  # ISO 639 (BCP 47) of the claim and the review, when told


def build_claimreview(review: Review) -> dict[str, Any]:
    """The JSON-LD of ``review``: nothing in it cut; only public http(s) pages cited or linked."""
    if review.label not in RATINGS:
        raise ValueError(f"a ClaimReview rates SUPPORTED, REFUTED or NOT ENOUGH INFO, not {review.label!r}")
    value, words = RATINGS[review.label]
    org = {"@type": "Organization", "name": review.organisation.strip()}
    authors: list[dict[str, str]] = [org]
    if review.author:
        authors.append({"@type": "Person", "name": review.author})
    item: dict[str, Any] = {"@type": "Claim", "text": review.claim}
    if review.claimant:
        item["author"] = {"@type": "Person", "name": review.claimant}
    if review.appeared_on:
        item["datePublished"] = review.appeared_on
    if review.appeared_url and public_http_url(review.appeared_url):
        item["appearance"] = [{"@type": "CreativeWork", "url": review.appeared_url}]
        item["firstAppearance"] = {"@type": "CreativeWork", "url": review.appeared_url}
    doc: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": review.url,
        "claimReviewed": review.claim,
        "datePublished": review.published_on,
        "author": authors,
        "publisher": org,
        "reviewRating": {
            "@type": "Rating",
            "ratingValue": value,
            "bestRating": 5,
            "worstRating": 1,
            "alternateName": words,
            "name": review.label,
            "ratingExplanation": review.explanation,
        },
        "itemReviewed": item,
    }
    if review.language:
        doc["inLanguage"] = review.language
    if review.editor:
        doc["editor"] = {"@type": "Person", "name": review.editor}
    if review.modified_on:
        doc["dateModified"] = review.modified_on
    if review.corrections:
        doc["correction"] = [c.json_ld() for c in review.corrections]
        notes = "\n".join(c.text() for c in reversed(review.corrections))  # the newest first, where a reader starts
        doc["reviewBody"] = f"{notes}\n\n{review.explanation}"
    cited = [
        {"@type": "CreativeWork", "name": e.title or e.source_label, "url": e.url}
        for e in review.citations
        if e.url and public_http_url(e.url)
    ]
    if cited:
        doc["citation"] = cited
    return doc


def withdrawn_notice(
    *, url: str, claim: str, organisation: str, published_on: str, withdrawn_on: str, by: str, reason: str
) -> dict[str, Any]:
    """What a withdrawn fact-check's address serves: a plain notice, not a ClaimReview (no rating stays readable as the desk's),
    saying it was withdrawn, when, by whom and why. schema.org's ``creativeWorkStatus`` names the state."""
    why = reason or "no reason given"
    org = {"@type": "Organization", "name": organisation.strip()} if organisation.strip() else None
    doc: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "CreativeWork",
        "url": url,
        "name": "Fact-check withdrawn",
        "creativeWorkStatus": "Withdrawn",
        "about": {"@type": "Claim", "text": claim},
        "text": f"This fact-check was withdrawn on {withdrawn_on} by {by}. Why: {why}",
        "datePublished": published_on,
        "dateModified": withdrawn_on,
        "withdrawn": {"on": withdrawn_on, "by": by, "reason": why},
    }
    if org is not None:
        doc["publisher"] = org
    return doc


def claimreview_problems(doc: dict[str, Any], *, reviewer_required: bool = False) -> list[str]:
    """What the document lacks of Google's required fact-check fields and of what this desk always writes.

    ``reviewer_required``: a published fact-check names the editor who reviewed it as an author.
    """
    problems = [f"{f}: missing" for f in GOOGLE_REQUIRED if not doc.get(f)]
    if doc.get("@context") != "https://schema.org" or doc.get("@type") != "ClaimReview":
        problems.append("@context/@type: must be https://schema.org ClaimReview")
    rating = doc.get("reviewRating") or {}
    for part in ("ratingValue", "bestRating", "worstRating"):
        if not isinstance(rating.get(part), int):
            problems.append(f"reviewRating.{part}: missing")
    if not rating.get("alternateName"):
        problems.append("reviewRating.alternateName: missing (Google shows it)")
    if not rating.get("ratingExplanation"):
        problems.append("reviewRating.ratingExplanation: missing (why the verdict stands)")
    if not (rating.get("worstRating", 0) <= rating.get("ratingValue", -1) <= rating.get("bestRating", -1)):
        problems.append("reviewRating.ratingValue: outside worstRating..bestRating")
    authors = [a for a in doc.get("author") or [] if isinstance(a, dict) and a.get("name")]
    kinds = {a.get("@type") for a in authors}
    if "Organization" not in kinds:
        problems.append("author: missing (the organisation, with a name)")
    if reviewer_required and "Person" not in kinds:
        problems.append("author: needs the editor who reviewed it, with a name")
    if (doc.get("itemReviewed") or {}).get("@type") != "Claim":
        problems.append("itemReviewed.@type: must be Claim")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(doc.get("datePublished", ""))):
        problems.append("datePublished: must be an ISO date (YYYY-MM-DD)")
    return problems


__all__ = ["GOOGLE_REQUIRED", "RATINGS", "Correction", "Review", "build_claimreview", "claimreview_problems", "withdrawn_notice"]

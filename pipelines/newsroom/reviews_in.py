"""Other organisations' fact-checks, read in: ClaimReview JSON-LD (schema.org) as fact-checkers publish it, kept as
their review (named, dated, linked), never as this desk's verdict, and matched against the claims that come in.

What is read: one ClaimReview object, a list of them, a ``@graph``, or a ``DataFeed`` whose ``dataFeedElement`` holds
them (directly, or as the ``item`` of a ``DataFeedItem``: the shape of Google's fact-check markup feed); ``@type`` may be
a list; ``author`` and ``itemReviewed.author`` an object, a list or a plain name; the rating's words come from
``reviewRating.alternateName``, else its ``name``, else ``ratingValue`` out of ``bestRating``. A file is read whole before
anything is stored: one bad review refuses the file with a message naming it (its number and its field), and nothing is
half-imported. A review already here (same organisation, same address) is kept once.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Engine, func, or_, select
from sqlalchemy.orm import Session

from corpora.jsonl import JsonTooDeepError
from pipelines.core.database.rows import from_columns
from pipelines.core.database.tables import MAX_FIELD, OutsideReviewRow
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import UnsafeClaimError, check_claim_text, load_json, public_http_url, unsafe_char

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_REVIEWS = 20_000
MAX_CLAIM = 5000


class ReviewsFileError(DebateDeskError, ValueError):
    """A ClaimReview file that cannot be read as asked; the message names the review and the field."""


@dataclass(frozen=True)
class OutsideReview:
    organisation: str
    url: str
    claim_text: str
    rating: str
    published_on: str = ""
    claimant: str = ""
    language: str = ""
    id: str = ""

    def key(self) -> str:
        return hashlib.sha256(f"{self.organisation.lower()}\n{self.url or self.claim_text}".encode()).hexdigest()[:32]


def read_reviews(data: bytes, filename: str) -> list[OutsideReview]:
    """Every ClaimReview in a JSON-LD file (or a JSON Lines file of them), checked; ReviewsFileError names what is wrong."""
    if len(data) > MAX_FILE_BYTES:
        raise ReviewsFileError(f"{filename}: {len(data) / 1e6:.1f} MB is over the {MAX_FILE_BYTES // 1_000_000} MB a review file may be")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReviewsFileError(f"{filename}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    if not text.strip():
        raise ReviewsFileError(f"{filename}: the file is empty")
    documents = _documents(text, filename)
    found = [node for document in documents for node in _claim_reviews(document)]
    if not found:
        raise ReviewsFileError(f"{filename}: no ClaimReview in it (an object whose @type is ClaimReview)")
    if len(found) > MAX_REVIEWS:
        raise ReviewsFileError(f"{filename}: {len(found):,} reviews, more than the {MAX_REVIEWS:,} one file may hold; split it")
    reviews = []
    for number, node in enumerate(found, 1):
        try:
            reviews.append(_review(node))
        except ReviewsFileError as exc:
            raise ReviewsFileError(f"{filename}: review {number}: {exc}") from None
    return reviews


def _documents(text: str, filename: str) -> list[Any]:
    try:
        return [load_json(text, f"{filename}")]
    except JsonTooDeepError as exc:
        raise ReviewsFileError(str(exc)) from None
    except ValueError as first:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise ReviewsFileError(f"{filename}: not JSON ({first})") from None
        documents = []
        for number, line in enumerate(lines, 1):
            try:
                documents.append(load_json(line, f"{filename}, line {number}"))
            except ValueError as exc:
                raise ReviewsFileError(f"{filename}: not JSON, nor JSON Lines ({exc})") from None
        return documents


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("@type", [])
    kinds = kind if isinstance(kind, list) else [kind]
    return {str(k).rsplit("/", 1)[-1] for k in kinds}


def _claim_reviews(node: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """ClaimReview objects in a document: itself, a list, a @graph, a DataFeed's elements or their items."""
    if depth > 8:
        return
    if isinstance(node, list):
        for item in node:
            yield from _claim_reviews(item, depth + 1)
    elif isinstance(node, dict):
        if "ClaimReview" in _types(node):
            yield node
            return
        for key in ("@graph", "dataFeedElement", "item", "itemListElement"):
            if key in node:
                yield from _claim_reviews(node[key], depth + 1)


def _name(value: Any) -> str:
    """A person's or organisation's name from an object, a list of them, or a plain string."""
    if isinstance(value, list):
        return ", ".join(n for n in (_name(v) for v in value) if n)
    if isinstance(value, dict):
        return _text(value.get("name") or value.get("alternateName") or "")
    return _text(value)


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if isinstance(value, str | int | float) else ""


def _field(value: str, what: str, limit: int = MAX_FIELD) -> str:
    if (bad := unsafe_char(value)) is not None:
        raise ReviewsFileError(f"its {what} holds a control character at position {bad[0] + 1}")
    if len(value) > limit:
        raise ReviewsFileError(f"its {what} is {len(value):,} characters long, more than {limit:,}")
    return value


def _rating(node: dict[str, Any]) -> str:
    rating = node.get("reviewRating")
    rating = rating[0] if isinstance(rating, list) and rating else rating
    if not isinstance(rating, dict):
        return ""
    words = _text(rating.get("alternateName") or rating.get("name") or "")
    if words:
        return words
    value, best = _text(rating.get("ratingValue", "")), _text(rating.get("bestRating", ""))
    return f"{value} out of {best}" if value and best else value


def _review(node: dict[str, Any]) -> OutsideReview:
    try:
        claim = check_claim_text(_text(node.get("claimReviewed", "")), "its claimReviewed")
    except UnsafeClaimError as exc:
        raise ReviewsFileError(str(exc)) from None
    if not claim:
        raise ReviewsFileError("it has no claimReviewed (the claim it checks)")
    _field(claim, "claimReviewed", MAX_CLAIM)
    organisation = _field(_name(node.get("author")), "author")
    if not organisation:
        raise ReviewsFileError("it names no author (the organisation that published it)")
    rating = _field(_rating(node), "reviewRating")
    if not rating:
        raise ReviewsFileError("its reviewRating has no alternateName, name or ratingValue (what it found)")
    url = _text(node.get("url", ""))
    if url and not public_http_url(url):
        raise ReviewsFileError(f"its url {url[:80]!r} is not a public http(s) address")
    item = node.get("itemReviewed")
    item = item if isinstance(item, dict) else {}
    published = _text(node.get("datePublished", ""))[:10]
    if published and not (len(published) == 10 and published[4] == "-" and published[7] == "-" and published.replace("-", "").isdigit()):
        raise ReviewsFileError(f"its datePublished {published!r} is not a date (YYYY-MM-DD)")
    language = _text(node.get("inLanguage", "") if not isinstance(node.get("inLanguage"), dict) else node["inLanguage"].get("name", ""))
    review = OutsideReview(
        organisation=organisation,
        url=_field(url, "url", 2000),
        claim_text=claim,
        rating=rating,
        published_on=published,
        claimant=_field(_name(item.get("author")), "claimant"),
        language=_field(language[:16], "inLanguage"),
    )
    return review


class OutsideReviews:
    """The other organisations' reviews a desk imported, in the run store's database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, reviews: Sequence[OutsideReview], *, by: str, source_file: str = "") -> tuple[int, int]:
        """Store the reviews not already here, in one transaction; returns (added, already here)."""
        now, added, seen = time.time(), 0, 0
        with Session(self.engine) as s, s.begin():
            keys = {r.key() for r in reviews}
            present = set(s.scalars(select(OutsideReviewRow.id).where(OutsideReviewRow.id.in_(keys))).all()) if keys else set()
            for review in reviews:
                key = review.key()
                if key in present:
                    seen += 1
                    continue
                present.add(key)
                row = {**asdict(review), "id": key}  # the review's own fields, keyed by what makes it the same review
                s.add(OutsideReviewRow(**row, imported_at=now, imported_by=by[:MAX_FIELD], source_file=source_file[:MAX_FIELD]))
                added += 1
        return added, seen

    def all(self, limit: int = 50_000) -> list[OutsideReview]:
        with Session(self.engine) as s:
            rows = s.scalars(select(OutsideReviewRow).order_by(OutsideReviewRow.imported_at.desc()).limit(limit)).all()
            return [from_columns(OutsideReview, r) for r in rows]

    def search(self, text: str, limit: int = 100) -> list[OutsideReview]:
        """Reviews whose claim, organisation or claimant holds ``text`` (any case)."""
        needle = f"%{text.strip().lower()}%"
        with Session(self.engine) as s:
            rows = s.scalars(
                select(OutsideReviewRow)
                .where(
                    or_(
                        func.lower(OutsideReviewRow.claim_text).like(needle),
                        func.lower(OutsideReviewRow.organisation).like(needle),
                        func.lower(OutsideReviewRow.claimant).like(needle),
                    )
                )
                .limit(limit)
            ).all()
            return [from_columns(OutsideReview, r) for r in rows]

"""Other organisations' ClaimReviews read in: the shapes fact-checkers publish, bad files refused whole with the review and
field named, hostile text refused or kept as text, and stored once, as their review, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from pipelines.newsroom.reviews_in import OutsideReviews, ReviewsFileError, read_reviews
from pipelines.record.store import RunStore
from tests.stores import store_url  # noqa: F401  (the fixture)


def review(claim: str = "Vaccines contain microchips", rating: str = "False", **more: object) -> dict[str, object]:
    return {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": "https://factcheck.example.org/microchips",
        "claimReviewed": claim,
        "datePublished": "2026-10-01",
        "author": {"@type": "Organization", "name": "Example Checks"},
        "reviewRating": {"@type": "Rating", "alternateName": rating, "ratingValue": 1, "bestRating": 5},
        "itemReviewed": {"@type": "Claim", "author": {"@type": "Person", "name": "A Poster"}},
        **more,
    }


def as_file(document: object) -> bytes:
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    "document",
    [
        review(),
        [review()],
        {"@context": "https://schema.org", "@graph": [review()]},
        {"@type": "DataFeed", "dataFeedElement": [{"@type": "DataFeedItem", "item": [review()]}]},
        {"@type": "DataFeed", "dataFeedElement": [review()]},
        review(**{"@type": ["ClaimReview", "Review"]}),
    ],
    ids=["object", "list", "graph", "feed-items", "feed-elements", "type-list"],
)
def test_the_shapes_fact_checkers_publish_are_read(document: object) -> None:
    (found,) = read_reviews(as_file(document), "reviews.json")
    assert (found.organisation, found.rating, found.claim_text, found.published_on, found.claimant) == (
        "Example Checks",
        "False",
        "Vaccines contain microchips",
        "2026-10-01",
        "A Poster",
    )


def test_a_rating_without_words_is_read_from_its_value_and_an_author_may_be_a_list_or_a_name() -> None:
    document = review(reviewRating={"ratingValue": 2, "bestRating": 5}, author=[{"name": "Checks A"}, "Checks B"])
    (found,) = read_reviews(as_file(document), "r.json")
    assert found.rating == "2 out of 5" and found.organisation == "Checks A, Checks B"
    lines = b"\n".join(as_file(review(claim=f"Claim number {n}")) for n in range(3))
    assert len(read_reviews(lines, "feed.jsonl")) == 3, "JSON Lines of reviews too"


@pytest.mark.parametrize(
    "document,named",
    [
        ([review(), review(claimReviewed="")], "review 2: it has no claimReviewed"),
        ([review(author={})], "review 1: it names no author"),
        ([review(reviewRating={})], "review 1: its reviewRating has no alternateName"),
        ([review(url="javascript:alert(1)")], "review 1: its url 'javascript:alert(1)' is not a public http(s) address"),
        ([review(url="http://127.0.0.1.nip.io/x")], "is not a public http(s) address"),
        ([review(datePublished="yesterday")], "its datePublished 'yesterday' is not a date"),
        ([review(claimReviewed="Claim\x1b[2J")], "review 1: its claimReviewed contains a control character"),
        ([review(claimReviewed="\u200b\u200b")], "no visible characters"),
        ({"@type": "Article"}, "no ClaimReview in it"),
    ],
)
def test_a_bad_file_is_refused_whole_naming_the_review_and_the_field(document: object, named: str) -> None:
    with pytest.raises(ReviewsFileError, match="^reviews.json: ") as refused:
        read_reviews(as_file(document), "reviews.json")
    assert named in str(refused.value)


@pytest.mark.parametrize(
    "data,why", [(b"", "empty"), (b"{not json", "not JSON"), (b"\xff\xfe", "not UTF-8"), (b"[" * 200 + b"]" * 200, "nested")]
)
def test_what_is_not_json_is_said_plainly(data: bytes, why: str) -> None:
    with pytest.raises(ReviewsFileError, match=why):
        read_reviews(data, "reviews.json")


def test_markup_in_a_review_is_kept_as_text_not_obeyed() -> None:
    (found,) = read_reviews(as_file(review(claim="<script>alert(1)</script> **bold**")), "r.json")
    assert found.claim_text == "<script>alert(1)</script> **bold**"  # kept as written; every page escapes it where it lands


def test_reviews_are_stored_once_as_their_organisation_s(store_url: str) -> None:  # noqa: F811
    library = OutsideReviews(RunStore(store_url).engine)
    reviews = read_reviews(
        as_file([review(), review(claim="Tides are caused by the Moon", rating="True", url="https://factcheck.example.org/tides")]),
        "f.json",
    )
    assert library.add(reviews, by="Ana Ruiz", source_file="f.json") == (2, 0)
    assert library.add(reviews[:1], by="Bo Lind") == (0, 1), "the same review again is kept once"
    stored = library.all()
    assert {r.rating for r in stored} == {"False", "True"} and all(r.organisation == "Example Checks" for r in stored)
    assert [r.claim_text for r in library.search("tides")] == ["Tides are caused by the Moon"]

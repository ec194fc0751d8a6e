"""AppTest: the queue page reads other organisations' ClaimReviews in, and a claim typed that repeats one is told so
(joined, its verdict a proposal), escaped; a bad review file is refused plainly and nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.components.test_queue_page import add_typed, open_queue, queue_page
from tests.fakes import TEXANS_REVIEW

REVIEW = {**TEXANS_REVIEW, "author": {"name": "Example **Checks**"}}  # Markdown in a name: shown as typed


def read_in(at, data: bytes, name: str = "reviews.json"):  # type: ignore[no-untyped-def]
    at.file_uploader(key="queue.seen.file").set_value((name, data, "application/json"))
    next(b for b in at.button if b.key == "queue.seen.file.go").click().run()
    assert not at.exception, at.exception
    return at


def test_a_claim_typed_that_repeats_an_imported_review_is_joined_and_told(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = open_queue(queue_page(monkeypatch, tmp_path))
    at.sidebar.text_input[0].input("Ana Ruiz").run()
    read_in(at, json.dumps([REVIEW]).encode())
    assert any("Read 1 review from reviews\\.json" in s.value and "1 added" in s.value for s in at.success)
    assert list(at.dataframe[0].value["rating"]) == ["Mostly false"]
    add_typed(at, "Only about 250 Texans have been killed in action since 9/11.")
    told = next(s.value for s in at.success if "Added" in s.value)
    assert "Joined to an earlier fact-check" in told and "Example \\*\\*Checks\\*\\*" in told and "Mostly false" in told
    assert any("Repeats an earlier fact-check" in i.value and "not this desk's rating" in i.value for i in at.info)
    assert "🔁 repeats" in at.dataframe[0].value["status"].iloc[0] and at.dataframe[0].value["language"].iloc[0] == "en"


def test_a_bad_review_file_is_refused_plainly_and_nothing_is_stored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = open_queue(queue_page(monkeypatch, tmp_path))
    at.sidebar.text_input[0].input("Ana Ruiz").run()
    read_in(at, json.dumps([REVIEW, {**REVIEW, "reviewRating": {}}]).encode(), "two.json")
    assert any("two\\.json" in e.value and "review 2" in e.value and "reviewRating has no alternateName" in e.value for e in at.error)
    assert any("No review read in yet" in c.value for c in at.caption), "the good first review was not kept either"

"""Publishing: ClaimReview JSON-LD with Google's required fields, the reviewed verdict only, the whole reason; served as a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.newsroom.publishing import claim_review, publish, served_url, sync_published, unpublish
from pipelines.newsroom.queue import Appearance, ClaimQueue, NewClaim, NotAllowedError, QueueError
from pipelines.record.claimreview import claimreview_problems
from pipelines.record.store import RunStore
from tests.pipelines.newsroom.test_queue import ANA, BO, CLAIM, make_run
from tests.stores import store_url  # noqa: F401  (the fixture)

APP = "http://127.0.0.1:8501"
REASON = (
    "The ferry operator's own figures show no change in cases after masks were required; the study the post cites "
    "measured buses, not ferries. " * 12
).strip()  # longer than any cut the old export made (1,000 characters)


@pytest.fixture
def reviewed(store_url: str) -> tuple[RunStore, ClaimQueue, str]:  # noqa: F811
    store = RunStore(store_url)
    queue = ClaimQueue(store.engine)
    claim = queue.add(NewClaim(CLAIM, Appearance("https://example.org/post</script>", "2026-11-20", "Mayor <b>Jones</b>")), BO)
    make_run(store, "r1", label="SUPPORTS")  # the model said SUPPORTS; the editor disagrees
    queue.link_run("r1", CLAIM, BO)
    queue.review(claim.id, ANA, "REFUTED", REASON)
    return store, queue, claim.id


def test_the_published_claimreview_carries_what_the_desk_reviewed(reviewed: tuple[RunStore, ClaimQueue, str], tmp_path: Path) -> None:
    store, queue, claim_id = reviewed
    done = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP + "/", static_dir=tmp_path / "static")
    assert done.status == "published"
    path = tmp_path / "static" / f"{claim_id}.json"
    text = path.read_text()
    assert "</script>" not in text and "<b>" not in text  # safe inside a <script type="application/ld+json"> block
    doc = json.loads(text)
    assert doc == done.claimreview
    assert claimreview_problems(doc, reviewer_required=True) == []
    assert doc["url"] == served_url(APP, claim_id) == f"{APP}/app/static/claimreview/{claim_id}.json"
    assert doc["claimReviewed"] == CLAIM
    assert doc["reviewRating"]["name"] == "REFUTED" and doc["reviewRating"]["alternateName"] == "False"
    assert doc["reviewRating"]["ratingValue"] == 1  # the editor's verdict, not the model's SUPPORTS
    assert doc["reviewRating"]["ratingExplanation"] == REASON  # whole, never cut mid-word
    assert doc["author"] == [{"@type": "Organization", "name": "Ferry Facts"}, {"@type": "Person", "name": "Ana Ruiz"}]
    assert doc["publisher"] == {"@type": "Organization", "name": "Ferry Facts"}
    item = doc["itemReviewed"]
    assert item["@type"] == "Claim" and item["author"] == {"@type": "Person", "name": "Mayor <b>Jones</b>"}
    assert item["datePublished"] == "2026-11-20"
    assert item["firstAppearance"]["url"] == item["appearance"][0]["url"] == "https://example.org/post</script>"
    assert doc["citation"] == [{"@type": "CreativeWork", "name": "Ferry study", "url": "https://example.org/ferry"}]
    assert [h.action for h in queue.history(claim_id)][-1] == "published"


def test_a_public_url_setting_names_the_article(reviewed: tuple[RunStore, ClaimQueue, str], tmp_path: Path) -> None:
    store, queue, claim_id = reviewed
    done = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP, static_dir=tmp_path / "static",
                   public_url="https://facts.example.org/checks/")  # fmt: skip
    assert done.claimreview is not None and done.claimreview["url"] == f"https://facts.example.org/checks/{claim_id}"


def test_only_an_editor_publishes_and_only_a_reviewed_claim(store_url: str, tmp_path: Path) -> None:  # noqa: F811
    store = RunStore(store_url)
    queue = ClaimQueue(store.engine)
    claim = queue.add(NewClaim(CLAIM), BO)
    make_run(store, "r1")
    queue.link_run("r1", CLAIM, BO)
    with pytest.raises(QueueError, match="not reviewed"):
        publish(queue, store, claim.id, ANA, organisation="Ferry Facts", app_url=APP, static_dir=tmp_path / "static")
    queue.review(claim.id, ANA, "SUPPORTED", "Two trials agree.")
    with pytest.raises(NotAllowedError, match="only an editor may publish"):
        publish(queue, store, claim.id, BO, organisation="Ferry Facts", app_url=APP, static_dir=tmp_path / "static")
    with pytest.raises(QueueError, match="DEBATEDESK_ORGANISATION"):
        publish(queue, store, claim.id, ANA, organisation=" ", app_url=APP, static_dir=tmp_path / "static")
    assert not (tmp_path / "static").exists() or list((tmp_path / "static").iterdir()) == []
    assert queue.get(claim.id).status == "in review"  # type: ignore[union-attr]


def test_unpublishing_removes_the_file_and_keeps_the_audit_entry(reviewed: tuple[RunStore, ClaimQueue, str], tmp_path: Path) -> None:
    store, queue, claim_id = reviewed
    publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP, static_dir=tmp_path / "static")
    with pytest.raises(NotAllowedError):
        unpublish(queue, claim_id, BO, static_dir=tmp_path / "static")
    back = unpublish(queue, claim_id, ANA, static_dir=tmp_path / "static", reason="the operator corrected its figures")
    assert back.status == "in review" and back.claimreview is None
    assert not (tmp_path / "static" / f"{claim_id}.json").exists()
    assert [h.action for h in queue.history(claim_id)][-2:] == ["published", "unpublished"]
    assert queue.history(claim_id)[-1].detail["reason"] == "the operator corrected its figures"


def test_a_failed_database_write_leaves_no_file_served(reviewed: tuple[RunStore, ClaimQueue, str], tmp_path: Path) -> None:
    store, queue, claim_id = reviewed
    queue.set_status(claim_id, "checking", BO)  # someone sent it back meanwhile: the claim is no longer in review
    with pytest.raises(QueueError):
        publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP, static_dir=tmp_path / "static")
    assert not (tmp_path / "static" / f"{claim_id}.json").exists()

    queue.set_status(claim_id, "in review", BO)
    original = queue.mark_published

    def database_gone(*args: object, **kwargs: object) -> object:
        raise OSError("server closed the connection")

    queue.mark_published = database_gone  # type: ignore[method-assign]
    with pytest.raises(OSError):
        publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP, static_dir=tmp_path / "static")
    assert not (tmp_path / "static").exists() or list((tmp_path / "static").iterdir()) == []  # neither the file nor a temporary one
    queue.mark_published = original  # type: ignore[method-assign]


def test_published_files_are_written_again_from_the_database(reviewed: tuple[RunStore, ClaimQueue, str], tmp_path: Path) -> None:
    store, queue, claim_id = reviewed
    publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP, static_dir=tmp_path / "static")
    (tmp_path / "static" / f"{claim_id}.json").unlink()
    assert sync_published(queue, tmp_path / "elsewhere") == 1
    assert json.loads((tmp_path / "elsewhere" / f"{claim_id}.json").read_text())["claimReviewed"] == CLAIM


def test_an_unreviewed_claim_has_no_claimreview(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    _, queue, _ = reviewed
    fresh = queue.add(NewClaim("A claim nobody reviewed about tides"), ANA)
    with pytest.raises(QueueError, match="no reviewed verdict"):
        claim_review(fresh, organisation="Ferry Facts", url="https://x.example/1", citations=[], published_on="2026-11-26")

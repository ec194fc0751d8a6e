"""Publishing: ClaimReview JSON-LD with Google's required fields, the reviewed verdict only, the whole reason; served from the
database; corrections, confirmations and withdrawals, each a compare-and-set on the claim's publish version."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from pipelines.newsroom.access.users import User
from pipelines.newsroom.publishing import claim_review, confirm, correct, publish, served_url, unpublish
from pipelines.newsroom.queue import Appearance, ClaimQueue, NewClaim, NotAllowedError, QueueError
from pipelines.record.claimreview import claimreview_problems
from pipelines.record.store import RunStore
from pipelines.run.step_gate import override_verdict
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


def test_the_published_claimreview_carries_what_the_desk_reviewed(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    store, queue, claim_id = reviewed
    done = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP + "/")
    assert done.status == "published"
    doc = queue.served(claim_id)
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
    assert "dateModified" not in doc and "correction" not in doc
    assert doc["inLanguage"] == "en", "the claim's language, told from its text"
    assert [h.action for h in queue.history(claim_id)][-1] == "published"
    assert [(p.version, p.action, p.by, p.document) for p in queue.publications(claim_id)] == [(1, "published", "Ana Ruiz", doc)]


def test_a_public_url_setting_names_the_article(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    store, queue, claim_id = reviewed
    done = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP, public_url="https://facts.example.org/checks/")
    assert done.claimreview is not None and done.claimreview["url"] == f"https://facts.example.org/checks/{claim_id}"


def test_only_an_editor_publishes_and_only_a_reviewed_claim(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    queue = ClaimQueue(store.engine)
    claim = queue.add(NewClaim(CLAIM), BO)
    make_run(store, "r1")
    queue.link_run("r1", CLAIM, BO)
    with pytest.raises(QueueError, match="not reviewed"):
        publish(queue, store, claim.id, ANA, organisation="Ferry Facts", app_url=APP)
    queue.review(claim.id, ANA, "SUPPORTED", "Two trials agree.")
    with pytest.raises(NotAllowedError, match="only an editor may publish"):
        publish(queue, store, claim.id, BO, organisation="Ferry Facts", app_url=APP)
    # Issue 46: no claimant and no appearance neither refused nor warned; now the editor must confirm it
    with pytest.raises(QueueError, match="no claimant and no address where it appeared"):
        publish(queue, store, claim.id, ANA, organisation="Ferry Facts", app_url=APP)
    with pytest.raises(QueueError, match="DEBATEDESK_ORGANISATION"):
        publish(queue, store, claim.id, ANA, organisation=" ", app_url=APP, without_appearance=True)
    assert queue.get(claim.id).status == "in review"  # type: ignore[union-attr]
    assert queue.served(claim.id) is None and queue.publications(claim.id) == []
    publish(queue, store, claim.id, ANA, organisation="Ferry Facts", app_url=APP, without_appearance=True)
    assert queue.history(claim.id)[-1].detail["published without"] == "claimant, address where it appeared"  # who confirmed it


def test_unpublishing_leaves_a_withdrawn_notice_at_the_address_and_keeps_every_version(
    reviewed: tuple[RunStore, ClaimQueue, str],
) -> None:
    store, queue, claim_id = reviewed
    published = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    with pytest.raises(NotAllowedError):
        unpublish(queue, claim_id, BO)
    back = unpublish(queue, claim_id, ANA, reason="the operator corrected its figures", organisation="Ferry Facts")
    assert back.status == "in review" and back.claimreview is None
    notice = queue.served(claim_id)
    assert notice is not None, "a withdrawn fact-check's address still answers"
    today = datetime.now(UTC).date().isoformat()
    assert notice["creativeWorkStatus"] == "Withdrawn" and notice["@type"] != "ClaimReview" and "reviewRating" not in notice
    assert notice["url"] == published.claimreview["url"]  # type: ignore[index]
    assert notice["text"] == f"This fact-check was withdrawn on {today} by Ana Ruiz. Why: the operator corrected its figures"
    assert [h.action for h in queue.history(claim_id)][-2:] == ["published", "unpublished"]
    assert queue.history(claim_id)[-1].detail["reason"] == "the operator corrected its figures"
    versions = queue.publications(claim_id)
    assert [(p.action, p.note) for p in versions] == [("published", ""), ("withdrawn", "the operator corrected its figures")]
    assert versions[0].document == published.claimreview  # the version that was served stays readable

    again = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)  # published again: the first day stays
    assert queue.served(claim_id) == again.claimreview and again.claimreview["datePublished"] == today  # type: ignore[index]
    assert again.claimreview["dateModified"] == today  # type: ignore[index]


def test_a_correction_survives_a_withdrawal_and_a_new_publication(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    store, queue, claim_id = reviewed
    publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    queue.review(claim_id, ANA, "NOT ENOUGH INFO", "The revised figures settle nothing.")
    corrected = correct(queue, store, claim_id, ANA, "the operator revised its figures", organisation="Ferry Facts", app_url=APP)
    unpublish(queue, claim_id, ANA, reason="checking again")
    again = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    assert again.claimreview is not None and corrected.claimreview is not None
    assert again.claimreview["correction"] == corrected.claimreview["correction"]  # readers still see what was corrected
    assert again.claimreview["reviewBody"] == corrected.claimreview["reviewBody"]
    assert [p.action for p in queue.publications(claim_id)] == ["published", "corrected", "withdrawn", "published"]


def test_a_publish_refused_by_the_database_serves_nothing(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    store, queue, claim_id = reviewed
    queue.set_status(claim_id, "checking", BO)  # someone sent it back meanwhile: the claim is no longer in review
    with pytest.raises(QueueError):
        publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    assert queue.served(claim_id) is None


def test_two_editors_publishing_at_once_one_wins_the_other_is_told_and_the_address_answers(
    reviewed: tuple[RunStore, ClaimQueue, str],
) -> None:
    """Issue 46: two Publish presses together left the claim published and its address answering 404 (the loser took away the
    file the winner had written). Now both decide on the version they saw; one commits, the other is told who did it."""
    store, queue, claim_id = reviewed
    ed = User("ed", "Ed Editor", "editor")
    seen = queue.get(claim_id).publish_version  # type: ignore[union-attr]
    outcomes: list[object] = []
    start = threading.Barrier(2)

    def press(who: User) -> None:
        start.wait()
        try:
            outcomes.append(publish(queue, store, claim_id, who, organisation="Ferry Facts", app_url=APP, expect_version=seen))
        except QueueError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=press, args=(who,)) for who in (ANA, ed)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [o for o in outcomes if not isinstance(o, Exception)]
    told = [o for o in outcomes if isinstance(o, QueueError)]
    assert len(won) == 1 and len(told) == 1, outcomes
    winner = won[0].published_by  # type: ignore[attr-defined]
    assert f"{winner} published this claim meanwhile" in str(told[0])
    assert queue.served(claim_id) == queue.get(claim_id).claimreview is not None  # type: ignore[union-attr]
    assert [p.action for p in queue.publications(claim_id)] == ["published"]
    assert [h.action for h in queue.history(claim_id)].count("published") == 1


def test_an_override_after_publication_is_flagged_and_a_correction_keeps_the_address_and_the_first_day(
    reviewed: tuple[RunStore, ClaimQueue, str],
) -> None:
    store, queue, claim_id = reviewed
    first = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    assert queue.record_changes([first]) == {claim_id: []}
    override_verdict(store, "r1", "NOT ENOUGH INFO", "The operator's figures were revised.", "Ed Editor")
    flagged = queue.record_changes([queue.get(claim_id)])[claim_id]  # type: ignore[list-item]
    assert flagged == ["run r1's verdict was overridden to NOT ENOUGH INFO by Ed Editor: The operator's figures were revised."]
    assert queue.served(claim_id) == first.claimreview  # nothing changes on its own: an editor decides

    with pytest.raises(QueueError, match="say why"):
        correct(queue, store, claim_id, ANA, "  ", organisation="Ferry Facts", app_url=APP)
    with pytest.raises(NotAllowedError):
        correct(queue, store, claim_id, BO, "checker tries", organisation="Ferry Facts", app_url=APP)
    queue.review(claim_id, ANA, "NOT ENOUGH INFO", "The revised figures neither show nor rule out an effect.")
    assert queue.get(claim_id).status == "published"  # type: ignore[union-attr]
    assert "reviewed again as NOT ENOUGH INFO by Ana Ruiz" in queue.record_changes([queue.get(claim_id)])[claim_id]  # type: ignore[list-item]
    done = correct(queue, store, claim_id, ANA, "the operator revised its figures", organisation="Ferry Facts", app_url=APP)

    doc = queue.served(claim_id)
    assert doc == done.claimreview and doc is not None
    today = datetime.now(UTC).date().isoformat()
    assert doc["url"] == first.claimreview["url"] and doc["datePublished"] == first.claimreview["datePublished"]  # type: ignore[index]
    assert doc["dateModified"] == today
    assert doc["reviewRating"]["alternateName"] == "Unproven"
    note = f"Correction, {today}, by Ana Ruiz: rating changed from False to Unproven; explanation rewritten. Why: the operator revised its figures"
    assert doc["correction"] == [
        {
            "@type": "CorrectionComment",
            "text": note,
            "datePublished": today,
            "author": {"@type": "Person", "name": "Ana Ruiz"},
            "about": "rating changed from False to Unproven; explanation rewritten",
            "description": "the operator revised its figures",
        }
    ]
    assert doc["reviewBody"].startswith(note)  # what a reader is shown first
    assert claimreview_problems(doc, reviewer_required=True) == []
    versions = queue.publications(claim_id)
    assert [(p.version, p.action) for p in versions] == [(1, "published"), (2, "corrected")]
    assert versions[0].document == first.claimreview  # the earlier version stays readable
    assert queue.record_changes([done])[claim_id] == []  # accounted for
    assert [h.action for h in queue.history(claim_id)][-1] == "corrected"


def test_a_rerun_after_publication_is_flagged_until_an_editor_confirms_the_rating(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    store, queue, claim_id = reviewed
    first = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    make_run(store, "r2", label="REFUTES")
    queue.link_run("r2", CLAIM, BO, claim_id=claim_id)
    assert queue.record_changes([queue.get(claim_id)])[claim_id] == ["run r2 joined the claim (REFUTED)"]  # type: ignore[list-item]
    with pytest.raises(NotAllowedError):
        confirm(queue, claim_id, BO)
    done = confirm(queue, claim_id, ANA, "the re-run agrees with the published rating")
    assert queue.record_changes([done])[claim_id] == []
    assert queue.served(claim_id) == first.claimreview  # unchanged
    last = queue.publications(claim_id)[-1]
    assert (last.action, last.by, last.note, last.document) == (
        "confirmed",
        "Ana Ruiz",
        "the re-run agrees with the published rating",
        None,
    )


def test_correct_confirm_and_unpublish_on_the_same_version_one_wins(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    store, queue, claim_id = reviewed
    ed = User("ed", "Ed Editor", "editor")
    published = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    seen = published.publish_version
    correct(queue, store, claim_id, ed, "a typo in the explanation", organisation="Ferry Facts", app_url=APP, expect_version=seen)
    with pytest.raises(QueueError, match="Ed Editor corrected this claim meanwhile"):
        unpublish(queue, claim_id, ANA, reason="withdrawn", expect_version=seen)
    with pytest.raises(QueueError, match="Ed Editor corrected this claim meanwhile"):
        confirm(queue, claim_id, ANA, expect_version=seen)
    with pytest.raises(QueueError, match="meanwhile"):
        correct(queue, store, claim_id, ANA, "mine", organisation="Ferry Facts", app_url=APP, expect_version=seen)
    assert queue.get(claim_id).status == "published"  # type: ignore[union-attr]
    assert [p.action for p in queue.publications(claim_id)] == ["published", "corrected"]


def test_an_unreviewed_claim_has_no_claimreview(reviewed: tuple[RunStore, ClaimQueue, str]) -> None:
    _, queue, _ = reviewed
    fresh = queue.add(NewClaim("A claim nobody reviewed about tides"), ANA)
    with pytest.raises(QueueError, match="no reviewed verdict"):
        claim_review(fresh, organisation="Ferry Facts", url="https://x.example/1", citations=[], published_on="2026-11-26")

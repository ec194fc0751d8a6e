"""In Chromium, two people on one desk (an editor and a checker, then two editors; two browser contexts), on SQLite and on
PostgreSQL when a test server is configured (issue 46):

- the checker checks a queued claim, the editor reviews and publishes it; the editor then overrides the run's verdict in
  History, and the claim is flagged "the record changed since publication" on the queue, for both; the editor reviews it
  again and publishes a correction, and the public address serves the corrected ClaimReview, first day kept, with
  dateModified and the note; the earlier version stays listed; unpublishing leaves the address answering "withdrawn";
- two editors press Publish on the same claim at once: one wins, the other is told, and the address answers.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from pipelines.newsroom.access.users import hash_password
from pipelines.newsroom.queue import Appearance, ClaimQueue, NewClaim
from pipelines.record.store import RunStore
from tests.e2e.conftest import pick_option, screenshot, serve_app, settled, unfold
from tests.e2e.test_queue_browser import copied_link, follow, signed_in
from tests.pipelines.newsroom.test_queue import ANA, BO, make_run
from tests.stores import DATABASES, postgres_database

pytestmark = pytest.mark.e2e

CLAIM = "Masks reduce transmission of respiratory viruses on night ferries"
RACED = "Masks reduce transmission of respiratory viruses on harbour ferries"


def desk_users(path: Path) -> Path:
    """Ana Ruiz and Ed Editor (editors), Bo Lind (checker), each with password ``pw-for-tests``."""
    hashed = hash_password("pw-for-tests", rounds=4)
    people = (("ana", "Ana Ruiz", "editor"), ("ed", "Ed Editor", "editor"), ("bo", "Bo Lind", "checker"))
    path.write_text("".join(f'[users.{u}]\nname = "{n}"\nrole = "{r}"\npassword_hash = "{hashed}"\n' for u, n, r in people), "utf-8")
    return path


@pytest.fixture(scope="module", params=DATABASES)
def desk(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, demo_data_dir: Path) -> Iterator[tuple[str, str]]:
    """The desk's address and its database's URL: a SQLite file of its own, or a fresh PostgreSQL database."""
    users = desk_users(tmp_path_factory.mktemp("desk") / "users.toml")
    if request.param == "sqlite":
        database = f"sqlite:///{tmp_path_factory.mktemp('store') / 'runs.sqlite'}"
        for url in serve_app(tmp_path_factory, demo_data_dir, users_file=str(users), organisation="Ferry Facts", database_url=database):
            yield url, database
        return
    with postgres_database() as database:
        for url in serve_app(tmp_path_factory, demo_data_dir, users_file=str(users), organisation="Ferry Facts", database_url=database):
            yield url, database


def open_claim(page, url: str, username: str, claim_id: str) -> None:  # type: ignore[no-untyped-def]
    follow(page, f"{url}/queue?claim={claim_id}", username, "Claims queue")
    settled(page)


def served(address: str) -> tuple[int, dict[str, Any]]:
    with urllib.request.urlopen(address, timeout=10) as answer:
        assert answer.headers.get_content_type() == "application/json"
        return answer.status, json.loads(answer.read())


def review(page, opener: str, verdict: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    """The editor opens the claim's review box (``opener`` names it) and records ``verdict`` with ``reason``."""
    unfold(page, page.get_by_text(opener))  # opening the box reruns the page
    pick_option(page, "Reviewed verdict", verdict)
    page.get_by_role("textbox", name="Reason (published as the explanation, in full)").fill(reason)
    page.get_by_role("button", name="Record the review").click()


def override(page, run_url: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    """Ana overrides the verdict of the run at ``run_url`` in History to NOT ENOUGH INFO, for ``reason``."""
    follow(page, run_url, "ana", "History")
    page.get_by_role("heading", name=CLAIM).wait_for(timeout=60_000)
    settled(page)
    page.get_by_text("Override the verdict").click()
    pick_option(page, "Your verdict", "NOT ENOUGH INFO")
    page.get_by_role("textbox", name="Reason (required)").fill(reason)
    page.get_by_role("button", name="Record my verdict").click()
    page.get_by_text("Recorded: NOT ENOUGH INFO by Ana Ruiz").wait_for(timeout=60_000)


def test_publish_override_flag_correct_and_unpublish(browser, desk: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    url, database = desk
    queue = ClaimQueue(RunStore(database).engine)
    claim = queue.add(NewClaim(CLAIM, Appearance("https://example.org/night-post", "2026-11-20", "Mayor Jones")), ANA)

    bo = signed_in(browser, f"{url}/verify?check={claim.id}", "bo")  # the checker checks it, from the queue's link
    bo.locator("h1", has_text="Verify a claim").wait_for(timeout=120_000)
    expect(bo.locator("textarea").first).to_have_value(CLAIM, timeout=60_000)
    pick_option(bo, "Protocol", "single — Single agent (baseline)")
    bo.get_by_role("button", name="Verify").click()
    bo.get_by_text("Decided by").first.wait_for(timeout=300_000)
    run_url = copied_link(bo, "/history?run=")

    ana = signed_in(browser, f"{url}/queue?claim={claim.id}", "ana")  # the editor reviews and publishes
    ana.get_by_role("heading", name=CLAIM).wait_for(timeout=120_000)
    settled(ana)
    review(ana, "Review: the verdict the desk stands by", "SUPPORTED", "The ferry study shows fewer cases.")
    ana.get_by_text("Reviewed: SUPPORTED").first.wait_for(timeout=60_000)
    ana.get_by_role("button", name="Publish", exact=True).click()
    ana.get_by_text("Published at").wait_for(timeout=60_000)
    address = copied_link(ana, "/app/static/claimreview/")
    status, first = served(address)
    assert status == 200 and first["reviewRating"]["alternateName"] == "True" and "dateModified" not in first

    override(ana, run_url, "The operator revised its figures.")  # the editor overrides the run the fact-check rests on
    assert served(address)[1] == first, "an override alone changes nothing published"

    open_claim(bo, url, "bo", claim.id)  # both see the flag: the checker on the claim's page, the editor on the list
    bo.get_by_text("The record changed since publication").wait_for(timeout=60_000)
    expect(bo.get_by_text("verdict was overridden to NOT ENOUGH INFO by Ana Ruiz", exact=False)).to_be_visible()
    expect(bo.get_by_role("button", name="Publish a correction")).to_have_count(0)  # a checker does not correct
    screenshot(bo, "corrections-checker-sees-flag")
    follow(ana, f"{url}/queue", "ana", "Claims queue")
    flagged = ana.locator('[role="gridcell"]', has_text="📰 published ⚠️ record changed")  # the list's status cell (a canvas table)
    flagged.first.wait_for(state="attached", timeout=60_000)

    open_claim(ana, url, "ana", claim.id)
    ana.get_by_text("The record changed since publication").wait_for(timeout=60_000)
    review(ana, "Review again (then correct the published fact-check)", "NOT ENOUGH INFO", "The revised figures settle nothing.")
    ana.get_by_text("Reviewed again: NOT ENOUGH INFO").wait_for(timeout=60_000)
    settled(ana)
    why = ana.get_by_role("textbox", name="Why (the correction note, or why the rating stands, or why it is withdrawn)")
    why.fill("The ferry operator revised its figures after publication.")
    ana.get_by_role("button", name="Publish a correction").click()
    ana.get_by_text("Correction published (version 2)").wait_for(timeout=60_000)
    ana.get_by_text("Corrected 1×, last by Ana Ruiz").wait_for(timeout=60_000)
    screenshot(ana, "corrections-editor-corrected")

    status, corrected = served(address)
    today = datetime.now(UTC).date().isoformat()
    assert status == 200 and corrected["url"] == first["url"] and corrected["datePublished"] == first["datePublished"]
    assert corrected["dateModified"] == today and corrected["reviewRating"]["alternateName"] == "Unproven"
    note = (
        f"Correction, {today}, by Ana Ruiz: rating changed from True to Unproven; explanation rewritten. "
        "Why: The ferry operator revised its figures after publication."
    )
    assert corrected["correction"][0]["text"] == note and corrected["reviewBody"].startswith(note)
    expect(ana.get_by_text("The record changed since publication")).to_have_count(0)
    unfold(ana, ana.get_by_text("Published versions (2)"))
    ana.get_by_text("v1 · published by Ana Ruiz", exact=False).wait_for(timeout=30_000)  # the earlier version, still listed

    # The record changes again (a second override); the editor stands by the corrected rating: recorded, unflagged, unchanged.
    override(ana, run_url, "Checked the revised figures once more.")
    open_claim(ana, url, "ana", claim.id)
    ana.get_by_text("The record changed since publication").wait_for(timeout=60_000)
    why.fill("The second look changes nothing: Unproven stands.")
    ana.get_by_role("button", name="Confirm the published rating").click()
    ana.get_by_text("Confirmed: the published rating stands").wait_for(timeout=60_000)
    expect(ana.get_by_text("The record changed since publication")).to_have_count(0)
    assert served(address)[1] == corrected
    unfold(ana, ana.get_by_text("Published versions (3)"))
    ana.get_by_text("v3 · confirmed by Ana Ruiz", exact=False).wait_for(timeout=30_000)

    unfold(ana, ana.get_by_text("Correct, confirm or unpublish"))  # folded again once nothing is flagged
    why.fill("The operator withdrew the study.")
    expect(why).to_have_value("The operator withdrew the study.")
    ana.get_by_role("button", name="Unpublish").click()
    ana.get_by_text("Unpublished: its address now says the fact-check was withdrawn").wait_for(timeout=60_000)
    status, gone = served(address)
    assert status == 200 and gone["creativeWorkStatus"] == "Withdrawn" and "reviewRating" not in gone
    assert gone["text"] == f"This fact-check was withdrawn on {today} by Ana Ruiz. Why: The operator withdrew the study."
    screenshot(ana, "corrections-withdrawn")
    bo.context.close()
    ana.context.close()


def test_two_editors_publish_at_once_one_wins_and_the_address_answers(browser, desk: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    url, database = desk
    store = RunStore(database)
    queue = ClaimQueue(store.engine)
    claim = queue.add(NewClaim(RACED, Appearance("https://example.org/harbour-post", "2026-11-21", "Mayor Jones")), ANA)
    make_run(store, f"race{claim.id}", claim=RACED)
    queue.link_run(f"race{claim.id}", RACED, BO, claim_id=claim.id)
    queue.review(claim.id, ANA, "REFUTED", "The harbour figures show no change.")

    pages = {}
    for username in ("ana", "ed"):
        page = signed_in(browser, f"{url}/queue?claim={claim.id}", username)
        page.get_by_role("heading", name=RACED).wait_for(timeout=120_000)
        page.get_by_role("button", name="Publish", exact=True).wait_for(timeout=60_000)
        settled(page)
        pages[username] = page
    buttons = [p.get_by_role("button", name="Publish", exact=True) for p in pages.values()]
    for button in buttons:  # both pressed before either page has heard back
        button.dispatch_event("click")
    outcomes = {}
    for username, page in pages.items():
        won, told = page.get_by_text("Published at"), page.get_by_text("published this claim meanwhile", exact=False)
        won.or_(told).first.wait_for(timeout=60_000)
        outcomes[username] = "won" if won.count() else "told"
        screenshot(page, f"corrections-race-{username}")
    assert sorted(outcomes.values()) == ["told", "won"], outcomes
    status, doc = served(f"{url}/app/static/claimreview/{claim.id}.json")
    assert status == 200 and doc["reviewRating"]["alternateName"] == "False"
    assert [p.action for p in queue.publications(claim.id)] == ["published"]
    for page in pages.values():
        page.context.close()

"""The public address of a published fact-check (components/published.py), driven with Starlette's test client: it answers
from the database, whatever process published, corrected or withdrew it; a withdrawn one says so, never a 404."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from components import published
from pipelines.newsroom.access.users import User
from pipelines.newsroom.publishing import correct, publish, unpublish
from pipelines.newsroom.queue import Appearance, ClaimQueue, NewClaim, QueueError
from pipelines.record.store import RunStore
from tests.pipelines.newsroom.test_queue import ANA, BO, CLAIM, make_run

APP = "http://desk.test"


@pytest.fixture
def desk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[TestClient, RunStore, ClaimQueue, str]]:
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    store = RunStore(f"sqlite:///{(tmp_path / 'data' / 'runs.sqlite').resolve()}")  # the desk's database, as the app opens it
    queue = ClaimQueue(store.engine)
    claim = queue.add(NewClaim(CLAIM, Appearance("https://example.org/post", "2026-11-20", "Mayor Jones")), BO)
    make_run(store, "r1")
    queue.link_run("r1", CLAIM, BO)
    queue.review(claim.id, ANA, "SUPPORTED", "The ferry study shows it.")
    with TestClient(Starlette(routes=published.ROUTES), base_url=APP) as client:
        yield client, store, queue, claim.id


def test_the_address_serves_the_stored_document_its_corrections_and_its_withdrawal(
    desk: tuple[TestClient, RunStore, ClaimQueue, str],
) -> None:
    client, store, queue, claim_id = desk
    address = f"/app/static/claimreview/{claim_id}.json"
    assert client.get(address).status_code == 404  # never published: nothing here
    done = publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)
    answer = client.get(address)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    assert answer.json() == done.claimreview and answer.headers["cache-control"] == "no-cache"

    queue.review(claim_id, ANA, "REFUTED", "The revised figures show no effect.")
    correct(queue, store, claim_id, ANA, "the operator revised its figures", organisation="Ferry Facts", app_url=APP)
    corrected = client.get(address).json()
    assert corrected["reviewRating"]["alternateName"] == "False" and corrected["dateModified"]
    assert corrected["datePublished"] == done.claimreview["datePublished"]  # type: ignore[index]
    assert "the operator revised its figures" in corrected["reviewBody"]

    unpublish(queue, claim_id, ANA, reason="the study was retracted")
    gone = client.get(address)
    assert gone.status_code == 200, "a withdrawn fact-check's address answers, never a 404"
    assert gone.json()["creativeWorkStatus"] == "Withdrawn" and "the study was retracted" in gone.json()["text"]
    assert client.get("/app/static/claimreview/..%2Fsecrets.json").status_code == 404
    assert client.get("/app/static/claimreview/abcdef123456.json").status_code == 404


def test_two_publishes_at_once_leave_the_address_answering(desk: tuple[TestClient, RunStore, ClaimQueue, str]) -> None:
    """Issue 46: two editors pressing Publish together left the address answering 404 until the next app start."""
    client, store, queue, claim_id = desk
    seen = queue.get(claim_id).publish_version  # type: ignore[union-attr]
    start = threading.Barrier(2)
    told: list[QueueError] = []

    def press(who: User) -> None:
        start.wait()
        try:
            publish(queue, store, claim_id, who, organisation="Ferry Facts", app_url=APP, expect_version=seen)
        except QueueError as exc:
            told.append(exc)

    threads = [threading.Thread(target=press, args=(who,)) for who in (ANA, User("ed", "Ed Editor", "editor"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(told) == 1 and "published this claim meanwhile" in str(told[0])
    answer = client.get(f"/app/static/claimreview/{claim_id}.json")
    assert answer.status_code == 200 and answer.json()["reviewRating"]["alternateName"] == "True"


def test_the_address_says_plainly_when_the_database_is_away(
    desk: tuple[TestClient, RunStore, ClaimQueue, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import OperationalError

    client, store, queue, claim_id = desk
    publish(queue, store, claim_id, ANA, organisation="Ferry Facts", app_url=APP)

    def away(self: ClaimQueue, claim_id: str) -> None:
        raise OperationalError("SELECT", {}, Exception("server closed the connection"))

    served = ClaimQueue.served
    monkeypatch.setattr(ClaimQueue, "served", away)
    answer = client.get(f"/app/static/claimreview/{claim_id}.json")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "30"
    assert answer.json() == {"error": "the desk's database cannot be reached just now; try again in a moment"}
    monkeypatch.setattr(ClaimQueue, "served", served)
    assert client.get(f"/app/static/claimreview/{claim_id}.json").status_code == 200  # back when the database is

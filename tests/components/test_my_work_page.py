"""AppTest: the queue page tells each person their own work: notices (assigned, mentioned, reviewed), read and unread;
the "assigned to me" and "mentioning me" views; several claims changed at once, each in its history; and a filter that
hides every claim is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.newsroom.access.users import User
from pipelines.newsroom.queue import ClaimQueue, NewClaim
from pipelines.record.store import RunStore
from tests.components.test_queue_page import open_queue, queue_page

ANA = User("ana ruiz", "Ana Ruiz", "editor")


def as_bo(monkeypatch: pytest.MonkeyPatch, data_dir: Path):  # type: ignore[no-untyped-def]
    at = open_queue(queue_page(monkeypatch, data_dir))
    at.sidebar.text_input[0].input("Bo Lind").run()
    return at


def test_a_person_sees_what_others_did_for_them_and_marks_it_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = as_bo(monkeypatch, tmp_path)  # the page made the store; Ana acts on it from elsewhere
    queue = ClaimQueue(RunStore(f"sqlite:///{(tmp_path / 'runs.sqlite').resolve()}").engine)
    mine = queue.add(NewClaim("Tides follow the Moon"), ANA)
    queue.update(mine.id, ANA, assignee="Bo Lind")
    other = queue.add(NewClaim("The Moon landing was filmed in a studio"), ANA)
    queue.comment(ANA, "@bo have a look at the <b>studio</b> photos", claim_id=other.id)
    queue.add(NewClaim("Masks reduce transmission on ferries"), ANA)
    at.run()
    notices = next(e for e in at.expander if "Notices" in e.label)
    assert notices.label == "🔔 Notices (2 new)"
    texts = [m.value for m in notices.markdown]
    assert any("Ana Ruiz assigned you a claim" in t for t in texts) and any("mentioned you" in t and "<b>" not in t for t in texts)
    next(b for b in at.button if b.key == "queue.mine.read").click().run()
    assert next(e for e in at.expander if "Notices" in e.label).label == "🔔 Notices"

    at.segmented_control(key="queue.mine.view").set_value("Assigned to me").run()
    assert list(at.dataframe[0].value["id"]) == [mine.id]
    at.segmented_control(key="queue.mine.view").set_value("Mentioning me").run()
    assert list(at.dataframe[0].value["id"]) == [other.id]
    at.multiselect(key="queue.f.status").select("dismissed").run()
    assert any("No claims match the view Mentioning me and Status" in i.value for i in at.info)


def test_several_claims_change_at_once_each_in_its_history(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = as_bo(monkeypatch, tmp_path)
    queue = ClaimQueue(RunStore(f"sqlite:///{(tmp_path / 'runs.sqlite').resolve()}").engine)
    ids = [queue.add(NewClaim(text), ANA).id for text in ("Tides follow the Moon", "Bees can count to four", "Cats see in colour")]
    at.run()
    at.multiselect(key="queue.mine.bulk.ids").select(ids[0]).select(ids[1]).run()
    at.selectbox(key="queue.mine.bulk.status").select("dismissed")
    at.text_input(key="queue.mine.bulk.tag").input("nature")
    next(b for b in at.button if b.key == "queue.mine.bulk.go").click().run()
    assert not at.exception, at.exception
    assert any("Changed 2 of 2 claims" in s.value for s in at.success)
    for claim_id in ids[:2]:
        claim = queue.get(claim_id)
        assert claim is not None and claim.status == "dismissed" and claim.tags == ("nature",)
        assert [h.action for h in queue.history(claim_id)][-2:] == ["changed", "status"]
    untouched = queue.get(ids[2])
    assert untouched is not None and untouched.status == "new"

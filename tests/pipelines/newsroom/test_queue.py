"""The claims queue: claims in (typed, pasted, from a file), filters, status changes, runs, comments, review; each change audited."""

from __future__ import annotations

import pytest

from pipelines.core.domain import Evidence, Verdict
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import EvidenceRetrieved, RunStarted, VerdictReached
from pipelines.newsroom.access.users import User
from pipelines.newsroom.intake import claims_from_file, claims_from_text
from pipelines.newsroom.queue import MAX_REASON, Appearance, ClaimQueue, NewClaim, NotAllowedError, QueueError, QueueFilter
from pipelines.record.comments import MAX_COMMENT
from pipelines.record.store import RunStore
from pipelines.run.step_gate import override_verdict
from tests.stores import store_url  # noqa: F401  (the fixture)

ANA = User("ana", "Ana Ruiz", "editor")
BO = User("bo", "Bo Lind", "checker")
CLAIM = "Masks reduce transmission of respiratory viruses on ferries"


def make_run(store: RunStore, run_id: str, claim: str = CLAIM, label: str = "SUPPORTS") -> None:
    store.create_run(run_id, claim, "single", {"protocol": "single"})
    store.append(run_id, RunStarted(run_id=run_id, claim=claim, protocol="single", config={"protocol": "single"}))
    ev = Evidence(id="E1", source="web", title="Ferry study", text="Masks cut spread on ferries.", url="https://example.org/ferry")
    store.append(run_id, EvidenceRetrieved(agent="A", round=1, evidence=ev))
    store.append(run_id, VerdictReached(verdict=Verdict(label=label, rationale="The ferry study found fewer cases.", cited=["E1"])))
    store.finish(run_id, "completed")


@pytest.fixture
def stores(store_url: str) -> tuple[RunStore, ClaimQueue]:  # noqa: F811
    store = RunStore(store_url)
    return store, ClaimQueue(store.engine)


def test_a_claim_added_with_where_it_appeared_is_found_by_every_filter(stores: tuple[RunStore, ClaimQueue]) -> None:
    _, queue = stores
    claim = queue.add(
        NewClaim(CLAIM, Appearance("https://example.org/post", "2026-11-20", "Mayor Jones"), assignee="Bo Lind", due_on="2026-11-30",
                 tags=("Health", "ferries")),
        ANA,
    )  # fmt: skip
    queue.add(NewClaim("The Moon landing was filmed in a studio", tags=("space",)), BO)
    assert (claim.status, claim.assignee, claim.tags, claim.appearance.claimant) == ("new", "Bo Lind", ("health", "ferries"), "Mayor Jones")
    for where in (
        QueueFilter(text="ferries"),
        QueueFilter(text="example.org/post"),
        QueueFilter(statuses=("new",), assignees=("Bo Lind",)),
        QueueFilter(tags=("health",)),
        QueueFilter(due_by="2026-12-01"),
        QueueFilter(claimant="jones"),
    ):
        assert [c.id for c in queue.find(where)] == [claim.id], where
    assert len(queue.find(QueueFilter(assignees=("",)))) == 1  # nobody has the Moon claim
    assert queue.find(QueueFilter(tags=("heal", "ferr", "%"))) == []  # a tag is matched whole; a wildcard is a character
    assert queue.facets() == {
        "assignees": ["Bo Lind"],
        "tags": ["ferries", "health", "space"],
        "claimants": ["Mayor Jones"],
        "languages": ["en"],
    }
    [entry] = queue.history(claim.id)
    assert (entry.by, entry.action, entry.detail["claimant"]) == ("Ana Ruiz", "added", "Mayor Jones")


def test_every_change_is_an_audit_entry_with_its_author(stores: tuple[RunStore, ClaimQueue]) -> None:
    _, queue = stores
    claim = queue.add(NewClaim(CLAIM), ANA)
    queue.update(claim.id, ANA, assignee="Bo Lind", due_on="2026-12-01", tags=["health"])
    queue.set_status(claim.id, "checking", BO)
    queue.update(claim.id, BO, assignee="Bo Lind")  # no change: no entry
    history = queue.history(claim.id)
    assert [(h.by, h.action) for h in history] == [("Ana Ruiz", "added"), ("Ana Ruiz", "changed"), ("Bo Lind", "status")]
    assert history[1].detail == {"assignee": [None, "Bo Lind"], "due": [None, "2026-12-01"], "tags": ["", "health"]}
    assert history[2].describe() == "status (status: new → checking)"


def test_bad_input_gets_a_plain_message_and_changes_nothing(stores: tuple[RunStore, ClaimQueue]) -> None:
    _, queue = stores
    for bad, says in (
        (NewClaim(""), "empty"),
        (NewClaim(CLAIM, Appearance(url="javascript:alert(1)")), "http:// or https://"),
        (NewClaim(CLAIM, Appearance(on="20/11/2026")), "YYYY-MM-DD"),
        (NewClaim(CLAIM, due_on="2026-02-30"), "YYYY-MM-DD"),
        (NewClaim(CLAIM, assignee="Bo\u202eLind"), "assignee contains"),
    ):
        with pytest.raises(QueueError, match=says):
            queue.add(bad, ANA)
    with pytest.raises(QueueError, match="claim 2"):
        queue.add_many([NewClaim(CLAIM), NewClaim(CLAIM, due_on="soon")], ANA)
    assert queue.count() == 0  # the good first claim was not added either
    with pytest.raises(QueueError, match="enter your name"):
        queue.add(NewClaim(CLAIM), User("", "", "editor"))


def test_status_moves_only_along_the_workflow(stores: tuple[RunStore, ClaimQueue]) -> None:
    _, queue = stores
    claim = queue.add(NewClaim(CLAIM), BO)
    with pytest.raises(QueueError, match="can go to: checking, dismissed"):
        queue.set_status(claim.id, "in review", BO)
    with pytest.raises(QueueError, match="editor's Publish"):
        queue.set_status(claim.id, "published", ANA)
    queue.set_status(claim.id, "dismissed", BO)
    assert queue.set_status(claim.id, "new", BO).status == "new"


def test_runs_join_the_claim_they_were_started_from_or_its_text_or_a_new_one(stores: tuple[RunStore, ClaimQueue]) -> None:
    store, queue = stores
    claim = queue.add(NewClaim(CLAIM), ANA)
    other = queue.add(NewClaim("Another claim entirely about tides"), ANA)
    make_run(store, "r1")
    make_run(store, "r2", claim="Another claim entirely about tides")
    make_run(store, "r3", claim="A claim nobody queued about trains")
    assert queue.link_run("r1", f"  {CLAIM} ", BO).id == claim.id  # same text (spacing aside): joins, and starts checking
    assert queue.link_run("r2", "edited wording", BO, claim_id=other.id).id == other.id
    fresh = queue.link_run("r3", "A claim nobody queued about trains", BO)
    assert fresh.id not in (claim.id, other.id) and fresh.status == "checking" and fresh.created_by == "Bo Lind"
    assert queue.link_run("r1", "whatever", ANA).id == claim.id  # a linked run stays with its claim
    assert queue.runs_of(claim.id) == ["r1"]
    assert queue.claim_of_run("r2") == queue.get(other.id)
    assert queue.get(claim.id).status == "checking"  # type: ignore[union-attr]
    assert [h.action for h in queue.history(claim.id)] == ["added", "run linked"]


def test_comments_on_a_claim_a_run_and_an_exhibit_keep_author_and_time(stores: tuple[RunStore, ClaimQueue]) -> None:
    store, queue = stores
    claim = queue.add(NewClaim(CLAIM), ANA)
    make_run(store, "r1")
    queue.comment(BO, "Called the ferry company: no data before 2020.", claim_id=claim.id)
    queue.comment(ANA, "The judge leaned on one study.", run_id="r1")
    queue.comment(BO, "E1 is a preprint **not** peer reviewed", run_id="r1", evidence_id="E1")
    assert [(c.author, c.about) for c in queue.comments_on_claim(claim.id)] == [("Bo Lind", "the claim")]
    on_run = queue.comments_on_run("r1")
    assert [(c.author, c.about, c.text) for c in on_run] == [
        ("Ana Ruiz", "the run", "The judge leaned on one study."),
        ("Bo Lind", "exhibit E1", "E1 is a preprint **not** peer reviewed"),  # kept as written; each sink escapes it
    ]
    assert all(c.at > 0 for c in on_run)
    for bad in ("", "x" * 5000):
        with pytest.raises(QueueError):
            queue.comment(BO, bad, claim_id=claim.id)
    with pytest.raises(QueueError, match="needs the run"):
        queue.comment(BO, "about E1", evidence_id="E1")
    assert queue.history(claim.id)[-1].action == "commented"


def test_only_an_editor_reviews_and_only_a_checked_claim(stores: tuple[RunStore, ClaimQueue]) -> None:
    store, queue = stores
    claim = queue.add(NewClaim(CLAIM), BO)
    with pytest.raises(QueueError, match="no run has checked"):
        queue.review(claim.id, ANA, "REFUTED", "The study was retracted.")
    make_run(store, "r1")
    queue.link_run("r1", CLAIM, BO)
    with pytest.raises(NotAllowedError, match="only an editor may review claims for publication; Bo Lind is signed in as a checker"):
        queue.review(claim.id, BO, "REFUTED", "The study was retracted.")
    with pytest.raises(QueueError, match="SUPPORTED, REFUTED, NOT ENOUGH INFO"):
        queue.review(claim.id, ANA, "SUPPORTS", "The model said so.")  # one vocabulary: the card's
    with pytest.raises(QueueError, match="say why"):
        queue.review(claim.id, ANA, "REFUTED", "  ")
    reviewed = queue.review(claim.id, ANA, "refuted", "The study was retracted.")
    assert (reviewed.status, reviewed.reviewed_verdict.common, reviewed.reviewed_by, reviewed.reviewed_run) == (  # type: ignore[union-attr]
        "in review", "REFUTED", "Ana Ruiz", "r1",
    )  # fmt: skip
    assert queue.history(claim.id)[-1].detail["verdict"] == [None, "REFUTED"]


def test_claims_come_in_from_a_file_with_where_they_appeared_or_pasted() -> None:
    data = (
        "claim,url,date,claimant,assignee,due,tags\n"
        f'"{CLAIM}",https://example.org/p,2026-11-20T10:00:00,Mayor Jones,Bo Lind,2026-12-01,"health; ferries"\n'
        "=SUM(A1:A2) is a formula,,,,,,\n"
    ).encode()
    first, second = claims_from_file(data, "claims.csv")
    assert first.appearance == Appearance("https://example.org/p", "2026-11-20T10:00:00", "Mayor Jones")
    assert (first.assignee, first.due_on, first.tags) == ("Bo Lind", "2026-12-01", ("health", "ferries"))
    assert second.text == "=SUM(A1:A2) is a formula"  # kept as text; the CSV export guards formulas, not the queue
    jsonl = b'{"claim": "Tides follow the Moon", "claimant": "A blog", "tags": ["science", "sea"]}\n'
    [row] = claims_from_file(jsonl, "c.jsonl")
    assert (row.appearance.claimant, row.tags) == ("A blog", ("science", "sea"))
    assert [c.text for c in claims_from_text("one claim here\n\n  two claims here ")] == ["one claim here", "two claims here"]
    with pytest.raises(QueueError, match="claims.csv, claim 1"):
        claims_from_file(b"claim,tags\nA claim with too many tags," + b";".join(b"t%d" % i for i in range(30)) + b"\n", "claims.csv")
    with pytest.raises(QueueError, match="no 'claim' column"):
        claims_from_file(b"text2\nx\n", "claims.csv")


def test_a_comment_and_a_reason_are_refused_alike_when_empty_too_long_or_hiding_characters(stores: tuple[RunStore, ClaimQueue]) -> None:
    store, queue = stores
    claim = queue.add(NewClaim(CLAIM), BO)
    make_run(store, "r1")
    queue.link_run("r1", CLAIM, BO)
    for what, write, limit in (
        ("comment", lambda text: queue.comment(BO, text, claim_id=claim.id), MAX_COMMENT),
        ("reason", lambda text: queue.review(claim.id, ANA, "REFUTED", text), MAX_REASON),
    ):
        with pytest.raises(QueueError, match="empty; write something first" if what == "comment" else "say why"):
            write(" \n ")
        with pytest.raises(QueueError, match=f"the {what} has {limit + 1:,} characters; the limit is {limit:,}: shorten it"):
            write("x" * (limit + 1))
        with pytest.raises(QueueError, match=f"the {what} contains .* at position 6; remove it"):
            write("Hello\u202eworld")
        write("Two lines\n\tindented are fine.")
    assert queue.comments_on_claim(claim.id)[0].text == "Two lines\n\tindented are fine."
    assert queue.get(claim.id).review_reason == "Two lines\n\tindented are fine."  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text,kwargs,why",
    [
        ("\u200b\u200b\u200b", {}, "shows nothing"),
        ("ok\x00", {}, "U\\+0000"),
        ("a real remark", {"run_id": "no-such-run"}, "no-such-run"),
    ],
)
def test_a_comment_through_the_queue_itself_is_checked_as_the_page_checks_it(
    stores: tuple[RunStore, ClaimQueue], text: str, kwargs: dict[str, str], why: str
) -> None:
    _, queue = stores
    claim = queue.add(NewClaim(CLAIM), ANA)
    with pytest.raises(DebateDeskError, match=why):
        queue.comment(BO, text, claim_id=None if kwargs else claim.id, **kwargs)
    assert queue.comments_on_claim(claim.id) == []


def test_the_list_says_how_each_claim_s_newest_run_ended(stores: tuple[RunStore, ClaimQueue]) -> None:
    """A claim whose runs had all ended still read "checking" with an empty verdict: the verdict column was the editor's."""
    store, queue = stores
    ferries = queue.add(NewClaim(CLAIM), BO)
    moon = queue.add(NewClaim("The Moon landing was filmed in a studio"), BO)
    idle = queue.add(NewClaim("Trains are late more often in winter"), BO)
    make_run(store, "r1", label="SUPPORTS")
    queue.link_run("r1", CLAIM, BO)
    make_run(store, "r2", label="REFUTES")
    queue.link_run("r2", CLAIM, BO)  # the newer run
    store.create_run("r3", moon.text, "single", {"protocol": "single"})  # still running
    queue.link_run("r3", moon.text, BO)
    assert queue.last_runs([ferries, moon, idle]) == {ferries.id: "REFUTED", moon.id: "running"}
    override_verdict(store, "r2", "NOT ENOUGH INFO", "one study only", "Ana")
    store.finish("r3", "failed")
    assert queue.last_runs([ferries, moon, idle]) == {ferries.id: "NOT ENOUGH INFO", moon.id: "failed"}, (
        "the checker's word over the model's"
    )
    assert queue.last_runs([]) == {}


def test_a_batch_row_keeps_every_detail_that_reads_and_names_each_left_out(stores: tuple[RunStore, ClaimQueue]) -> None:
    """A batch file's row whose address did not read joined the queue with none of its details, and nobody was told."""
    from pipelines.newsroom.intake import details_of_item
    from pipelines.run.batch import parse_claims_file

    data = (
        "claim,url,claimant,due,tags\n"
        'The Great Wall is visible from space,javascript:alert(1),Mayor Jones,someday,"space, history"\n'
        f'"{CLAIM}",https://example.org/p,A blog,2026-12-01,health\n'
    ).encode()
    wall, ferries = parse_claims_file(data, "claims.csv")
    claim, left_out = details_of_item(wall)
    assert (claim.text, claim.appearance.url, claim.appearance.claimant, claim.due_on, claim.tags) == (
        "The Great Wall is visible from space", "", "Mayor Jones", "", ("space", "history")
    )  # fmt: skip
    assert len(left_out) == 2 and all(p.startswith("claim 1 (id '1'): ") for p in left_out)
    assert "web address" in left_out[0] and "'javascript:alert(1)'" in left_out[0] and "due date" in left_out[1]
    claim, left_out = details_of_item(ferries)
    assert left_out == [] and (claim.appearance.url, claim.due_on, claim.tags) == ("https://example.org/p", "2026-12-01", ("health",))
    store, queue = stores
    make_run(store, "r1", claim="The Great Wall is visible from space")
    joined = queue.link_run("r1", wall.claim, BO, details=details_of_item(wall)[0])
    assert (joined.appearance.claimant, joined.tags, joined.appearance.url) == ("Mayor Jones", ("space", "history"), "")

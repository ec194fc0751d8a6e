"""The desk's reviewed claims, what the Calibrate page refits on: History's overrides and the queue's reviews alike (issue 46:
the queue's reviews did not count), the latest for each claim, never an imported run's."""

from __future__ import annotations

from sqlalchemy import update

from pipelines.eval.calibrate import reviewed_claims
from pipelines.newsroom.queue import ClaimQueue, NewClaim
from pipelines.record.store import RunRow, RunStore
from pipelines.run.step_gate import override_verdict
from tests.pipelines.newsroom.test_queue import ANA, BO, make_run
from tests.stores import store_url  # noqa: F401  (the fixture)

FERRIES = "Masks reduce transmission of respiratory viruses on ferries"
TRAMS = "Masks reduce transmission of respiratory viruses on trams"
BUSES = "Masks reduce transmission of respiratory viruses on buses"


def test_an_editors_review_on_the_queue_counts_as_an_override_does(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    queue = ClaimQueue(store.engine)
    for run_id, claim in (("r-ferries", FERRIES), ("r-trams", TRAMS), ("r-buses", BUSES)):
        make_run(store, run_id, claim=claim, label="SUPPORTS")
        queue.link_run(run_id, claim, BO)
    ferries, trams, buses = (queue.claim_of_run(r) for r in ("r-ferries", "r-trams", "r-buses"))
    assert ferries and trams and buses

    queue.review(ferries.id, ANA, "REFUTED", "The operator's figures show no change.")  # the queue only: it counts now
    override_verdict(store, "r-trams", "SUPPORTED", "The tram study agrees.", "Ana Ruiz")  # History, then the queue, later
    queue.review(trams.id, ANA, "REFUTED", "A second study found the first miscounted.")
    queue.review(buses.id, ANA, "NOT ENOUGH INFO", "Nothing either way.")  # not a SUPPORTS/REFUTES label: not counted

    found = {c.claim: (c.label, c.run_id) for c in reviewed_claims(store)}
    assert found == {FERRIES: ("REFUTES", "r-ferries"), TRAMS: ("REFUTES", "r-trams")}


def test_a_review_resting_on_an_imported_run_does_not_count(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    queue = ClaimQueue(store.engine)
    make_run(store, "r-imported", claim=FERRIES)
    with store.engine.begin() as conn:
        conn.execute(update(RunRow).where(RunRow.id == "r-imported").values(origin="imported from their-desk.json"))
    claim = queue.add(NewClaim(FERRIES), BO)
    queue.link_run("r-imported", FERRIES, BO, claim_id=claim.id)
    queue.review(claim.id, ANA, "SUPPORTED", "The file says so.")
    assert reviewed_claims(store) == []

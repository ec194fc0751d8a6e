"""Comparing any two runs: claims worded differently, exhibits matched by their text, struck ones not counted."""

from __future__ import annotations

from pipelines.core.domain import Evidence, Verdict
from pipelines.core.events import CheckerStruckEvidence, EvidenceRetrieved, ModelCallCompleted, RunStarted, VerdictReached
from pipelines.record.compare import compare_runs
from pipelines.record.store import RunStore
from pipelines.run.step_gate import override_verdict
from tests.stores import store_url  # noqa: F401  (the fixture)

FERRY = "Masks cut spread on ferries by a third."
BUS = "Bus riders who wore masks fell ill as often as the rest."


def stored(store: RunStore, run_id: str, claim: str, items: list[Evidence], label: str, *, strike: str = "", calls: int = 1) -> None:
    store.create_run(run_id, claim, "single", {"protocol": "single"})
    store.append(run_id, RunStarted(run_id=run_id, claim=claim, protocol="single", config={"protocol": "single"}))
    for item in items:
        store.append(run_id, EvidenceRetrieved(agent="A", round=1, evidence=item))
    if strike:
        store.append(run_id, CheckerStruckEvidence(round=1, evidence_id=strike, reason="off topic", by="Ana"))
    for _ in range(calls):
        store.append(run_id, ModelCallCompleted(role="debater", model="fake", tokens_in=10, tokens_out=5, seconds=0.1))
    store.append(run_id, VerdictReached(verdict=Verdict(label=label, confidence=0.7, cited=[items[0].id])))
    store.finish(run_id, "completed")


def test_two_runs_of_differently_worded_claims_compare_by_exhibit_text(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    stored(
        store,
        "a",
        "Masks reduce spread on ferries",
        [Evidence(id="E1", source="corpus", text=FERRY), Evidence(id="E2", source="corpus", text=BUS)],
        "SUPPORTS",
    )
    stored(
        store, "b", "Face masks lower transmission on ferries",
        [Evidence(id="W7", source="web", text="  masks cut SPREAD on ferries by a third. "), Evidence(id="W8", source="web", text="Unrelated.")],
        "REFUTES", strike="W8", calls=3,
    )  # fmt: skip
    override_verdict(store, "b", "NOT ENOUGH INFO", "one study", "Ana")
    a, b = store.get_run("a"), store.get_run("b")
    assert a is not None and b is not None
    cmp = compare_runs(a, store.events("a"), b, store.events("b"))
    assert not cmp.same_wording and not cmp.same_verdict
    assert [(x.id, y.id) for x, y in cmp.both] == [("E1", "W7")]  # the same text, numbered each run's own way
    assert [e.id for e in cmp.left_only] == ["E2"] and cmp.right_only == ()  # W8 was struck: not used
    assert (cmp.left.verdict.common, cmp.right.verdict.common) == ("SUPPORTED", "NOT ENOUGH INFO")  # type: ignore[union-attr]
    assert (cmp.left.confidence, cmp.right.confidence) == (0.7, None)  # the checker's verdict has no model confidence
    assert (cmp.left.cost.calls, cmp.right.cost.calls) == (1, 3)
    assert cmp.left.cited == frozenset({"E1"})

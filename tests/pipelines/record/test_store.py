"""The run store on SQLite and on a real PostgreSQL server: events in order, totals, statuses, filters, journal (migrations: test_migrations.py)."""

from __future__ import annotations

import socket
import time

import pytest
from sqlalchemy import text

from pipelines.core.domain import Evidence, Verdict
from pipelines.core.events import (
    BudgetStop,
    EvidenceRetrieved,
    ModelCallCompleted,
    RunInterrupted,
    RunResumed,
    RunStarted,
    StageStarted,
    VerdictOverridden,
    VerdictReached,
)
from pipelines.record.store import RunFilter, RunStore
from tests.stores import store_url  # noqa: F401  (the fixture)


def started(run_id: str, claim: str = "Masks work") -> RunStarted:
    return RunStarted(run_id=run_id, claim=claim, protocol="single", config={"protocol": "single"})


def make_run(
    store: RunStore, run_id: str, claim: str, *, protocol: str = "single", verdict: str | None = None, status: str = "completed"
) -> None:
    store.create_run(run_id, claim, protocol, {"protocol": protocol})
    store.append(run_id, started(run_id, claim))
    if verdict:
        store.append(run_id, VerdictReached(verdict=Verdict(label=verdict)))
    if status != "running":
        store.finish(run_id, status)  # type: ignore[arg-type]


def test_events_come_back_in_order_with_per_run_totals(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    store.create_run("r1", "Masks work", "single", {"protocol": "single", "debater": {"backend": "fake"}})
    events = [
        started("r1"),
        StageStarted(stage="queries", detail="writing 1 query"),
        ModelCallCompleted(role="debater", model="fake", tokens_in=100, tokens_out=20, seconds=0.5),
        EvidenceRetrieved(agent="A", round=1, evidence=Evidence(id="E1", source="web", text="t", url="https://example.org/a")),
        ModelCallCompleted(role="judge", model="fake", tokens_in=50, tokens_out=10, seconds=0.25),
        VerdictReached(verdict=Verdict(label="SUPPORTS", confidence=0.8, decided_by="judge")),
    ]
    assert [store.append("r1", e) for e in events] == [1, 2, 3, 4, 5, 6]
    store.finish("r1", "completed")
    assert store.events("r1") == events
    run = store.get_run("r1")
    assert run is not None
    assert (run.status, run.verdict, run.confidence, run.cost.calls, run.cost.tokens_in, run.cost.tokens_out) == (
        "completed",
        "SUPPORTS",
        0.8,
        2,
        150,
        30,
    )
    assert run.cost.model_seconds == pytest.approx(0.75) and run.event_count == 6 and run.app_version and run.finished_at
    assert run.config["debater"] == {"backend": "fake"}
    assert run.decided_by == "judge", "who decided is on the row (the sidebar's typical time tells settled claims apart by it)"


def test_events_appended_together_keep_their_order_and_totals(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    store.create_run("r1", "Masks work", "single", {"protocol": "single"})
    first = [started("r1"), ModelCallCompleted(role="debater", model="fake", tokens_in=100, tokens_out=20, seconds=0.5)]
    rest = [
        StageStarted(stage="answer"),
        ModelCallCompleted(role="judge", model="fake", tokens_in=50, tokens_out=10, seconds=0.25),
        VerdictReached(verdict=Verdict(label="REFUTES", confidence=0.6)),
    ]
    assert store.append_many("r1", first) == 2
    assert store.append_many("r1", []) == 2
    assert store.append_many("r1", rest) == 5
    assert store.append("r1", StageStarted(stage="after")) == 6
    assert store.events("r1") == [*first, *rest, StageStarted(stage="after", at=store.events("r1")[-1].at)]
    run = store.get_run("r1")
    assert run is not None
    assert (run.verdict, run.confidence, run.cost.calls, run.cost.tokens_in, run.cost.tokens_out, run.event_count) == (
        "REFUTES",
        0.6,
        2,
        150,
        30,
        6,
    )
    assert run.cost.model_seconds == pytest.approx(0.75)


def test_a_checker_override_is_the_final_verdict_and_the_models_stays(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    make_run(store, "r1", "Masks work", verdict="SUPPORTS")
    store.append("r1", VerdictOverridden(model_verdict=Verdict(label="SUPPORTS"), label="REFUTES", note="retracted study", by="Ana"))
    run = store.get_run("r1")
    assert run is not None and run.verdict == "SUPPORTS" and run.checker_verdict == "REFUTES" and run.final_verdict == "REFUTES"
    assert [r.id for r in store.list_runs(where=RunFilter(verdicts=("REFUTES",)))] == ["r1"]
    assert store.list_runs(where=RunFilter(verdicts=("SUPPORTS",))) == []


def test_runs_filter_by_claim_verdict_protocol_status_and_date(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    make_run(store, "a", "Masks reduce transmission", verdict="SUPPORTS")
    make_run(store, "b", "Vaccines cause 100% of autism_cases", protocol="toolmad", verdict="REFUTES")
    make_run(store, "c", "The Moon landing was staged", status="failed")
    make_run(store, "d", "masks are useless", status="running")
    with store.engine.begin() as conn:  # "a" ran a week ago
        conn.execute(text("UPDATE runs SET created_at = :t WHERE id = 'a'"), {"t": time.time() - 7 * 86400})

    def ids(**kw: object) -> list[str]:
        return sorted(r.id for r in store.list_runs(where=RunFilter(**kw)))  # type: ignore[arg-type]

    assert ids() == ["a", "b", "c", "d"]
    assert ids(claim="MASKS") == ["a", "d"]
    assert ids(claim="100%") == ["b"] and ids(claim="%") == ["b"] and ids(claim="_cases") == ["b"]  # wildcards are literal
    assert ids(verdicts=("SUPPORTS", "REFUTES")) == ["a", "b"]
    assert ids(verdicts=("SUPPORTED",)) == ["a"] and ids(verdicts=("REFUTED",)) == ["b"], "the one vocabulary finds each protocol's word"
    assert ids(protocols=("toolmad",)) == ["b"]
    assert ids(statuses=("failed", "running")) == ["c", "d"]
    assert ids(since=time.time() - 86400) == ["b", "c", "d"]
    assert ids(until=time.time() - 86400) == ["a"]
    assert ids(claim="masks", statuses=("completed",)) == ["a"]
    assert store.list_runs()[0].id in {"b", "c", "d"}, "newest first"
    facets = store.facets()
    assert facets["verdicts"] == ["SUPPORTED", "REFUTED"] and facets["protocols"] == ["single", "toolmad"]
    assert facets["statuses"] == ["completed", "failed", "running"]
    assert [r.id for r in store.runs_with_claim("Masks reduce transmission")] == ["a"]


def test_a_runs_stop_reason_comes_from_the_events_fields_not_from_its_message(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    make_run(store, "r1", "Masks work", status="running")
    stop = BudgetStop(scope="batch", limit="calls", used=9, allowed=9)
    store.append("r1", RunInterrupted(reason="the desk's limit; see Settings; or ask an editor", budget=stop))
    assert store.get_run("r1").stop_reason == "stopped by the batch's budget: 9 of 9 model calls"  # type: ignore[union-attr]
    store.append("r1", RunInterrupted(reason="the store went away"))  # no limit, no pause: the stop stands as it was
    assert store.get_run("r1").stop_reason == "stopped by the batch's budget: 9 of 9 model calls"  # type: ignore[union-attr]
    store.append("r1", RunResumed(attempt=2, replayed=3))
    assert store.get_run("r1").stop_reason is None  # type: ignore[union-attr]
    store.append("r1", RunInterrupted(reason="nobody answered", paused_round=2))
    assert store.get_run("r1").stop_reason == "paused at round 2, free to take over"  # type: ignore[union-attr]


def test_reconcile_marks_orphaned_and_silent_runs_interrupted(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    for run_id in ("mine-active", "mine-orphan", "dead-pid", "silent", "alive-elsewhere"):
        make_run(store, run_id, "claim", status="running")
    store.claim_run("mine-active")
    host = socket.gethostname()
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE runs SET owner = :o WHERE id = 'dead-pid'"), {"o": f"{host}:999999:gone"})
        conn.execute(text("UPDATE runs SET owner = 'other-host:1:x', heartbeat_at = :t WHERE id = 'silent'"), {"t": time.time() - 3600})
        conn.execute(text("UPDATE runs SET owner = 'other-host:1:x', heartbeat_at = :t WHERE id = 'alive-elsewhere'"), {"t": time.time()})
    try:
        assert sorted(store.reconcile()) == ["dead-pid", "mine-orphan", "silent"]
    finally:
        store.release_run("mine-active")
    statuses = {r.id: r.status for r in store.list_runs()}
    assert statuses == {
        "mine-active": "running",
        "alive-elsewhere": "running",
        "mine-orphan": "interrupted",
        "dead-pid": "interrupted",
        "silent": "interrupted",
    }
    assert store.get_run("silent").resumable  # type: ignore[union-attr]


def test_reopen_counts_attempts(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    make_run(store, "r", "claim", status="failed")
    assert store.reopen("r") == 2
    run = store.get_run("r")
    assert run is not None and run.status == "running" and run.finished_at is None and run.attempts == 2


def test_journal_keeps_answers_per_key_in_order(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    make_run(store, "r", "claim")
    for payload in ("first", "second"):
        store.journal_put("r", "llm", "k1", payload)
    store.journal_put("r", "web", "k2", '{"results": []}')
    assert store.journal("r") == {("llm", "k1"): ["first", "second"], ("web", "k2"): ['{"results": []}']}


def test_activity_changes_whenever_a_run_starts_ends_or_changes_state(store_url: str) -> None:  # noqa: F811
    """What the protocol picker's wall-time caption is kept by: one small query that moves with every run's life."""
    store = RunStore(store_url)
    seen = [store.activity()]
    assert seen[0] == ()
    make_run(store, "a", "claim", status="running")
    seen.append(store.activity())
    store.append("a", VerdictReached(verdict=Verdict(label="SUPPORTS")))
    assert store.activity() == seen[-1], "an event that changes no run's state keeps it"
    store.finish("a", "completed")
    seen.append(store.activity())
    make_run(store, "b", "claim", status="failed")
    seen.append(store.activity())
    store.reopen("b")
    seen.append(store.activity())
    with store.engine.begin() as conn:  # b's process died: reconcile marks it interrupted, its end its last heartbeat
        conn.execute(text("UPDATE runs SET owner = 'other-host:1:x', heartbeat_at = :t WHERE id = 'b'"), {"t": time.time() - 3600})
    assert store.reconcile() == ["b"]
    seen.append(store.activity())
    assert len(set(seen)) == len(seen), "each step gave a new value"
    assert {status: n for status, n, _, _ in seen[-1]} == {"completed": 1, "interrupted": 1}

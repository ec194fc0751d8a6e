"""Spend limits: a run stops cleanly between model calls at its limit, keeps its record and resumes; a batch stops starting claims."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pipelines.core.config import BudgetConfig, parse_prices
from pipelines.core.events import Event, ModelCallCompleted, RunInterrupted, RunResumed, VerdictReached
from pipelines.record.store import RunStore
from pipelines.run.batch import parse_claims_text, run_batch
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.llm.limits import Budget, BudgetExhaustedError
from pipelines.run.runner import resume_run, stream_run
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.fakes import fake_config, make_services, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"


@pytest.fixture
def fresh(tmp_path: Path, demo_data_dir: Path, embedder: Embedder) -> Services:
    services = make_services(demo_data_dir, embedder)
    services.store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    return services


def calls(events: list[Event]) -> list[ModelCallCompleted]:
    return [e for e in events if isinstance(e, ModelCallCompleted) and not e.cached]


def test_a_run_stops_at_its_call_limit_keeps_its_events_and_resumes_when_the_limit_is_raised(fresh: Services) -> None:
    unlimited = list(stream_run(CLAIM, fake_config(protocol="desk"), fresh))
    assert isinstance(unlimited[-1], VerdictReached) and len(calls(unlimited)) > 3

    limited = with_settings(fake_config(protocol="desk"), "budget", max_calls=3)
    model = FakeChatModel()
    fresh.chat_override = model
    events = list(stream_run(CLAIM, limited, fresh))
    run_id = events[0].run_id  # type: ignore[attr-defined]
    stop = events[-1]
    assert isinstance(stop, RunInterrupted) and stop.budget is not None
    assert (stop.budget.scope, stop.budget.limit, stop.budget.used, stop.budget.allowed) == ("run", "calls", 3, 3)
    assert stop.reason.startswith("stopped by budget: 3 of 3 model calls")
    assert len(calls(events)) == 3 and model.calls == 3, "the call over the limit was never made"
    assert not any(isinstance(e, VerdictReached) for e in events)
    store = fresh.store
    assert store is not None
    assert store.events(run_id) == events, "every event so far is stored, in order"
    row = store.get_run(run_id)
    assert row is not None and row.status == "interrupted" and row.resumable
    assert row.stop_reason == "stopped by budget: 3 of 3 model calls" and row.cost.calls == 3

    # Resumed from a session (or the command line) that sets no limit: the limit stored with the run holds (issue 27),
    # and a checker asking for more gets no more. It stops again at once, making no call.
    for asked in (None, BudgetConfig(max_calls=100)):
        again = FakeChatModel()
        fresh.chat_override = again
        stopped_again = list(resume_run(run_id, fresh, secrets_from=fake_config(), limits=asked).stream())
        assert again.calls == 0 and isinstance(stopped_again[-1], RunInterrupted) and stopped_again[-1].budget is not None
        assert stopped_again[-1].budget.allowed == 3

    # Raised by someone who may change the desk's settings: it goes on from where it stopped; the calls made before are
    # answered from the journal.
    raised = with_settings(limited, "budget", max_calls=100)
    finish = FakeChatModel()
    fresh.chat_override = finish
    list(resume_run(run_id, fresh, secrets_from=raised, by="ana", limits=raised.budget, may_raise=True).stream())
    record = store.events(run_id)
    assert isinstance(record[-1], VerdictReached) and record[-1].verdict.label == unlimited[-1].verdict.label  # type: ignore[attr-defined]
    assert finish.calls == len(calls(unlimited)) - 3
    assert len(calls(record)) == len(calls(unlimited)), "every call once in the whole record"
    assert [e.by for e in record if isinstance(e, RunResumed)][-1] == "ana"
    done = store.get_run(run_id)
    assert done is not None and done.status == "completed" and done.stop_reason is None


def test_token_and_money_limits_stop_a_run_between_calls(fresh: Services) -> None:
    by_tokens = list(stream_run(CLAIM, with_settings(fake_config(protocol="single"), "budget", max_tokens=10), fresh))
    stop = by_tokens[-1]
    assert isinstance(stop, RunInterrupted) and stop.budget is not None and stop.budget.limit == "tokens"
    assert len(calls(by_tokens)) == 1 and stop.budget.used >= 10

    priced = with_settings(fake_config(protocol="single"), "budget", max_cost=0.0001, prices=["fake=1.0"], default_price=0.0)
    by_money = list(stream_run(CLAIM, priced, fresh))
    stop = by_money[-1]
    assert isinstance(stop, RunInterrupted) and stop.budget is not None and stop.budget.limit == "cost"
    assert "spent" in stop.reason and len(calls(by_money)) == 1

    free = with_settings(fake_config(protocol="single"), "budget", max_cost=0.0001, prices=["fake=0"])
    assert isinstance(list(stream_run(CLAIM, free, fresh))[-1], VerdictReached), "a model priced at 0 costs nothing"


def test_a_batch_stops_starting_claims_at_its_limit_and_says_so(fresh: Services) -> None:
    claims = [f"{CLAIM} (case {i})" for i in range(6)]
    config = with_settings(fake_config(protocol="single"), "budget", batch_max_calls=9)
    outcomes = run_batch(parse_claims_text("\n".join(claims)), config, fresh, concurrency=1)
    statuses = [o.status for o in outcomes]
    # single makes 4 calls a claim (query, answer, the belief in 2 orders): two claims complete, the third stops at the 9th call, the rest never start
    assert statuses == ["completed", "completed", "stopped", "skipped", "skipped", "skipped"]
    assert outcomes[2].error.startswith("stopped by the batch's budget: 9 of 9 model calls")
    assert all(o.error == "not started: stopped by the batch's budget: 9 of 9 model calls" and o.run_id is None for o in outcomes[3:])
    assert sum(o.cost.calls for o in outcomes) == 9
    stopped = fresh.store.get_run(outcomes[2].run_id or "")  # type: ignore[union-attr]
    assert stopped is not None and stopped.status == "interrupted" and stopped.stop_reason


def test_a_budget_counts_calls_before_they_go_and_its_parent_too() -> None:
    batch = Budget(calls=3, scope="batch")
    run = Budget(calls=10, tokens=100, parent=batch)
    for _ in range(3):
        run.start_call()
    with pytest.raises(BudgetExhaustedError, match="stopped by the batch's budget: 3 of 3 model calls"):
        run.start_call()
    assert run.used["calls"] == 3
    run.charge("m", 150)
    assert run.reached() is not None and run.reached().limit == "tokens"  # type: ignore[union-attr]


def test_prices_are_model_equals_price_pairs_and_a_bad_one_says_which() -> None:
    assert parse_prices("gpt-4o=0.01, gpt-4o-mini = 0.0006") == {"gpt-4o": 0.01, "gpt-4o-mini": 0.0006}
    assert BudgetConfig(prices="a=2", default_price=0.5).price_of("b") == 0.5  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'gpt-4o' is not model=price"):
        BudgetConfig(prices="gpt-4o")  # type: ignore[arg-type]


class _YieldingLock:
    """A lock that hands the processor to another thread each time it is released: the worst interleaving, on purpose."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> _YieldingLock:
        self._lock.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()
        time.sleep(0.0001)


def test_no_call_goes_past_a_limit_however_the_threads_interleave() -> None:
    # Issue 30: start_call checked, released its lock, then counted; sixteen runs of one batch got past its limit together.
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _trial in range(20):
            batch = Budget(calls=4, scope="batch")
            batch._lock = _YieldingLock()  # type: ignore[assignment]
            made: list[int] = []
            start = threading.Barrier(16)

            def one_run(batch: Budget = batch, made: list[int] = made, start: threading.Barrier = start) -> None:
                run = Budget(calls=2, parent=batch)
                run._lock = _YieldingLock()  # type: ignore[assignment]
                start.wait()
                for _ in range(3):
                    try:
                        run.start_call()
                    except BudgetExhaustedError:
                        return
                    made.append(1)

            threads = [threading.Thread(target=one_run) for _ in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(made) == 4 and batch.used["calls"] == 4, f"{len(made)} calls made under a batch limit of 4"
    finally:
        sys.setswitchinterval(old_interval)


class _CountingFake(FakeChatModel):
    """Counts every request as it reaches the endpoint, then answers after a delay that varies, so parallel calls overlap."""

    reached: int = 0

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.reached += 1
        await asyncio.sleep(0.02 * (self.reached % 3))
        return await super()._agenerate(messages, stop, run_manager, **kwargs)

    async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.reached += 1
        await asyncio.sleep(0.02 * (self.reached % 3))
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk


@pytest.mark.parametrize(
    ("protocol", "limit"), [("toolmad", 5), ("proclaim", 5), ("radar", 5)]
)  # radar reads its belief after each stage now: 5 cuts a parallel call
def test_every_request_that_reached_the_endpoint_is_recorded_when_a_parallel_call_hits_the_limit(
    fresh: Services, protocol: str, limit: int
) -> None:
    # Issue 27: the call over the limit stopped the run while others were on their way; those were cancelled unrecorded.
    model = _CountingFake()
    fresh.chat_override = model
    events = list(stream_run(CLAIM, with_settings(fake_config(protocol=protocol), "budget", max_calls=limit), fresh))
    assert isinstance(events[-1], RunInterrupted) and events[-1].budget is not None
    store = fresh.store
    assert store is not None
    recorded = calls(store.events(events[0].run_id))  # type: ignore[attr-defined]
    assert model.reached == limit and len(recorded) == limit, f"{model.reached} requests reached the endpoint, {len(recorded)} recorded"
    cancelled = [c for c in recorded if c.cancelled]
    assert cancelled and all(c.tokens_in > 0 for c in cancelled), "a cancelled call's prompt was read: its tokens are estimated"
    row = store.get_run(events[0].run_id)  # type: ignore[attr-defined]
    assert row is not None and row.cost.calls == limit


def test_money_is_recorded_with_every_call_and_shown_wherever_tokens_are_when_prices_are_set(fresh: Services) -> None:
    from pipelines.record.digest import digest
    from pipelines.record.export import export_run

    priced = with_settings(fake_config(protocol="single"), "budget", prices=["fake=0.5"])
    events = list(stream_run(CLAIM, priced, fresh))
    made = calls(events)
    assert made and all(c.cost == pytest.approx((c.tokens_in + c.tokens_out) / 1000 * 0.5) for c in made)
    run = digest(events)
    assert run.cost.priced and run.cost.spent == pytest.approx(sum(c.cost or 0 for c in made))
    store = fresh.store
    assert store is not None
    summary = store.get_run(run.run_id)
    assert summary is not None and summary.cost.priced and summary.cost.spent == pytest.approx(run.cost.spent)
    assert f"{run.cost.spent:.4g} spent" in export_run(summary, store.events(run.run_id), "md")
    header, row = export_run(summary, store.events(run.run_id), "csv").splitlines()[:2]
    assert dict(zip(header.split(","), row.split(","), strict=False))["spent"] == f"{round(run.cost.spent, 6)}"

    unpriced = digest(list(stream_run(CLAIM, fake_config(protocol="single"), fresh)))
    assert not unpriced.cost.priced and "spent" not in unpriced.cost.describe(), "no prices: money unknown, not shown as zero"

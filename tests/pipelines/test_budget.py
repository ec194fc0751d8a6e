"""Spend limits: a run stops cleanly between model calls at its limit, keeps its record and resumes; a batch stops starting claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.config import BudgetConfig, parse_prices
from pipelines.events import Event, ModelCallCompleted, RunInterrupted, RunResumed, VerdictReached
from pipelines.llm.fake import FakeChatModel
from pipelines.llm.limits import Budget, BudgetExhaustedError
from pipelines.record.store import RunStore
from pipelines.run.batch import parse_claims_text, run_batch
from pipelines.run.runner import resume_run, stream_run
from pipelines.run.services import Services
from pipelines.tools.embeddings import Embedder
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

    # Resumed under the same limit: it stops again at once, making no call.
    again = FakeChatModel()
    fresh.chat_override = again
    stopped_again = list(resume_run(run_id, fresh, secrets_from=limited).stream())
    assert again.calls == 0 and isinstance(stopped_again[-1], RunInterrupted) and stopped_again[-1].budget is not None

    # Raised: it goes on from where it stopped; the calls made before are answered from the journal.
    raised = with_settings(limited, "budget", max_calls=100)
    finish = FakeChatModel()
    fresh.chat_override = finish
    list(resume_run(run_id, fresh, secrets_from=raised, by="ana").stream())
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

    free = with_settings(fake_config(protocol="single"), "budget", max_cost=0.0001, prices=["some-other-model=1.0"])
    assert isinstance(list(stream_run(CLAIM, free, fresh))[-1], VerdictReached), "an unpriced model costs the default price, 0"


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

"""Batch work on worker processes (pipelines/run/workers.py): procrastinate's queue in the desk's PostgreSQL.

Every test here but the SQLite one needs PostgreSQL (`.ci/run` starts one; DEBATEDESK_TEST_POSTGRES_URL names it). The first starts three
real ``python -m pipelines worker`` processes and SIGKILLs one while it runs a claim; the others drain the queue in
this process with procrastinate's own worker (``wait=False``), as a worker process does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from pipelines.core.errors import DebateDeskError
from pipelines.record.store import RunStore
from pipelines.run.batch import parse_claims_text
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from pipelines.run.workers import (
    ATTEMPTS,
    CLAIMS_QUEUE,
    batch_progress,
    cancel_batch,
    ensure_schema,
    failure_reasons,
    list_batches,
    run_job,
    submit_batch,
    submit_claims,
)
from tests.fakes import fake_config, make_services
from tests.stores import POSTGRES_ENV, postgres_database
from tests.workers import drain

ROOT = Path(__file__).resolve().parents[3]
CLAIMS = ["Masks reduce transmission of respiratory viruses", "Vaccines cause autism", "The Moon landings were staged"]


@pytest.fixture
def desk(demo_data_dir: Path, embedder: Embedder) -> Iterator[Services]:
    """Services over the demo corpus whose run store (and queue) is a fresh database on the test PostgreSQL."""
    if not os.environ.get(POSTGRES_ENV):
        pytest.skip(f"no PostgreSQL server: set {POSTGRES_ENV} (`.ci/run` starts one)")
    with postgres_database() as url:
        services = make_services(demo_data_dir, embedder)
        services.store = RunStore(url)
        yield services
        services.store.engine.dispose()


def test_a_poison_claim_is_failed_with_its_reason_after_bounded_retries_and_the_rest_go_on(desk: Services) -> None:
    desk.chat_override = FakeChatModel(fail_when="EXPLODE")
    items = parse_claims_text("\n".join([CLAIMS[0], f"{CLAIMS[1]} EXPLODE", CLAIMS[2]]))
    submitted = submit_batch(items, fake_config(protocol="single"), desk, by="ana")
    drain(desk, submitted.queue)

    progress = failure_reasons(desk, batch_progress(desk, submitted.queue))
    states = {c.id: c for c in progress.claims}
    assert [states[i].state for i in ("1", "2", "3")] == ["completed", "failed", "completed"]
    assert "told to fail on 'EXPLODE'" in states["2"].error
    assert states["2"].attempts == ATTEMPTS, "retried a bounded number of times, then left failed"
    assert desk.store is not None
    run = desk.store.get_run(states["2"].run_id)
    assert run is not None and run.status == "failed" and run.attempts == ATTEMPTS, "each retry resumed the same run"
    assert run.started_by == "ana"


def test_a_completed_claim_is_never_run_again(desk: Services) -> None:
    items = parse_claims_text(CLAIMS[0])
    submitted = submit_batch(items, fake_config(protocol="single"), desk)
    drain(desk, submitted.queue)
    claim = batch_progress(desk, submitted.queue).claims[0]
    assert claim.state == "completed"
    config = fake_config(protocol="single").snapshot()
    assert run_job(items[0], claim.run_id, config, desk) is None, "a job delivered twice finds its run completed and does nothing"
    assert desk.store is not None
    with desk.store.engine.connect() as conn:
        started = conn.scalar(text("SELECT count(*) FROM events WHERE run_id = :r AND type = 'RunStarted'"), {"r": claim.run_id})
    assert started == 1


def test_cancel_stops_the_claims_not_started(desk: Services) -> None:
    items = parse_claims_text("\n".join(f"{CLAIMS[0]} (case {i})" for i in range(5)))
    submitted = submit_batch(items, fake_config(protocol="single"), desk)
    assert cancel_batch(desk, submitted.queue) == 5
    drain(desk, submitted.queue)
    progress = batch_progress(desk, submitted.queue)
    assert progress.count("cancelled") == 5 and progress.finished
    assert desk.store is not None and desk.store.list_runs() == [], "nothing ran"


def test_a_bad_claim_refuses_the_whole_batch_and_submits_nothing(desk: Services) -> None:
    items = parse_claims_text("\n".join([CLAIMS[0], "x" * 3000]))
    with pytest.raises(DebateDeskError, match="nothing was submitted"):
        submit_batch(items, fake_config(protocol="single"), desk)
    assert desk.store is not None
    ensure_schema(desk.store)
    with desk.store.engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM procrastinate_jobs")) == 0


def test_an_unreachable_database_at_submit_is_said_plainly_and_nothing_is_submitted(desk: Services) -> None:
    assert desk.store is not None
    url = desk.store.url
    items = parse_claims_text("\n".join(CLAIMS))
    desk.store.engine.dispose()
    admin_url = os.environ[POSTGRES_ENV]
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    name = make_url(url).database
    admin = create_engine(make_url(admin_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:  # the database goes away (as a server that stopped: connections refused)
        conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
        conn.execute(text(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"))
    try:
        with pytest.raises(DebateDeskError) as caught:
            submit_batch(items, fake_config(protocol="single"), desk)
        message = str(caught.value)
        assert "SELECT" not in message and "INSERT" not in message and "Traceback" not in message
        assert "127.0.0.1" in message
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
        admin.dispose()
    ensure_schema(desk.store)
    with desk.store.engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM procrastinate_jobs")) == 0, "nothing half-submitted"


def test_a_desk_on_sqlite_is_told_to_run_its_batch_in_the_app(services: Services) -> None:
    with pytest.raises(DebateDeskError, match="needs the desk's PostgreSQL"):
        submit_batch(parse_claims_text(CLAIMS[0]), fake_config(protocol="single"), services)


def test_three_worker_processes_a_killed_worker_nothing_lost_nothing_run_twice(desk: Services, demo_data_dir: Path) -> None:
    """Progress read in this process while three other processes run the claims; one SIGKILLed mid-claim."""
    assert desk.store is not None
    n = 12
    items = parse_claims_text("\n".join(f"{CLAIMS[i % 3]} (case {i})" for i in range(n)))
    ensure_schema(desk.store)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATEDESK_")}
    env.update(
        DEBATEDESK_DATABASE_URL=desk.store.url,
        DEBATEDESK_DATA_DIR=str(demo_data_dir),
        DEBATEDESK_FAKE_LATENCY_S="0.3",
        DEBATEDESK_DEBATER__BACKEND="fake",
        DEBATEDESK_JUDGE__BACKEND="fake",
        DEBATEDESK_SCORER__BACKEND="fake",
    )
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "pipelines", "worker", "--concurrency", "1"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(3)
    ]
    try:
        deadline = time.monotonic() + 180
        while True:  # the three are up (procrastinate's own table of workers)
            with desk.store.engine.connect() as conn:
                if int(conn.scalar(text("SELECT count(*) FROM procrastinate_workers")) or 0) >= 3:
                    break
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.5)
        submitted = submit_batch(items, fake_config(protocol="single"), desk)
        killed = None
        seen_workers: set[str] = set()
        deadline = time.monotonic() + 240
        while not (progress := batch_progress(desk, submitted.queue)).finished:
            assert time.monotonic() < deadline, f"not finished: {[(c.id, c.state) for c in progress.claims]}"
            seen_workers |= {c.worker for c in progress.claims if c.state == "running" and c.worker}
            running = [c for c in progress.claims if c.state == "running" and c.worker]
            if killed is None and progress.count("completed") >= 2 and running:
                pid = int(running[0].worker.split(":")[1])
                victim = next(w for w in workers if w.pid == pid)
                victim.send_signal(signal.SIGKILL)
                victim.wait()
                killed = running[0]
            time.sleep(0.3)
    finally:
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                w.kill()

    assert killed is not None, "a worker was killed while it ran a claim"
    assert len(seen_workers) >= 2, "the claims were spread over the workers"
    assert progress.count("completed") == n, "nothing lost"
    with desk.store.engine.connect() as conn:
        runs = conn.scalar(text("SELECT count(*) FROM runs"))
        twice = conn.scalar(
            text("SELECT count(*) FROM (SELECT run_id FROM events WHERE type = 'RunStarted' GROUP BY run_id HAVING count(*) > 1) AS d")
        )
        resumed = conn.scalar(text("SELECT count(*) FROM events WHERE run_id = :r AND type = 'RunResumed'"), {"r": killed.run_id})
    assert runs == n and twice == 0, "no claim run twice from scratch"
    assert resumed == 1, "the killed worker's claim was taken over and resumed from its journal"


def test_the_claims_queue_submits_its_claims_to_the_workers_too(desk: Services) -> None:
    """What the claims queue's "check these" calls: its claims on the desk's ``claims`` queue, watched like a batch."""
    submitted = submit_claims([("q-7", CLAIMS[0]), ("q-9", CLAIMS[2])], fake_config(protocol="single"), desk, by="ana")
    assert submitted.queue == CLAIMS_QUEUE and submitted.jobs == 2
    drain(desk, submitted.queue)
    progress = batch_progress(desk, CLAIMS_QUEUE)
    assert [(c.id, c.state) for c in progress.claims] == [("q-7", "completed"), ("q-9", "completed")]
    assert CLAIMS_QUEUE in list_batches(desk)

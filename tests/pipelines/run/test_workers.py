"""Batch work on worker processes (pipelines/run/workers.py): procrastinate's queue in the desk's PostgreSQL.

Every test here but the SQLite one needs PostgreSQL (`.ci/run` starts one; DEBATEDESK_TEST_POSTGRES_URL names it). The first starts three
real ``python -m pipelines worker`` processes and SIGKILLs one while it runs a claim; the others drain the queue in
this process with procrastinate's own worker (``wait=False``), as a worker process does.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text

from pipelines.core.config import ROLES, RunConfig
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import ModelCallCompleted
from pipelines.record import event_writer
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
from tests.stores import POSTGRES_DIR_ENV, POSTGRES_ENV, pg_ctl, postgres_database
from tests.workers import drain, worker_processes

ROOT = Path(__file__).resolve().parents[3]
CLAIMS = ["Masks reduce transmission of respiratory viruses", "Vaccines cause autism", "The Moon landings were staged"]


def offline() -> RunConfig:
    """The claims' settings for worker processes: the fake backend, protocol single, no web search (a test never goes online)."""
    return fake_config(protocol="single").with_overrides(no_web=True)


@pytest.fixture
def desk(demo_data_dir: Path, embedder: Embedder, tmp_path: Path) -> Iterator[Services]:
    """Services over a copy of the demo corpus's data folder (workers are killed here: never mid-write in the session's
    shared folder, whose response cache a kill once left malformed for the tests after) whose run store (and queue) is a
    fresh database on the test PostgreSQL."""
    if not os.environ.get(POSTGRES_ENV):
        pytest.skip(f"no PostgreSQL server: set {POSTGRES_ENV} (`.ci/run` starts one)")
    data_dir = tmp_path / "desk-data"
    shutil.copytree(demo_data_dir, data_dir)
    with postgres_database() as url:
        services = make_services(data_dir, embedder)
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


@contextmanager
def unreachable(desk: Services) -> Iterator[None]:
    """The desk's database refuses every connection (as a server that stopped) until the block ends."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    assert desk.store is not None
    desk.store.engine.dispose()
    name = make_url(desk.store.url).database
    admin = create_engine(make_url(os.environ[POSTGRES_ENV]), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
        conn.execute(text(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"))
    try:
        yield
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
        admin.dispose()


def test_an_unreachable_database_at_submit_is_said_plainly_and_nothing_is_submitted(desk: Services) -> None:
    assert desk.store is not None
    items = parse_claims_text("\n".join(CLAIMS))
    with unreachable(desk), pytest.raises(DebateDeskError) as caught:
        submit_batch(items, fake_config(protocol="single"), desk)
    message = str(caught.value)
    assert "SELECT" not in message and "INSERT" not in message and "Traceback" not in message
    assert "127.0.0.1" in message
    ensure_schema(desk.store)
    with desk.store.engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM procrastinate_jobs")) == 0, "nothing half-submitted"


def test_the_queue_away_while_a_page_watches_is_said_plainly(desk: Services) -> None:
    """The Batch page and the claims queue watch through the queue itself: a database away there is one plain line too."""
    submitted = submit_claims([("q-1", CLAIMS[0])], fake_config(protocol="single"), desk)
    for watch in (lambda: list_batches(desk), lambda: batch_progress(desk, CLAIMS_QUEUE, submitted.batch_id)):
        with unreachable(desk), pytest.raises(DebateDeskError) as caught:
            watch()
        message = str(caught.value)
        assert "127.0.0.1" in message and "unreachable" in message and "could not be read" in message
        assert "SELECT" not in message and "procrastinate" not in message and "Traceback" not in message


def test_a_desk_on_sqlite_is_told_to_run_its_batch_in_the_app(services: Services) -> None:
    with pytest.raises(DebateDeskError, match="needs the desk's PostgreSQL"):
        submit_batch(parse_claims_text(CLAIMS[0]), fake_config(protocol="single"), services)


def test_three_worker_processes_a_killed_worker_nothing_lost_nothing_run_twice(desk: Services) -> None:
    """Progress read in this process while three other processes run the claims; one SIGKILLed mid-claim."""
    assert desk.store is not None
    n = 12
    items = parse_claims_text("\n".join(f"{CLAIMS[i % 3]} (case {i})" for i in range(n)))
    with worker_processes(desk.store, desk.settings.data_dir, 3) as workers:
        submitted = submit_batch(items, offline(), desk)
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


def test_only_a_person_the_desk_lets_run_submits_claims_and_a_refusal_submits_nothing(desk: Services, tmp_path: Path) -> None:
    """The role is checked where the claims are submitted, as the users file says now: someone removed from it submits nothing."""
    from pipelines.newsroom.access.roles import NotAllowedError, Person, UsersFileRoles
    from pipelines.newsroom.access.users import UsersFile
    from tests.fakes import users_file

    path = users_file(tmp_path / "users.toml")
    bo = Person.signed_in(UsersFile.load(path).user("bo"), UsersFileRoles(path))  # type: ignore[arg-type]
    submitted = submit_claims([("q-1", CLAIMS[0])], fake_config(protocol="single"), desk, by=bo)
    assert batch_progress(desk, CLAIMS_QUEUE, submitted.batch_id).by == "Bo Lind"
    path.write_text(path.read_text(encoding="utf-8").split("[users.bo]")[0], encoding="utf-8")  # Bo leaves the desk
    with pytest.raises(NotAllowedError, match="no longer on this desk's list"):
        submit_claims([("q-2", CLAIMS[1])], fake_config(protocol="single"), desk, by=bo)
    assert [c.id for c in batch_progress(desk, CLAIMS_QUEUE).claims] == ["q-1"], "nothing submitted for the refused person"


def _most_calls_at_once(store: RunStore) -> tuple[int, int]:
    """From the record alone: the most model calls that were under way at one moment across every run, and how many calls."""
    edges: list[tuple[float, int]] = []
    for run in store.list_runs():
        for event in store.events(run.id):
            if isinstance(event, ModelCallCompleted) and not event.cached:
                edges += [(event.at - event.seconds, 1), (event.at, -1)]  # each call's answer time and how long it took
    at_once = most = 0
    for _, step in sorted(edges, key=lambda e: (e[0], e[1])):  # an end before a start at the same instant
        at_once += step
        most = max(most, at_once)
    return most, len(edges) // 2


def test_three_workers_keep_an_endpoint_within_its_parallel_calls_across_the_desk(desk: Services) -> None:
    """Three workers of two claims each could send six calls at once to the one model endpoint; its Parallel calls (2) hold
    desk-wide, as each run's recorded calls (their end and duration) show."""
    assert desk.store is not None
    bound = 2
    config = offline()
    config = config.model_copy(update={role: config.role(role).model_copy(update={"concurrency": bound}) for role in ROLES})
    items = parse_claims_text("\n".join(f"{CLAIMS[i % 3]} (endpoint bound, case {i})" for i in range(12)))
    with worker_processes(desk.store, desk.settings.data_dir, 3, latency_s=0.3, concurrency=2):
        submitted = submit_batch(items, config, desk)
        deadline = time.monotonic() + 300
        while not (progress := batch_progress(desk, submitted.queue)).finished:
            assert time.monotonic() < deadline, f"not finished: {[(c.id, c.state) for c in progress.claims]}"
            time.sleep(0.5)
    assert progress.count("completed") == 12
    assert len({c.worker.split(":")[1] for c in progress.claims}) == 3, "every worker ran claims"
    most, calls = _most_calls_at_once(desk.store)
    assert calls >= 12 * 3, "each run recorded its calls"
    assert most == bound, f"at most {bound} calls at once to the endpoint across the three workers (the record says {most})"


@pytest.mark.skipif(
    not os.environ.get(POSTGRES_DIR_ENV), reason=f"needs {POSTGRES_DIR_ENV} (the DIR given to `.ci/postgres start DIR`) to stop the server"
)
def test_a_worker_that_loses_the_store_mid_claim_pauses_the_run_and_resumes_it_when_the_store_is_back(
    desk: Services, tmp_path: Path
) -> None:
    """PostgreSQL stopped under a worker while it runs a claim, for longer than the event writer waits (its run pauses, its
    events go to the worker's spill), then started again: the same worker process stores the spill and resumes the run from
    its journal, and takes the rest. Nothing lost, nothing run twice, the worker never stopped."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        pytest.skip("it stops the server under the other workers' tests: run it alone, with -n 0")
    assert desk.store is not None
    folder = Path(os.environ[POSTGRES_DIR_ENV])
    data_dir = tmp_path / "worker-data"  # the worker's own data folder (its spill), the demo corpus copied in
    shutil.copytree(desk.settings.data_dir, data_dir)
    items = parse_claims_text("\n".join(f"{CLAIMS[i % 3]} (case {i})" for i in range(2)))
    # room for three claims at once: an idle slot asks the queue for work during the outage too
    with worker_processes(desk.store, data_dir, 1, latency_s=0.4, concurrency=3, logs=tmp_path) as (worker,):
        submitted = submit_batch(items, offline(), desk)
        deadline = time.monotonic() + 120
        while True:  # both claims under way, some of their events stored
            progress = batch_progress(desk, submitted.queue)
            running = [c for c in progress.claims if c.state == "running" and c.run_id]
            if len(running) == 2 and all(len(desk.store.events(c.run_id)) >= 6 for c in running):
                break
            assert time.monotonic() < deadline, "the claims did not get under way"
            time.sleep(0.2)
        pg_ctl(folder, "-m", "immediate", "stop")  # connections cut, as when the server crashes
        try:
            # longer than the event writer waits: both runs pause, their events in the worker's spill (waited for, not slept:
            # a loaded machine stretches every step)
            deadline = time.monotonic() + event_writer.STORE_PATIENCE_S + 120
            while not all(list((data_dir / "spill").glob(f"{c.run_id}-*.jsonl")) for c in running):
                assert time.monotonic() < deadline, "the runs did not pause into the spill"
                time.sleep(0.5)
            time.sleep(5)  # the jobs now wait for the database
            assert worker.poll() is None, "the worker waits; it did not stop"
        finally:
            pg_ctl(folder, "start")
        desk.store.engine.dispose()  # this process's connections died with the server
        deadline = time.monotonic() + 180
        while not (progress := batch_progress(desk, submitted.queue)).finished:
            assert time.monotonic() < deadline, f"not finished: {[(c.id, c.state, c.error) for c in progress.claims]}"
            time.sleep(0.5)
        assert worker.poll() is None, "the same worker took the claims on"

    log = (tmp_path / "worker-0.log").read_text(errors="replace")
    assert progress.count("completed") == 2, f"nothing lost: {[(c.id, c.state, c.error) for c in progress.claims]}\n{log[-3000:]}"
    with desk.store.engine.connect() as conn:
        runs = conn.scalar(text("SELECT count(*) FROM runs"))
        twice = conn.scalar(
            text("SELECT count(*) FROM (SELECT run_id FROM events WHERE type = 'RunStarted' GROUP BY run_id HAVING count(*) > 1) AS d")
        )
        seqs = conn.execute(text("SELECT run_id, count(*), count(DISTINCT seq) FROM events GROUP BY run_id")).all()
    assert runs == 2 and twice == 0, "no claim run twice from scratch"
    assert all(total == distinct for _, total, distinct in seqs), "no event stored twice"
    for claim in running:
        kinds = [type(e).__name__ for e in desk.store.events(claim.run_id)]
        assert kinds.count("RunInterrupted") == 1 and kinds.count("RunResumed") == 1, "paused once, resumed once from its journal"
        assert kinds.count("VerdictReached") == 1
    assert not list((data_dir / "spill").glob("*.jsonl")), "the spill was stored"
    assert [c.attempts for c in progress.claims] == [1, 1], "each resumed within its first job, not failed and retried"


def test_a_batch_submitted_from_the_command_line_joins_the_claims_queue(
    desk: Services, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipelines.cli.main import main
    from pipelines.newsroom.queue import ClaimQueue

    assert desk.store is not None
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(desk.settings.data_dir))
    monkeypatch.setenv("DEBATEDESK_DATABASE_URL", desk.store.engine.url.render_as_string(hide_password=False))
    source = tmp_path / "claims.csv"
    source.write_text(f"claim,claimant\n{CLAIMS[0]},Mayor Jones\n{CLAIMS[1]},\n")
    assert main(["batch", str(source), "--submit", "--backend", "fake", "--protocol", "single", "--no-web"]) == 0
    assert "2 of 2 claims joined the claims queue" in capsys.readouterr().err
    queue = ClaimQueue(desk.store.engine)
    claims = {c.text: c for c in queue.find()}
    assert set(claims) == set(CLAIMS[:2]) and claims[CLAIMS[0]].appearance.claimant == "Mayor Jones"
    assert all(c.status == "checking" and len(queue.runs_of(c.id)) == 1 for c in claims.values())

"""Batch work on worker processes: claims submitted as jobs to procrastinate's queue in the desk's PostgreSQL.

A shared desk (``DEBATEDESK_DATABASE_URL`` on PostgreSQL) needs no other service: procrastinate keeps
its jobs in tables beside the run store's, and ``python -m pipelines worker`` on any machine that
reaches the database, the model endpoint and the corpus takes them. The app and ``batch --submit``
only submit and watch (``submit_batch``, ``batch_progress``, ``cancel_batch``); a single-user desk on
SQLite runs its batches in-process as before (``pipelines/run/batch.py``).

Each claim is one job whose arguments carry the run id it will be stored under, fixed at submit
time. A job that finds its run completed does nothing (a claim is never run twice); one that finds
it failed, interrupted, or left ``running`` by a dead worker resumes it from its journal
(``runner.resume_run``), never from scratch. A killed worker's jobs are found by procrastinate's
worker heartbeats (``requeue_stalled``, every worker runs it) and taken by another worker. A claim
whose run fails is retried (resumed) ``ATTEMPTS`` times in all, then left failed with its reason;
the rest of the queue goes on. Every batch is a queue of its own, ``batch:<id>``, so its progress
is procrastinate's own count of its jobs joined with the runs table, whatever process asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import procrastinate
from procrastinate.schema import SchemaManager
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url

from pipelines.core.config import ROLES, RunConfig, load_run_config
from pipelines.core.database.faults import is_store_fault
from pipelines.core.errors import DebateDeskError, RunBusyError, StoreUnavailableError
from pipelines.newsroom.access.roles import Person, acting_name
from pipelines.record.outage import fault_message
from pipelines.record.spill import replay_spills, spill_dir
from pipelines.record.store import RunRow, RunStore, busy_message
from pipelines.run.batch import BatchItem, ClaimOutcome, outcome_from_events
from pipelines.run.endpoint_slots import DeskLimiters
from pipelines.run.llm.limits import Budget, describe_stop
from pipelines.run.runner import (
    _with_credentials,
    check_names,
    check_priced,
    resume_run,
    start_run,
    under_desk_limits,
    validate_claim,
)
from pipelines.run.services import Services

log = logging.getLogger(__name__)

QUEUE_PREFIX = "batch:"
CLAIMS_QUEUE = "claims"  # claims from the desk's claims queue ("check these"), outside any batch file
ATTEMPTS = 3  # a claim whose run fails is resumed until this many attempts in all, then left failed
STALLED_AFTER_S = 30.0  # a worker silent this long (procrastinate's heartbeat, every 10 s) is taken as dead
STALLED_CONFIRM_S = 15.0  # ... and still so this much later (a live worker beats again within it once its database is back)
TAKEOVER_AFTER_S = 90.0  # a run whose heartbeat (every 30 s) is this old is taken over by another worker
TASK = "desk.check_claim"
STORE_WAIT_S = 3600.0  # a worker whose store went away mid-claim waits this long for it inside the job, then lets the job go


class QueueUnavailableError(DebateDeskError):
    """The work queue cannot be used: the desk is on SQLite, or its database is away; the message says which and what to do."""


def on_workers(services: Services) -> bool:
    """Whether the app submits claims to the desk's workers (``batch_on_workers`` on the desk's PostgreSQL) instead of running
    them itself: the Batch page and the claims queue's "check these" both ask this."""
    store = services.store
    return bool(services.settings.batch_on_workers) and store is not None and not store.is_sqlite


class ClaimFailedError(Exception):
    """A claim's run failed; procrastinate retries the job (the run resumes) up to ``ATTEMPTS`` times."""


# --- the queue ------------------------------------------------------------------------------------------


def conninfo(database_url: str) -> str:
    """The libpq connection string of a SQLAlchemy PostgreSQL URL (``postgresql+psycopg://...``)."""
    url = make_url(database_url)
    if not url.drivername.startswith("postgresql"):
        raise QueueUnavailableError(
            "batch work on workers needs the desk's PostgreSQL (set DEBATEDESK_DATABASE_URL=postgresql+psycopg://...); "
            "a single-user desk on SQLite runs its batches in the app, or with `python -m pipelines batch FILE` without --submit"
        )
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def make_app(database_url: str, *, worker: bool = False) -> procrastinate.App:
    """A procrastinate app on the desk's database (async connector for a worker, sync for submitting and watching)."""
    info = conninfo(database_url)
    connector: Any = procrastinate.PsycopgConnector(conninfo=info) if worker else procrastinate.SyncPsycopgConnector(conninfo=info)
    app = procrastinate.App(connector=connector)
    app.task(name=TASK, pass_context=True, retry=_retry_strategy())(check_claim)  # each app its own Task (a Blueprint loads once)
    return app


def ensure_schema(store: RunStore) -> None:
    """procrastinate's tables in the desk's database, made once (under an advisory lock: two first workers at once make them once)."""
    with store.engine.begin() as conn:
        conn.execute(text("SELECT pg_advisory_xact_lock(4848)"))
        if conn.scalar(text("SELECT to_regclass('procrastinate_jobs')")) is not None:
            return
        conn.connection.driver_connection.execute(SchemaManager.get_schema())  # type: ignore[union-attr]  # no parameters: '%' as written


@contextlib.contextmanager
def _queue(services: Services, undone: str = "nothing was submitted") -> Iterator[procrastinate.App]:
    """The desk's queue, open; an unreachable database is said plainly (where, not the SQL, and ``undone``)."""
    store = services.store
    if store is None or store.is_sqlite:
        conninfo(store.url if store is not None else "sqlite://")  # raises the plain message
    assert store is not None
    url = store.url
    try:
        ensure_schema(store)
        app = make_app(url)
        app.open()
    except Exception as exc:
        if isinstance(exc, DebateDeskError) or not _is_database_fault(exc):
            raise
        raise QueueUnavailableError(f"{fault_message(store.url, exc)}; {undone}. Start the database and try again") from exc
    try:
        yield app
    finally:
        app.close()


def _is_database_fault(exc: BaseException) -> bool:
    import psycopg

    return is_store_fault(exc) or isinstance(exc, psycopg.OperationalError | procrastinate.exceptions.ConnectorException)


# --- submitting ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Submitted:
    batch_id: str
    queue: str
    jobs: int
    run_ids: tuple[str, ...] = ()  # each claim's run id, in the order given


def submit_batch(
    items: Sequence[BatchItem],
    config: RunConfig,
    services: Services,
    *,
    by: Person | str = "",
    label: str = "",
    queue: str = "",
) -> Submitted:
    """Every claim as one job, in one INSERT (all submitted or none); returns at once.

    ``by``: a Person (a signed-in desk) is checked for the "run" role here, now; a bare name is a caller without sign-in.
    What can be checked before any claim runs is checked here (each claim's text, the protocol, the
    backends, prices for a money limit, the corpus), so a worker rarely refuses a claim it took.
    """
    by = acting_name(by, "run")
    config, _desk = under_desk_limits(config, services)
    check_names(config)
    check_priced(config)
    services.ensure_corpus(config.corpus)
    for item in items:
        try:
            validate_claim(item.claim)
        except DebateDeskError as exc:
            raise DebateDeskError(f"claim {item.index + 1} (id {item.id!r}): {exc}; nothing was submitted") from None
    batch_id = uuid.uuid4().hex[:10]
    queue = queue or f"{QUEUE_PREFIX}{batch_id}"
    snapshot = config.snapshot()
    now = time.time()
    jobs: list[dict[str, Any]] = [
        {
            "batch": batch_id,
            "index": item.index,
            "item_id": item.id,
            "claim": item.claim,
            "run_id": uuid.uuid4().hex[:12],
            "config": snapshot,
            "by": by,
            "label": label,
            "submitted_at": now,
        }
        for item in items
    ]
    with _queue(services) as app:
        try:
            app.configure_task(TASK, queue=queue).batch_defer(*jobs)
        except Exception as exc:
            if not _is_database_fault(exc):
                raise
            raise QueueUnavailableError(
                f"{fault_message(services.store.url if services.store else '', exc)}; nothing was submitted"
            ) from exc
    return Submitted(batch_id, queue, len(jobs), tuple(str(job["run_id"]) for job in jobs))


def submit_claims(claims: Sequence[tuple[str, str]], config: RunConfig, services: Services, *, by: Person | str = "") -> Submitted:
    """The claims queue's "check these": (id, claim text) pairs as jobs on the desk's ``claims`` queue, watched like a batch."""
    items = [BatchItem(index=i, id=cid, claim=claim) for i, (cid, claim) in enumerate(claims)]
    return submit_batch(items, config, services, by=by, label="claims queue", queue=CLAIMS_QUEUE)


# --- watching -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimProgress:
    """One claim of a submitted batch as the store and the queue see it now."""

    index: int
    id: str
    claim: str
    run_id: str
    state: str  # waiting, running, completed, failed, stopped, skipped, cancelled
    worker: str = ""  # host:pid of the worker that runs (or ran) it
    verdict: str | None = None
    error: str = ""
    attempts: int = 0


@dataclass(frozen=True)
class BatchProgress:
    queue: str
    label: str
    by: str
    submitted_at: float
    claims: tuple[ClaimProgress, ...]

    def count(self, *states: str) -> int:
        return sum(c.state in states for c in self.claims)

    @property
    def finished(self) -> bool:
        return not self.count("waiting", "running")


def list_batches(services: Services) -> list[str]:
    """The queues of submitted batches, newest first."""
    with _queue(services, "the progress could not be read") as app:
        queues = app.job_manager.list_queues()
        names = [q["name"] for q in queues if q["name"].startswith(QUEUE_PREFIX) or q["name"] == CLAIMS_QUEUE]
    store = services.store
    assert store is not None
    with store.engine.connect() as conn:
        rows = conn.execute(text("SELECT queue_name, min(id) FROM procrastinate_jobs GROUP BY queue_name")).all()
    first: dict[str, int] = {str(r[0]): int(r[1]) for r in rows}
    return sorted(names, key=lambda n: -first.get(n, 0))


@dataclass(frozen=True)
class Submission:
    """One submission to a queue that takes several (the claims queue's ``claims``): who, when, how many claims."""

    batch: str
    by: str
    submitted_at: float
    claims: int


def list_submissions(services: Services, queue: str) -> list[Submission]:
    """The submissions on ``queue``, newest first (each "check these" on the claims queue is one)."""
    with _queue(services, "the progress could not be read"):
        pass  # the tables made, or the database's absence said plainly
    store = services.store
    assert store is not None
    with store.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT args->>'batch', min(args->>'by'), min((args->>'submitted_at')::float), count(*) FROM procrastinate_jobs "
                "WHERE queue_name = :q AND task_name = :t GROUP BY args->>'batch' ORDER BY min(id) DESC"
            ),
            {"q": queue, "t": TASK},
        ).all()
    return [Submission(str(r[0]), str(r[1] or ""), float(r[2] or 0.0), int(r[3])) for r in rows]


def batch_progress(services: Services, queue: str, batch: str = "") -> BatchProgress:
    """Each claim of the batch (of one submission to ``queue`` when ``batch`` names it): its job's state joined with its
    run's (status, verdict, owner), read from the database now."""
    with _queue(services, "the progress could not be read") as app:
        jobs = [j for j in app.job_manager.list_jobs(queue=queue, task=TASK) if not batch or j.task_kwargs.get("batch") == batch]
    store = services.store
    assert store is not None
    ids = [str(j.task_kwargs["run_id"]) for j in jobs]
    runs: dict[str, RunRow] = {}
    with store.engine.connect() as conn:
        for start in range(0, len(ids), 500):
            for row in conn.execute(select(RunRow).where(RunRow.id.in_(ids[start : start + 500]))).all():
                runs[row.id] = row  # type: ignore[assignment]
    claims = []
    for job in jobs:
        kw = job.task_kwargs
        run = runs.get(str(kw["run_id"]))
        claims.append(_claim_progress(job, kw, run))
    first: dict[str, Any] = dict(jobs[0].task_kwargs) if jobs else {}
    return BatchProgress(
        queue=queue,
        label=str(first.get("label", "")),
        by=str(first.get("by", "")),
        submitted_at=float(first.get("submitted_at") or 0.0),
        claims=tuple(sorted(claims, key=lambda c: (c.index, c.run_id))),
    )


def _claim_progress(job: Any, kw: dict[str, Any], run: Any) -> ClaimProgress:
    status = job.status
    claim = ClaimProgress(index=int(kw["index"]), id=str(kw["item_id"]), claim=str(kw["claim"]), run_id=str(kw["run_id"]), state="waiting")
    claim = replace(claim, attempts=int(job.attempts or 0))
    if status == "cancelled":
        return replace(claim, state="cancelled", error="not started: the batch was cancelled")
    if run is None:
        if status == "todo":
            return claim
        if status == "doing":
            return replace(claim, state="running")
        if status == "succeeded":
            return replace(claim, state="skipped", error="not started: the batch's spend limit")
        return replace(claim, state="failed", error="refused before its run started (see the worker's log)")
    if run.status == "completed":
        state = "completed"
    elif run.status == "running" or status in ("todo", "doing"):
        state = "running"  # a run between two attempts is still the queue's
    elif run.stop_reason:
        state = "stopped"
    else:
        state = "failed"
    error = ""
    if state in ("failed", "stopped"):
        error = run.stop_reason or _failure_of(run.id) or f"the run {run.status}"
    worker = ":".join((run.owner or "").split(":")[:2])
    return replace(claim, state=state, worker=worker, verdict=run.verdict, error=error)


_FAILURES: dict[str, str] = {}  # run id -> its failure, read once (a finished failed run does not change)


def _failure_of(run_id: str) -> str:
    return _FAILURES.get(run_id, "")


def failure_reasons(services: Services, progress: BatchProgress) -> BatchProgress:
    """``progress`` with each failed claim's reason read from its run's events (once per run)."""
    from pipelines.record.digest import digest

    store = services.store
    assert store is not None
    claims = []
    for c in progress.claims:
        if c.state == "failed" and c.run_id and c.error.startswith("the run "):
            if c.run_id not in _FAILURES:
                run = digest(store.events(c.run_id))
                _FAILURES[c.run_id] = run.failure or run.interruption or ""
            c = replace(c, error=_FAILURES[c.run_id] or c.error)
        claims.append(c)
    return BatchProgress(progress.queue, progress.label, progress.by, progress.submitted_at, tuple(claims))


def cancel_batch(services: Services, queue: str, batch: str = "") -> int:
    """Cancel every claim of the batch (of one submission to ``queue`` when ``batch`` names it) not started yet (running ones
    finish); returns how many were cancelled."""
    with _queue(services, "nothing was cancelled") as app:
        waiting = [j for j in app.job_manager.list_jobs(queue=queue, status="todo") if not batch or j.task_kwargs.get("batch") == batch]
        return sum(bool(app.job_manager.cancel_job_by_id(job.id)) for job in waiting if job.id is not None)


# --- the worker's side ----------------------------------------------------------------------------------


def _retry_strategy() -> procrastinate.RetryStrategy:
    return procrastinate.RetryStrategy(max_attempts=ATTEMPTS - 1, wait=5, retry_exceptions={ClaimFailedError, RunBusyError})


def check_claim(context: procrastinate.JobContext, **job: Any) -> str:
    """One claim: its run started, or resumed from its journal, or left alone when already completed."""
    services: Services = context.additional_context["services"]
    item = BatchItem(index=int(job["index"]), id=str(job["item_id"]), claim=str(job["claim"]))
    outcome = run_job(item, str(job["run_id"]), dict(job["config"]), services, by=str(job.get("by", "")), queue=context.job.queue)
    if outcome is None:
        log.info("claim %s: run %s was completed already", item.id, job["run_id"])
        return "already completed"
    log.info("claim %s: %s (run %s)%s", item.id, outcome.status, outcome.run_id, f": {outcome.error}" if outcome.error else "")
    if outcome.status == "failed":
        raise ClaimFailedError(outcome.error)
    return outcome.status


def run_job(
    item: BatchItem, run_id: str, snapshot: dict[str, Any], services: Services, *, by: str = "", queue: str = ""
) -> ClaimOutcome | None:
    """Run (or take over) one claim's run; None when it was completed already, by this worker or another."""
    store = services.store
    if store is None:
        raise DebateDeskError("a worker needs the desk's run store")
    started = time.perf_counter()
    summary = store.get_run(run_id)
    if summary is not None and summary.status == "completed":
        return None
    desk = services.desk_settings().apply(load_run_config())  # this worker's keys for the desk's endpoints (never in a job)
    if summary is None:
        config = RunConfig.from_snapshot(snapshot)
        config = config.model_copy(update={role: _with_credentials(config.role(role), desk.role(role)) for role in ROLES})
        batch_budget = _batch_spent(services, config, queue)
        if batch_budget is not None and (stop := batch_budget.reached()) is not None:
            log.info("claim %s not started: %s", item.id, describe_stop(stop))
            return ClaimOutcome(item.index, item.id, item.claim, "skipped", error=f"not started: {describe_stop(stop)}")
        handle = start_run(item.claim, config, services, run_id, by=by, batch_budget=batch_budget)
    else:
        if not _stopped_or_done(store, run_id):
            return None  # completed meanwhile by the worker that held it
        handle = resume_run(run_id, services, secrets_from=desk, by=by or "worker")
    outcome = outcome_from_events(item, list(handle.stream()), time.perf_counter() - started)
    while outcome.status == "failed" and _spilled(services, run_id):
        # The store went away mid-run: the run paused, its events in this machine's spill. Wait here for the store, store
        # the spill, and resume the run from its journal (as the app does at its next start), all within this job.
        log.warning("claim %s: run %s paused (%s); waiting for the store", item.id, run_id, outcome.error)
        wait_for_store(store)
        handle = resume_run(run_id, services, secrets_from=desk, by=by or "worker")  # stores the spill first
        outcome = outcome_from_events(item, list(handle.stream()), time.perf_counter() - started)
    return outcome


def _spilled(services: Services, run_id: str) -> bool:
    """Whether events of ``run_id`` wait in this machine's spill folder (the store was away when they came)."""
    return any(spill_dir(services.settings.data_dir).glob(f"{run_id}-*.jsonl"))


def wait_for_store(store: RunStore, *, patience_s: float = STORE_WAIT_S) -> None:
    """Return once the store answers again; StoreUnavailableError after ``patience_s`` (the job is then retried later)."""
    deadline = time.monotonic() + patience_s
    pause = 1.0
    while True:
        try:
            with store.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return
        except Exception as exc:
            if not is_store_fault(exc):
                raise
            if time.monotonic() > deadline:
                raise StoreUnavailableError(
                    f"{fault_message(store.url, exc)} for {patience_s:.0f} s; the claim waits for a worker"
                ) from exc
        time.sleep(pause)
        pause = min(pause * 2, 10.0)


def _stopped_or_done(store: RunStore, run_id: str, poll_s: float = 5.0) -> bool:
    """Wait until the run is no longer ``running``; True when it is there to resume, False when it completed.

    A run left running by a worker that died is marked interrupted by ``reconcile``: at once when that worker was a
    process on this machine, else once its heartbeat is ``TAKEOVER_AFTER_S`` old. A run still beating past that is
    another worker's, alive: ``RunBusyError``, and the job is tried again later.
    """
    deadline = time.monotonic() + TAKEOVER_AFTER_S + 4 * poll_s
    while True:
        store.reconcile(stale_after_s=TAKEOVER_AFTER_S)
        summary = store.get_run(run_id)
        if summary is None or summary.status != "running":
            return summary is not None and summary.status != "completed"
        if time.monotonic() > deadline:
            raise RunBusyError(busy_message(run_id, summary.status, store.owner_of(run_id), store.heartbeat_of(run_id)))
        time.sleep(poll_s)


def _batch_spent(services: Services, config: RunConfig, queue: str) -> Budget | None:
    """The batch's limits (the desk's, read now) with what its runs on every worker have spent so far."""
    config, _desk = under_desk_limits(config, services)
    if not config.budget.limits_batch or not queue or services.store is None:
        return None
    budget = Budget.for_batch(config.budget)
    store = services.store
    with store.engine.connect() as conn:
        ids = select(text("args->>'run_id'")).select_from(text("procrastinate_jobs")).where(text("queue_name = :q"))
        row = conn.execute(
            select(
                func.coalesce(func.sum(RunRow.model_calls - func.coalesce(RunRow.cached_calls, 0)), 0),
                func.coalesce(func.sum(RunRow.tokens_in + RunRow.tokens_out), 0),
                func.coalesce(func.sum(RunRow.spent), 0.0),
            ).where(RunRow.id.in_(ids)),
            {"q": queue},
        ).one()
    budget.used.update(calls=float(row[0] or 0), tokens=float(row[1] or 0), cost=float(row[2] or 0))
    return budget


async def requeue_stalled(app: procrastinate.App, every_s: float = 10.0) -> None:
    """Forever: jobs held by a worker whose heartbeat stopped (killed, machine gone) go back to the queue for another.

    A job is put back only when it is still stalled ``STALLED_CONFIRM_S`` after it was first seen so: when the database was
    away, every worker's heartbeat is old the moment it is back, and a live worker's beats again within that time.
    """
    seen: dict[int, float] = {}  # job id -> when it was first seen stalled
    while True:
        await asyncio.sleep(every_s)
        try:
            stalled = {job.id: job for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=STALLED_AFTER_S)}
        except Exception as exc:
            log.warning("could not look for stalled jobs: %s", exc)
            seen.clear()
            continue
        now = time.monotonic()
        seen = {job_id: seen.get(job_id, now) for job_id in stalled if job_id is not None}
        for job_id, since in seen.items():
            if now - since < STALLED_CONFIRM_S:
                continue
            job = stalled[job_id]
            log.warning("job %s (claim %s) was held by a worker that stopped; back in the queue", job.id, job.task_kwargs.get("item_id"))
            with contextlib.suppress(Exception):  # another worker requeued it first
                await app.job_manager.retry_job(job)


async def run_worker(services: Services, *, concurrency: int = 2, queues: Sequence[str] | None = None, name: str = "") -> None:
    """A worker: takes claims until stopped (SIGINT/SIGTERM finish the claims under way first)."""
    store = services.store
    if store is None or store.is_sqlite:
        conninfo(store.url if store is not None else "sqlite://")
    assert store is not None
    url = store.url
    try:
        ensure_schema(store)
    except Exception as exc:
        if not _is_database_fault(exc):
            raise
        raise StoreUnavailableError(f"{fault_message(store.url, exc)}; start the database, then the worker") from exc
    services.limiters = DeskLimiters(url)  # each endpoint's Parallel calls hold across every worker of the desk
    stopping = asyncio.Event()
    me = asyncio.current_task()
    loop = asyncio.get_running_loop()

    def stop() -> None:  # SIGINT/SIGTERM: the claims under way finish (procrastinate stops gracefully when cancelled)
        stopping.set()
        if me is not None:
            me.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop)
    try:
        while not stopping.is_set():
            try:
                await _work(services, url, concurrency=concurrency, queues=queues, name=name)
            except asyncio.CancelledError:
                if stopping.is_set():
                    return
                raise
            except Exception as exc:
                if stopping.is_set():
                    return  # stopping anyway: the database's absence is the next start's business
                if not _is_database_fault(exc):
                    raise
                log.warning("the worker lost the desk's database (%s)", fault_message(url, exc))
            if stopping.is_set():
                return
            # procrastinate stopped the worker without being asked: its database went away. Wait for it, store what this
            # machine spilled meanwhile, and take claims again (a claim that was under way waited for it in its job).
            log.warning("the worker waits for the desk's database, then takes claims again")
            await asyncio.to_thread(wait_for_store, store)
            await asyncio.to_thread(replay_spills, store, services.settings.data_dir)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


async def _work(services: Services, url: str, *, concurrency: int, queues: Sequence[str] | None, name: str) -> None:
    """One procrastinate worker on the desk's database, until it stops (asked to, or its database went away)."""
    app = make_app(url, worker=True)
    async with app.open_async():
        watcher = asyncio.create_task(requeue_stalled(app))
        try:
            await app.run_worker_async(
                concurrency=concurrency,
                queues=list(queues) if queues else None,  # type: ignore[arg-type]  # None: every queue
                name=name or None,  # type: ignore[arg-type]
                additional_context={"services": services},
                stalled_worker_timeout=STALLED_AFTER_S,
                install_signal_handlers=False,  # run_worker's own: a stop asked for, told from one the database caused
            )
        finally:
            watcher.cancel()

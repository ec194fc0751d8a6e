"""Batch work on worker processes: 1, 2 and 4 workers on the same claims, side by side in one run, and a worker killed.

    .venv/bin/python -m bench.workers [--claims 200] [--latency 0.4] [--concurrency 2] [--workers 1 2 4] [--postgres-url URL]

Each configuration gets a fresh database on one PostgreSQL server (the desk's run store and procrastinate's queue), N
``python -m pipelines worker`` processes on the fake backend with ``DEBATEDESK_FAKE_LATENCY_S`` seconds per model call
(a latency-bound load, as a remote model server is), and the same claims submitted at once; the clock runs from the
submit to the last claim's end. Then the kill: the largest configuration again, one worker SIGKILLed while it runs a
claim, and the claims counted: lost (not completed), run twice from scratch (more than one RunStarted in a run, or
more runs than claims), resumed. The store's write rate is events and journal entries stored per second over the run.
Without a URL (or DEBATEDESK_TEST_POSTGRES_URL) a throwaway PostgreSQL is started with `.ci/postgres` and stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python bench/workers.py` too, as the other scripts are

from bench.throwaway_postgres import fresh_database, postgres

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = (
    "Masks reduce transmission of respiratory viruses",
    "Vaccines cause autism",
    "The Moon landings were staged",
    "Climate change is driven by human activity",
    "Antibiotics cure viral infections",
)
FAKE_ENV = {"DEBATEDESK_DEBATER__BACKEND": "fake", "DEBATEDESK_JUDGE__BACKEND": "fake", "DEBATEDESK_SCORER__BACKEND": "fake"}


def worker_env(database_url: str, data_dir: Path, latency: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATEDESK_")}
    env.update(FAKE_ENV)
    env.update(
        DEBATEDESK_DATABASE_URL=database_url,
        DEBATEDESK_DATA_DIR=str(data_dir),
        DEBATEDESK_FAKE_LATENCY_S=str(latency),
        DEBATEDESK_RETRIEVAL__WEB_SEARCH="false",
    )
    return env


def start_workers(n: int, env: dict[str, str], concurrency: int, logs: Path) -> list[subprocess.Popen[bytes]]:
    procs = []
    for i in range(n):
        log = (logs / f"worker-{i}.log").open("wb")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "pipelines", "worker", "--concurrency", str(concurrency)],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    return procs


def wait_for_workers(database_url: str, n: int, timeout: float = 180.0) -> None:
    engine = create_engine(database_url)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                made = conn.scalar(text("SELECT to_regclass('procrastinate_workers')")) is not None
                if made and int(conn.scalar(text("SELECT count(*) FROM procrastinate_workers")) or 0) >= n:
                    return
            time.sleep(0.5)
        raise RuntimeError(f"{n} workers did not start in {timeout:.0f} s")
    finally:
        engine.dispose()


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()


def one_config(server: str, n: int, args: argparse.Namespace, *, kill: bool = False) -> dict[str, object]:
    from pipelines.core.config import ROLES, AppSettings, RunConfig
    from pipelines.run.batch import parse_claims_text
    from pipelines.run.services import Services
    from pipelines.run.workers import batch_progress, submit_batch

    with fresh_database(server) as url, tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        data_dir = Path(tmp) / "data"
        logs = Path(args.logs or tmp)
        logs.mkdir(parents=True, exist_ok=True)
        services = Services.create(AppSettings(data_dir=data_dir, database_url=url))
        services.ensure_corpus("demo")  # indexed once here, before the workers read it
        config = RunConfig().with_backend("fake").with_overrides(protocol="single", corpus="demo", no_web=True)
        # the endpoint's Parallel calls hold across the desk's workers: as wide as the bench's model server, so it measures the workers
        config = config.model_copy(update={r: config.role(r).model_copy(update={"concurrency": args.parallel_calls}) for r in ROLES})
        claims = [f"{CLAIMS[i % len(CLAIMS)]} (case {i})" for i in range(args.claims)]
        items = parse_claims_text("\n".join(claims))
        procs = start_workers(n, worker_env(url, data_dir, args.latency), args.concurrency, logs)
        killed = None
        try:
            wait_for_workers(url, n)
            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            submitted = submit_batch(items, config, services, label="bench")
            while True:
                progress = batch_progress(services, submitted.queue)
                done = progress.count("completed")
                if kill and killed is None and done >= args.claims // 4:
                    killed = kill_one_mid_claim(url, procs)
                if progress.finished:
                    break
                time.sleep(0.25)
            seconds = time.perf_counter() - started
            load_after = os.getloadavg()[0]
        finally:
            stop(procs)
        engine = create_engine(url)
        with engine.connect() as conn:
            runs = conn.execute(text("SELECT id, status, attempts FROM runs")).all()
            started_events = dict(
                conn.execute(text("SELECT run_id, count(*) FROM events WHERE type = 'RunStarted' GROUP BY run_id")).all()  # type: ignore[arg-type]
            )
            resumed = int(conn.scalar(text("SELECT count(DISTINCT run_id) FROM events WHERE type = 'RunResumed'")) or 0)
            events = int(conn.scalar(text("SELECT count(*) FROM events")) or 0)
            journal = int(conn.scalar(text("SELECT count(*) FROM journal")) or 0)
        engine.dispose()
        completed = sum(r.status == "completed" for r in runs)
        twice = sum(c > 1 for c in started_events.values()) + max(0, len(runs) - args.claims)
        return {
            "workers": n,
            "claims": args.claims,
            "seconds": round(seconds, 2),
            "claims_per_s": round(args.claims / seconds, 3),
            "completed": completed,
            "lost": args.claims - completed,
            "run_twice": twice,
            "resumed": resumed,
            "killed_pid": killed,
            "store_rows_per_s": round((events + journal) / seconds, 1),
            "events": events,
            "journal": journal,
            "load_1min": [round(load_before, 2), round(load_after, 2)],
        }


def kill_one_mid_claim(url: str, procs: list[subprocess.Popen[bytes]]) -> int | None:
    """SIGKILL a worker that has a run going now (the owner column says which process)."""
    pids = {p.pid: p for p in procs}
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            owners = conn.execute(text("SELECT owner FROM runs WHERE status = 'running'")).scalars().all()
    finally:
        engine.dispose()
    for owner in owners:
        pid = int(str(owner).split(":")[1])
        if pid in pids:
            pids[pid].send_signal(signal.SIGKILL)
            pids[pid].wait()
            return pid
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.4, help="seconds per fake model call (DEBATEDESK_FAKE_LATENCY_S)")
    parser.add_argument("--concurrency", type=int, default=2, help="claims each worker runs at once")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--parallel-calls", type=int, default=64, help="each role's Parallel calls: the model endpoint's bound across all workers"
    )
    parser.add_argument("--logs", default="", help="keep the workers' logs in this folder (default: a temporary one)")
    parser.add_argument("--no-kill", action="store_true", help="skip the run with a worker killed")
    parser.add_argument("--postgres-url", default=os.environ.get("DEBATEDESK_TEST_POSTGRES_URL"))
    args = parser.parse_args(argv)
    print(f"cores: {os.cpu_count()}, load before: {os.getloadavg()}", flush=True)
    results = []
    with postgres(args.postgres_url) as server:
        for n in args.workers:
            results.append(one_config(server, n, args))
            print(json.dumps(results[-1]), flush=True)
        if not args.no_kill:
            results.append({"kill": True, **one_config(server, max(args.workers), args, kill=True)})
            print(json.dumps(results[-1]), flush=True)
    base = next((r for r in results if r["workers"] == 1 and "kill" not in r), None)
    if base is not None:
        for r in results:
            if "kill" not in r:
                print(
                    f"{r['workers']} workers: {r['claims_per_s']} claims/s, {float(r['claims_per_s']) / float(base['claims_per_s']):.2f}x 1 worker"
                )  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

"""Task-queue engines side by side on the same work: procrastinate (PostgreSQL) and Huey (SQLite, no service).

    .venv/bin/python -m bench.queue_engines [--jobs 200] [--latency 0.2] [--postgres-url URL]

Each engine gets the same jobs: sleep ``--latency`` seconds (a model call's wait) and append the job's number to a
file. Throughput: 2 worker processes of 2 threads each, from the first enqueue to the last job's line. Takeover: 20
jobs of 1 s on one worker process, SIGKILLed 1.5 s in, then a new worker started; after 60 s the lines are counted
(lost: a number missing; twice: a number written more than once). procrastinate's takeover is its worker heartbeats
with ``pipelines.run.workers.requeue_stalled``; Huey has no acknowledgement, so a job a killed consumer held is gone.
Redis-based engines (Celery, Dramatiq, RQ) are not measured here: they need a Redis server beside the desk's database.
Without a URL (or DEBATEDESK_TEST_POSTGRES_URL) a throwaway PostgreSQL is started with `.ci/postgres`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python bench/queue_engines.py` too, as the other scripts are

from bench.throwaway_postgres import fresh_database, postgres

ROOT = Path(__file__).resolve().parents[1]


def _write(out: str, number: int) -> None:
    with open(out, "a", encoding="utf-8") as f:
        f.write(f"{number}\n")


# --- procrastinate ------------------------------------------------------------------------------------------


def procrastinate_app(url: str, worker: bool) -> object:
    import procrastinate

    from pipelines.run.workers import conninfo

    info = conninfo(url)
    connector = procrastinate.PsycopgConnector(conninfo=info) if worker else procrastinate.SyncPsycopgConnector(conninfo=info)
    app = procrastinate.App(connector=connector)

    def sleep_job(number: int, seconds: float, out: str) -> None:
        time.sleep(seconds)
        _write(out, number)

    app.task(name="bench.sleep_job")(sleep_job)
    return app


def procrastinate_worker(url: str, threads: int) -> None:
    from pipelines.run.workers import requeue_stalled

    app = procrastinate_app(url, worker=True)

    async def main() -> None:
        async with app.open_async():  # type: ignore[attr-defined]
            watcher = asyncio.create_task(requeue_stalled(app, every_s=2))  # type: ignore[arg-type]
            await app.run_worker_async(concurrency=threads, stalled_worker_timeout=5, update_heartbeat_interval=1)  # type: ignore[attr-defined]
            watcher.cancel()

    asyncio.run(main())


def procrastinate_enqueue(url: str, jobs: int, seconds: float, out: str) -> None:
    app = procrastinate_app(url, worker=False)
    with app.open():  # type: ignore[attr-defined]
        app.configure_task("bench.sleep_job").batch_defer(*({"number": i, "seconds": seconds, "out": out} for i in range(jobs)))  # type: ignore[attr-defined]


# --- Huey on SQLite ------------------------------------------------------------------------------------------


def huey_app(path: str) -> object:
    from huey import SqliteHuey

    huey = SqliteHuey(filename=path)

    @huey.task(name="sleep_job")
    def sleep_job(number: int, seconds: float, out: str) -> None:
        time.sleep(seconds)
        _write(out, number)

    huey.sleep_job = sleep_job  # type: ignore[attr-defined]
    return huey


def huey_worker(path: str, threads: int) -> None:
    from huey.consumer import Consumer

    Consumer(huey_app(path), workers=threads, worker_type="thread", periodic=False, initial_delay=0.05, max_delay=0.2).run()


def huey_enqueue(path: str, jobs: int, seconds: float, out: str) -> None:
    huey = huey_app(path)
    for i in range(jobs):
        huey.sleep_job(i, seconds, out)  # type: ignore[attr-defined]


# --- the runs --------------------------------------------------------------------------------------------------


def spawn(engine: str, target: str, threads: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.queue_engines", "--worker", engine, target, str(threads)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def lines(out: Path) -> Counter[int]:
    return Counter(int(x) for x in out.read_text().split()) if out.exists() else Counter()


def run_engine(engine: str, target: str, jobs: int, latency: float, tmp: Path) -> dict[str, object]:
    enqueue = procrastinate_enqueue if engine == "procrastinate" else huey_enqueue
    if engine == "procrastinate":  # its tables before its workers start
        from pipelines.record.store import RunStore
        from pipelines.run.workers import ensure_schema

        ensure_schema(RunStore(target))
    out = tmp / f"{engine}-throughput.txt"
    workers = [spawn(engine, target, 2) for _ in range(2)]
    time.sleep(8)  # both up (imports)
    started = time.perf_counter()
    enqueue(target, jobs, latency, str(out))
    while sum(lines(out).values()) < jobs and time.perf_counter() - started < 600:
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    for w in workers:
        w.send_signal(signal.SIGTERM)
        w.wait(timeout=30)
    ideal = jobs * latency / 4
    # takeover
    out2 = tmp / f"{engine}-kill.txt"
    first = spawn(engine, target, 2)
    time.sleep(8)
    enqueue(target, 20, 1.0, str(out2))
    time.sleep(1.5)
    first.send_signal(signal.SIGKILL)
    first.wait()
    held = sum(lines(out2).values())
    second = spawn(engine, target, 2)
    time.sleep(60)
    second.send_signal(signal.SIGTERM)
    second.wait(timeout=30)
    seen = lines(out2)
    return {
        "engine": engine,
        "jobs": jobs,
        "latency_s": latency,
        "seconds": round(seconds, 2),
        "jobs_per_s": round(jobs / seconds, 2),
        "overhead_vs_ideal": round(seconds / ideal, 2),
        "kill": {"done_before_kill": held, "lost": sum(1 for i in range(20) if i not in seen), "twice": sum(c > 1 for c in seen.values())},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--postgres-url", default=os.environ.get("DEBATEDESK_TEST_POSTGRES_URL"))
    parser.add_argument("--worker", nargs=3, metavar=("ENGINE", "TARGET", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        engine, target, threads = args.worker
        (procrastinate_worker if engine == "procrastinate" else huey_worker)(target, int(threads))
        return
    print(f"cores: {os.cpu_count()}, load: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as tmp, postgres(args.postgres_url) as server:
        with fresh_database(server) as url:
            print(json.dumps(run_engine("procrastinate", url, args.jobs, args.latency, Path(tmp))), flush=True)
        print(json.dumps(run_engine("huey", str(Path(tmp) / "huey.sqlite"), args.jobs, args.latency, Path(tmp))), flush=True)
    print(f"load after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()

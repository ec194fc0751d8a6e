"""The desk's workers in a test: its queue drained in this process with procrastinate's own worker until a batch has
ended (``drain``), or real ``python -m pipelines worker`` processes (``worker_processes``)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text

from pipelines.record.store import RunStore
from pipelines.run.services import Services
from pipelines.run.workers import batch_progress, ensure_schema, make_app

ROOT = Path(__file__).resolve().parents[1]


def drain(services: Services, queue: str, timeout: float = 120.0) -> None:
    """Run the queue's jobs here until every claim has an end (a retry waits a few seconds, so loop)."""
    assert services.store is not None
    app = make_app(services.store.url, worker=True)

    async def once() -> None:
        async with app.open_async():
            await app.run_worker_async(
                queues=[queue], wait=False, concurrency=2, additional_context={"services": services}, install_signal_handlers=False
            )

    deadline = time.monotonic() + timeout
    while not batch_progress(services, queue).finished:
        assert time.monotonic() < deadline, "the queue did not drain"
        asyncio.run(once())
        time.sleep(0.3)


def worker_environment(store: RunStore, data_dir: Path, latency_s: float) -> dict[str, str]:
    """A worker's environment: the desk's database and data folder, every role on the fake backend at ``latency_s`` a call."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATEDESK_")}
    env.update(
        DEBATEDESK_DATABASE_URL=store.url,
        DEBATEDESK_DATA_DIR=str(data_dir),
        DEBATEDESK_FAKE_LATENCY_S=str(latency_s),
        DEBATEDESK_DEBATER__BACKEND="fake",
        DEBATEDESK_JUDGE__BACKEND="fake",
        DEBATEDESK_SCORER__BACKEND="fake",
        DEBATEDESK_RETRIEVAL__WEB_SEARCH="false",
        HF_HUB_OFFLINE="1",
    )
    return env


@contextmanager
def worker_processes(
    store: RunStore, data_dir: Path, n: int, *, latency_s: float = 0.3, concurrency: int = 1, logs: Path | None = None
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` worker processes on the desk's database, up (in procrastinate's table of workers) before this yields; each is
    stopped with SIGTERM afterwards (claims under way finish), killed if it has not stopped in a minute."""
    ensure_schema(store)
    env = worker_environment(store, data_dir, latency_s)
    outputs = [(logs / f"worker-{i}.log").open("w") if logs is not None else None for i in range(n)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "pipelines", "worker", "--concurrency", str(concurrency)],
            cwd=ROOT,
            env=env,
            stdout=out if out is not None else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if out is not None else subprocess.DEVNULL,
        )
        for out in outputs
    ]
    try:
        deadline = time.monotonic() + 180
        while True:
            with store.engine.connect() as conn:
                if int(conn.scalar(text("SELECT count(*) FROM procrastinate_workers")) or 0) >= n:
                    break
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.5)
        yield workers
    finally:
        running = [w for w in workers if w.poll() is None]
        for w in running:
            w.send_signal(signal.SIGTERM)
        stuck = []
        for w in running:
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                w.kill()
                stuck.append(w.pid)
        for out in outputs:
            if out is not None:
                out.close()
    assert not stuck, f"workers {stuck} did not stop within a minute of SIGTERM"
    assert all(w.returncode == 0 for w in running), f"a worker ended badly on SIGTERM: {[w.returncode for w in running]}"

"""Draining the desk's work queue inside a test: procrastinate's own worker, in this process, until a batch has ended."""

from __future__ import annotations

import asyncio
import time

from pipelines.run.services import Services
from pipelines.run.workers import batch_progress, make_app


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

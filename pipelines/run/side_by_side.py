"""Two protocols on the same claim, side by side: their events interleaved as they happen, and what each cost.

``stream_side_by_side`` runs each configuration with ``stream_run`` on its own thread and
yields ``(slot, event)`` pairs in arrival order, so a page can feed two views at once.
``summarize_run`` reduces a run's events to its verdict, confidence and cost.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pipelines.core.config import RunConfig
from pipelines.core.events import Event
from pipelines.record.digest import Cost, digest
from pipelines.run.runner import preflight, stream_run
from pipelines.run.services import Services

_DONE = object()


@dataclass(frozen=True)
class RunOutcome:
    """One run's verdict, confidence and cost, as the comparison table shows them."""

    protocol: str
    verdict: str | None
    confidence: float | None
    decided_by: str
    cost: Cost
    failed: str | None = None


def stream_side_by_side(claim: str, configs: Sequence[RunConfig], services: Services) -> Iterator[tuple[int, Event]]:
    """Yield ``(index of the config, event)`` while every config runs on ``claim`` at once.

    Bad input (an empty claim, an unknown protocol) raises before anything starts; a run
    that fails later ends in its own RunFailed event and the others go on.
    """
    for config in configs:
        preflight(claim, config, services)
    arrivals: queue.Queue[object] = queue.Queue()

    def drive(index: int, config: RunConfig) -> None:
        try:
            for evt in stream_run(claim, config, services):
                arrivals.put((index, evt))
        except Exception as exc:  # a bug inside one run: handed to the caller to raise
            arrivals.put(exc)
        finally:
            arrivals.put(_DONE)

    threads = [threading.Thread(target=drive, args=(i, c), name=f"compare-{i}", daemon=True) for i, c in enumerate(configs)]
    for thread in threads:
        thread.start()
    running = len(threads)
    while running:
        item = arrivals.get()
        if item is _DONE:
            running -= 1
            continue
        if isinstance(item, Exception):
            raise item
        assert isinstance(item, tuple)
        yield item
    for thread in threads:
        thread.join()


def summarize_run(events: Sequence[Event]) -> RunOutcome:
    """A run's verdict, confidence and cost (model calls, tokens, model time, wall time) from its events."""
    run = digest(events)
    verdict = run.verdict
    return RunOutcome(
        protocol=run.protocol or "?",
        verdict=verdict.label if verdict else None,
        confidence=verdict.confidence if verdict else None,
        decided_by=verdict.decided_by if verdict else "",
        cost=run.cost.rounded(3),
        failed=run.failure,
    )

"""How long a claim takes here: the median wall time of this installation's own stored runs.

The protocol picker shows it, so a checker or a teacher knows before pressing Verify that a
``toolmad`` claim takes minutes where ``desk`` takes one, on the machine and models they have
(the bench's figures are another machine's). Only runs that say what one claim costs when the
model is free count: finished with a verdict at the first attempt, run here (not imported), not
in step mode (a person's pauses are not the model's time), on the same models (backend, model
and address for every role), and alone: a run whose time overlapped another run's shared the
model with it (a batch, a side-by-side comparison, a colleague's run) and is left out.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.core.config import ROLES
from pipelines.core.text.times import duration
from pipelines.record.store import RunSummary

NEWEST = 20  # the median of at most this many of the newest runs that count: a new machine or model shows within a day


@dataclass(frozen=True)
class WallTime:
    seconds: float  # the median
    runs: int

    def describe(self, protocol: str) -> str:
        runs = "run" if self.runs == 1 else f"{self.runs} runs"
        median = "" if self.runs == 1 else " at the median"
        return (
            f"Here, a `{protocol}` claim took {duration(self.seconds)}{median} (its last {runs} on these models, with the model to itself)."
        )


def models_of(config: dict[str, Any]) -> tuple[str, ...]:
    """Which models a run used, as its stored snapshot names them: backend, model and address of every role."""
    return tuple(str((config.get(role) or {}).get(key) or "") for role in ROLES for key in ("backend", "model", "base_url"))


def ran_alone(runs: Sequence[RunSummary]) -> set[str]:
    """The runs here whose time overlapped no other run's (a run still going overlaps everything after its start)."""
    here = sorted((r for r in runs if r.origin == "run"), key=lambda r: r.created_at)
    alone: set[str] = set()
    latest_end = float("-inf")  # the latest end among the runs started before this one
    for i, run in enumerate(here):
        end = run.finished_at if run.finished_at is not None else float("inf")
        next_start = here[i + 1].created_at if i + 1 < len(here) else float("inf")
        if latest_end <= run.created_at and end <= next_start:
            alone.add(run.id)
        latest_end = max(latest_end, end)
    return alone


def typical_wall_time(runs: Sequence[RunSummary], protocol: str, models: tuple[str, ...]) -> WallTime | None:
    """The median wall time of the newest runs of ``protocol`` on ``models`` (``models_of`` a config's snapshot) that say
    what a claim costs; None when none do."""
    alone = ran_alone(runs)
    seconds = [
        run.finished_at - run.created_at
        for run in sorted(runs, key=lambda r: -r.created_at)
        if run.id in alone
        and run.protocol == protocol
        and run.status == "completed"
        and run.verdict is not None
        and run.stop_reason is None
        and run.attempts == 1
        and run.finished_at is not None
        and not (run.config.get("pauses") or {}).get("step_mode")
        and models_of(run.config) == models
    ][:NEWEST]
    return WallTime(statistics.median(seconds), len(seconds)) if seconds else None

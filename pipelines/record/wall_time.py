"""How long a claim takes here: the median wall time of this installation's own stored runs.

The protocol picker shows it, so a checker or a teacher knows before pressing Verify that a
``toolmad`` claim takes minutes where ``desk`` takes one, on the machine and models they have
(the bench's figures are another machine's). Only runs that say what one claim costs when the
model is free count: finished with a verdict at the first attempt, run here (not imported), not
in step mode (a person's pauses are not the model's time), on the same models (backend, model
and address for every role), and alone: a run whose time overlapped another run's shared the
model with it (a batch, a side-by-side comparison, a colleague's run) and is left out.

A debate protocol's claim whose debate was not run (``belief.debate_when``: desk's exhibits settled it, or none was
contested so no debate could change it) took desk's reading alone: those runs are counted apart, so "a radar claim took
4 minutes" is the time of a debate, and the caption says how many skipped it and how long they took.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.core.config import ROLES
from pipelines.core.text.times import duration
from pipelines.record.store import RunSummary
from pipelines.stages.exhibit_reading import NOT_DEBATED

NEWEST = 20  # the median of at most this many of the newest runs that count: a new machine or model shows within a day


@dataclass(frozen=True)
class WallTime:
    seconds: float | None  # the median of the runs that ran the protocol through (None: no debate was run in any of them)
    runs: int
    not_debated: int = 0  # runs whose debate was not run (belief.debate_when): desk's exhibits decided them, settled or uncontested
    not_debated_seconds: float | None = None  # their median

    def describe(self, protocol: str) -> str:
        said = []
        if self.seconds is not None:
            runs = "run" if self.runs == 1 else f"{self.runs} runs"
            median = "" if self.runs == 1 else " at the median"
            said.append(
                f"Here, a `{protocol}` claim took {duration(self.seconds)}{median} (its last {runs} on these models, with the model to itself)."
            )
        if self.not_debated and self.not_debated_seconds is not None:
            median = "" if self.not_debated == 1 else " at the median"
            if self.seconds is None:
                claims = "claim on these models was" if self.not_debated == 1 else f"{self.not_debated} claims on these models were"
                said.append(
                    f"Here, its last {claims} decided by desk's exhibits without a debate, in "
                    f"{duration(self.not_debated_seconds)}{median}; none has debated yet."
                )
            else:
                more = "1 more was" if self.not_debated == 1 else f"{self.not_debated} more were"
                said.append(f"{more} decided by desk's exhibits without a debate, in {duration(self.not_debated_seconds)}{median}.")
        return " ".join(said)


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
    counted = [
        run
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
    if not counted:
        return None
    debated: list[float] = []
    not_debated: list[float] = []
    for run in counted:
        if run.finished_at is not None:  # always, by the filter above: said again for the type checker
            (not_debated if run.decided_by in NOT_DEBATED else debated).append(run.finished_at - run.created_at)
    return WallTime(
        statistics.median(debated) if debated else None,
        len(debated),
        not_debated=len(not_debated),
        not_debated_seconds=statistics.median(not_debated) if not_debated else None,
    )

"""Steps of a stored run for a classroom step-through: where each round (and each checker review) ends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.core.events import (
    Event,
    RoundStarted,
    RunStarted,
    StageCompleted,
    StepPaused,
    StepResumed,
    VerdictOverridden,
    VerdictReached,
)


@dataclass(frozen=True)
class Step:
    """Events ``[0, end)`` of the run are shown at this step."""

    end: int
    title: str


def steps(events: Sequence[Event]) -> list[Step]:
    """Cut the run before each round, after each checker review and before the ruling; a run without rounds is cut after
    each stage. The last round's arguments are a step of their own, so a class hears both sides before the verdict; a
    step that would show only the claim (the run's first event) is left out: the page shows the claim already."""
    cuts: dict[int, str] = {}
    has_rounds = any(isinstance(e, RoundStarted | StepResumed) for e in events)
    for i, e in enumerate(events):
        if isinstance(e, RoundStarted) and i > 0:
            cuts.setdefault(i, _title(events, i))
        elif isinstance(e, StepResumed):
            cuts[i + 1] = f"Checker's review after round {e.round}" if e.round else "Checker's review of the planned queries"
        elif isinstance(e, StepPaused):
            cuts.setdefault(i + 1, f"Paused after round {e.round}" if e.round else "Paused before the first search")
        elif not has_rounds and isinstance(e, StageCompleted):
            cuts[i + 1] = f"Stage done: {e.stage}"
        elif has_rounds and isinstance(e, VerdictReached):
            cuts.setdefault(i, _title(events, i, none_yet="Before the verdict"))
    cuts.pop(len(events), None)
    only_the_claim = 1 if events and isinstance(events[0], RunStarted) else 0
    result = [Step(end=end, title=title) for end, title in sorted(cuts.items()) if only_the_claim < end < len(events)]
    final = "Verdict" if any(isinstance(e, VerdictReached | VerdictOverridden) for e in events) else "End of the record"
    result.append(Step(end=len(events), title=final))
    return result


def _title(events: Sequence[Event], i: int, none_yet: str = "Before the first round") -> str:
    previous = [e for e in events[:i] if isinstance(e, RoundStarted)]
    return previous[-1].heading if previous else none_yet

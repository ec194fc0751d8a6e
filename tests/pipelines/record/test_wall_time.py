"""How long a claim takes here: only runs that had the model to themselves, on the same models, tell it."""

from __future__ import annotations

import os
from dataclasses import replace
from unittest import mock

from pipelines.core.config import RunConfig
from pipelines.core.text.times import duration
from pipelines.record.digest import Cost
from pipelines.record.store import RunSummary
from pipelines.record.wall_time import models_of, ran_alone, typical_wall_time
from tests.environment import settings_free_environment

# Built at import, before any fixture clears the shell's settings: every field models_of reads is given, so no
# DEBATEDESK_* variable a developer exported can change them.
with mock.patch.dict(os.environ, settings_free_environment(), clear=True):  # the shell's DEBATEDESK_* settings read nothing here
    EMBEDDED = RunConfig.model_validate(
        {role: {"backend": "embedded", "model": "", "base_url": ""} for role in ("debater", "judge", "scorer")}
    )
    FAKE = RunConfig.model_validate({role: {"backend": "fake", "model": "", "base_url": ""} for role in ("debater", "judge", "scorer")})
ON_EMBEDDED, ON_FAKE = models_of(EMBEDDED.snapshot()), models_of(FAKE.snapshot())


def run(
    run_id: str, start: float, seconds: float | None, protocol: str = "toolmad", config: RunConfig = EMBEDDED, **changes: object
) -> RunSummary:
    summary = RunSummary(
        id=run_id,
        claim="Masks reduce transmission",
        protocol=protocol,
        status="completed" if seconds is not None else "running",
        verdict="SUPPORTS" if seconds is not None else None,
        confidence=0.8,
        created_at=start,
        finished_at=start + seconds if seconds is not None else None,
        cost=Cost(),
        config=config.snapshot(),
    )
    return replace(summary, **changes)  # type: ignore[arg-type]


def test_the_median_of_the_runs_that_ran_alone_on_the_same_models() -> None:
    runs = [
        run("a", 0, 300),
        run("b", 1000, 280),
        run("c", 2000, 330),
        run("desk", 3000, 70, protocol="desk"),  # another protocol: ran alone, but not a toolmad claim
        run("fake", 4000, 2, config=FAKE),  # another model
    ]
    took = typical_wall_time(runs, "toolmad", ON_EMBEDDED)
    assert took is not None and (took.seconds, took.runs) == (300, 3)
    assert (
        took.describe("toolmad")
        == "Here, a `toolmad` claim took 5 min 00 s at the median (its last 3 runs on these models, with the model to itself)."
    )
    desk = typical_wall_time(runs, "desk", ON_EMBEDDED)
    assert (
        desk is not None
        and desk.describe("desk") == "Here, a `desk` claim took 1 min 10 s (its last run on these models, with the model to itself)."
    )
    fake = typical_wall_time(runs, "toolmad", ON_FAKE)
    assert fake is not None and fake.seconds == 2


def test_runs_that_shared_the_model_or_a_person_s_time_do_not_count() -> None:
    runs = [
        run("alone", 0, 300),
        run("batch-1", 1000, 600),  # a batch of two at once: each took longer for the other
        run("batch-2", 1010, 590),
        run("step", 3000, 900, config=RunConfig.model_validate({"pauses": {"step_mode": True}})),  # a person's pauses
        run("resumed", 5000, 400, attempts=2),  # its time spans the outage and the resume
        run("imported", 10, 50, origin="imported from a.json"),  # another installation's clock and machine
        run("failed", 7000, 30, status="failed", verdict=None),
        run("stopped", 8000, 40, verdict=None, stop_reason="the spend limit"),
        run("going", 9000, None),  # still running: whatever starts after it shares the model
        run("after", 9100, 200),
    ]
    assert ran_alone(runs) == {"alone", "step", "resumed", "failed", "stopped"}
    took = typical_wall_time(runs, "toolmad", ON_EMBEDDED)
    assert took is not None and (took.seconds, took.runs) == (300, 1)


def test_nothing_is_said_before_a_run_counts() -> None:
    assert typical_wall_time([], "toolmad", ON_EMBEDDED) is None
    assert typical_wall_time([run("a", 0, 100, protocol="desk")], "toolmad", ON_EMBEDDED) is None


def test_only_the_newest_runs_count() -> None:
    """A new machine or model shows within a day: the median is of the newest 20 that count."""
    old = [run(f"old{i}", i * 1000, 900) for i in range(20)]
    new = [run(f"new{i}", 100_000 + i * 1000, 100) for i in range(20)]
    took = typical_wall_time(old + new, "toolmad", ON_EMBEDDED)
    assert took is not None and (took.seconds, took.runs) == (100, 20)


def test_a_duration_reads_as_a_person_says_it() -> None:
    assert [duration(s) for s in (0.4, 45, 59.6, 307, 3600 + 185)] == ["0 s", "45 s", "1 min 00 s", "5 min 07 s", "1 h 03 min"]


def test_claims_whose_debate_was_not_run_are_counted_apart() -> None:
    from pipelines.stages.exhibit_reading import SETTLED, UNCONTESTED

    debated = [run(f"d{i}", i * 1000, 240 + i, protocol="radar", decided_by="judge") for i in range(3)]
    # both kinds of skipped debate: desk's exhibits settled the claim, or none was contested so no debate could change it
    settled = [run(f"s{i}", 10_000 + i * 1000, 40 + i, protocol="radar", decided_by=(SETTLED, UNCONTESTED)[i % 2]) for i in range(4)]
    took = typical_wall_time(debated + settled, "radar", ON_EMBEDDED)
    assert took is not None and (took.seconds, took.runs, took.not_debated, took.not_debated_seconds) == (241, 3, 4, 41.5)
    assert took.describe("radar") == (
        f"Here, a `radar` claim took {duration(241)} at the median (its last 3 runs on these models, with the model to itself). "
        f"4 more were decided by desk's exhibits without a debate, in {duration(41.5)} at the median."
    )
    only = typical_wall_time(settled[:1], "radar", ON_EMBEDDED)
    assert only is not None and only.seconds is None
    assert only.describe("radar") == (
        f"Here, its last claim on these models was decided by desk's exhibits without a debate, in {duration(40)}; none has debated yet."
    )

"""The steps a stored run is walked through in (History, the Replay page): a class hears the last round's two sides
before the verdict, and no step shows only the claim."""

from __future__ import annotations

import pytest

from pipelines.core.events import RoundStarted, RunStarted, StageCompleted, VerdictReached
from pipelines.protocols.base import PROTOCOLS
from pipelines.record.replay import steps
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config, protocol_config

CLAIM = "Masks reduce transmission of respiratory viruses"


def test_a_debate_s_last_round_is_a_step_before_its_verdict(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("toolmad", rounds=2, early_stop=False), services))
    cut = steps(events)
    ruled = next(i for i, e in enumerate(events) if isinstance(e, VerdictReached))
    rounds = [e.heading for e in events if isinstance(e, RoundStarted)]
    assert len(rounds) == 2
    assert [s.title for s in cut] == [*rounds, "Verdict"]
    assert cut[-2].end == ruled, "the last round's step ends just before the ruling"
    assert cut[-1].end == len(events)
    assert all(s.end > 1 for s in cut), "no step holds only the run's first event"


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_every_protocol_s_steps_grow_and_end_on_the_verdict(services: Services, protocol: str) -> None:
    events = list(stream_run(CLAIM, fake_config(protocol=protocol), services))
    cut = steps(events)
    ends = [s.end for s in cut]
    assert ends == sorted(set(ends)) and ends[0] > 1 and ends[-1] == len(events)
    assert cut[-1].title == "Verdict"
    if not any(isinstance(e, RoundStarted) for e in events):  # cut after each stage
        assert all(isinstance(events[s.end - 1], StageCompleted) for s in cut[:-1])
    else:  # the verdict is its own step, after the rounds
        assert len(cut) > 1 and not any(isinstance(e, VerdictReached) for e in events[: cut[-2].end])


def test_a_run_cut_short_keeps_what_it_has() -> None:
    events = [RunStarted(run_id="r", claim="c", protocol="single", config={})]
    assert [(s.end, s.title) for s in steps(events)] == [(1, "End of the record")]

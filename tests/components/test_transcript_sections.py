"""AppTest: a transcript's sections follow the run: rounds, proclaim's role switch after them, a judge's ruling last."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from pipelines.core.events import dump_event
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config

CLAIM = "Masks reduce transmission of respiratory viruses"


def render_replay(events_json: list[dict]) -> None:  # runs inside AppTest
    from components.transcript import replay
    from pipelines.core.events import parse_event

    replay([parse_event(e) for e in events_json], key="sections")


def replayed(services: Services, **config: object) -> AppTest:
    services.store = None
    events = [dump_event(e) for e in stream_run(CLAIM, fake_config(**config), services)]
    at = AppTest.from_function(render_replay, args=(events,), default_timeout=60)
    at.run()
    assert not at.exception
    return at


def test_mads_judge_rules_in_a_ruling_section_not_a_round_4(services: Services) -> None:
    at = replayed(services, protocol="mad")
    assert [h.value for h in at.subheader] == ["Round 1", "Round 2", "Round 3", "Ruling"]
    headers = [m.value for m in at.markdown if m.value.startswith("**Judge**")]
    assert headers == ["**Judge**"]  # no "· round 4"


def test_proclaims_role_switch_is_a_section_after_the_debate(services: Services) -> None:
    at = replayed(services, protocol="proclaim")
    headings = [h.value for h in at.subheader]
    assert headings[-1] == "Role switch" and headings[:-1] == [f"Round {i}" for i in range(1, len(headings))]
    switched = [m.value for m in at.markdown if "→" in m.value and m.value.startswith("**")]
    assert switched and all("· role switch" in h for h in switched)

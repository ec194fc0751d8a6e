"""AppTest: a replayed run draws each protocol panel once, not once per event that changes it, and still shows it whole.

A finished run's events are fed again on every rerun of its page; drawn event by event, desk's exhibit table was built,
sent to the browser and drawn once per exhibit read, and the belief chart once per reading."""

from __future__ import annotations

import json
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.core.events import BeliefRead, ExhibitStanceRead, dump_event
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config

CLAIM = "Masks reduce transmission of respiratory viruses"
DRAWS = ("_render_exhibits", "_render_confidence", "_render_picks", "_render_memory", "_render_omissions")


def render_counting(events_json: list[dict], draws: tuple[str, ...]) -> None:  # runs inside AppTest, as a script
    import json
    from typing import Any  # noqa: F401  # the nested annotations below are evaluated: AppTest runs this body as a script

    import streamlit as st

    from components import protocol_panels
    from components.transcript import replay
    from pipelines.core.events import parse_event

    counts: dict[str, int] = {}
    originals = {name: getattr(protocol_panels.ProtocolPanels, name) for name in draws}
    originals_belief = protocol_panels.BeliefPanel.render

    def counting(name: str, original: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] = counts.get(name, 0) + 1
            return original(*args, **kwargs)

        return counted

    for name, original in originals.items():
        setattr(protocol_panels.ProtocolPanels, name, counting(name, original))
    protocol_panels.BeliefPanel.render = counting("belief", originals_belief)  # type: ignore[method-assign]
    try:
        replay([parse_event(e) for e in events_json], key="redraws")
    finally:
        for name, original in originals.items():
            setattr(protocol_panels.ProtocolPanels, name, original)
        protocol_panels.BeliefPanel.render = originals_belief  # type: ignore[method-assign]
    st.text("draws " + json.dumps(counts))


@pytest.mark.parametrize("protocol", ["desk", "radar"])
def test_a_replayed_run_draws_each_panel_once_and_whole(services: Services, protocol: str) -> None:
    services.store = None
    events = list(stream_run(CLAIM, fake_config(protocol=protocol), services))
    stances = {e.evidence_id for e in events if isinstance(e, ExhibitStanceRead)}
    readings = [e for e in events if isinstance(e, BeliefRead)]
    at = AppTest.from_function(render_counting, args=([dump_event(e) for e in events], DRAWS), default_timeout=60)
    at.run()
    assert not at.exception

    counts = json.loads(next(t.value for t in at.text if t.value.startswith("draws ")).removeprefix("draws "))
    assert len(readings) >= 2 and counts.get("belief") == 1, f"{len(readings)} readings drawn {counts.get('belief')} times"
    assert all(n == 1 for n in counts.values()), counts
    if protocol == "desk":
        assert len(stances) >= 5 and counts.get("_render_exhibits") == 1
        table = " ".join(str(h.proto.body) for h in at.get("html"))
        assert all(f">{eid}<" in table for eid in stances), "every exhibit read is in the one table drawn"

"""AppTest: the Verify page shows the court record under a `proclaim` run, and only then."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.core.events import dump_event
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.stages.admissibility import FROM_READING
from tests.components.conftest import fake_app
from tests.fakes import fake_config

ROOT = Path(__file__).resolve().parents[2]


def verify_page(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, protocol: str) -> AppTest:
    at = fake_app(monkeypatch, demo_data_dir, timeout=180, protocol=protocol)
    at.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    at.button[0].click().run()
    assert not at.exception
    return at


def test_a_proclaim_run_shows_the_court_record_and_keeps_it_after_a_rerun(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = verify_page(monkeypatch, demo_data_dir, "proclaim")
    labels = [t.label for t in at.tabs]
    assert labels == ["🧾 Evidence inspector", "⚖️ Panel", "📈 Rounds", "✅ Premises"]
    text = " ".join(m.value for m in at.markdown)
    assert "Judge 1" in text and "c_final" in text and "addressed" in text
    assert any("Stopped after round" in i.value for i in at.info)
    at.multiselect(key="audit.verify.status").select("admitted").run()  # a filter change reruns the page from the stored events
    assert not at.exception and [t.label for t in at.tabs] == labels
    assert any("exhibits. Click a column header" in c.value for c in at.caption)


def test_other_protocols_show_no_court_record(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = verify_page(monkeypatch, demo_data_dir, "single")
    assert not at.tabs and "Court record" not in " ".join(h.value for h in at.subheader)


def render_partial(events_json: list[dict]) -> None:  # runs inside AppTest
    from components.courtroom import render_courtroom_audit
    from pipelines.core.events import parse_event

    render_courtroom_audit([parse_event(e) for e in events_json], key="partial")


def test_the_court_record_renders_any_prefix_of_a_run(services: Services) -> None:
    """History steps through a stored run: every prefix of its events must render (panel not ruled yet, rounds going on)."""
    services.store = None
    events = [
        dump_event(e) for e in stream_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="proclaim"), services)
    ]
    for cut in (3, len(events) // 3, 2 * len(events) // 3, len(events)):
        at = AppTest.from_function(render_partial, args=(events[:cut],), default_timeout=60)
        at.run()
        assert not at.exception, (cut, at.exception)
        if cut > 3:
            assert [t.label for t in at.tabs][:2] == ["🧾 Evidence inspector", "⚖️ Panel"]
    assert any(
        "The panel has not ruled yet" in c.value
        for c in AppTest.from_function(render_partial, args=(events[: len(events) // 3],)).run().caption
    )


def test_the_inspector_says_where_relevance_came_from(services: Services) -> None:
    """A grounded court rules from desk's stance reading (proclaim.relevance_from): the record's caption says r is that reading."""
    services.store = None
    events = [
        dump_event(e) for e in stream_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="proclaim"), services)
    ]
    read = [
        {**e, "admissibility": {**e["admissibility"], "reason": f"{FROM_READING}: p(addresses the claim) 0.80, p(does not) 0.20"}}
        if e["type"] == "AdmissibilityAssessed"
        else e
        for e in events
    ]
    said = {}
    for name, run in (("judge", events), ("reading", read)):
        at = AppTest.from_function(render_partial, args=(run,), default_timeout=60).run()
        assert not at.exception
        said[name] = " ".join(c.value for c in at.caption)
    assert "w = r × c" in said["judge"] and "desk's stance reading" not in said["judge"]
    assert "r from desk's stance reading" in said["reading"]

"""AppTest drives the Verify page in step mode and the History page (filters, import, override, export), on the fake backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.core.config import AppSettings
from pipelines.core.text.safety import escape_markdown
from pipelines.record.record_file import to_json
from pipelines.record.store import RunStore
from tests.components.conftest import fake_app

ROOT = Path(__file__).resolve().parents[2]
CLAIM = "Masks reduce transmission of respiratory viruses on buses"


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> AppTest:
    at = fake_app(monkeypatch, demo_data_dir, timeout=120)
    at.sidebar.selectbox(key="cfg.protocol").select("single").run()  # two pauses, before the search and before the answer
    return at


def store_of(demo_data_dir: Path) -> RunStore:
    return RunStore(AppSettings(data_dir=demo_data_dir).sqlite_url)


def text_of(at: AppTest) -> str:
    return " ".join([m.value for m in at.markdown] + [i.value for i in at.info] + [c.value for c in at.caption])


def test_step_mode_pauses_and_the_form_submits_the_review(app: AppTest, demo_data_dir: Path) -> None:
    app.sidebar.text_input(key="checker_name.widget").input("Ana").run()
    app.sidebar.toggle(key="cfg.step").set_value(True).run()
    app.text_area(key="claim_text").input(CLAIM)
    app.button[0].click().run()
    assert not app.exception
    assert "Paused before the first search — your turn" in text_of(app)
    query = next(t for t in app.text_input if t.label == "Next query for Analyst")
    query.input("bus ventilation masks study")
    next(b for b in app.button if b.label.startswith("Stop and rule")).click().run()
    assert not app.exception
    text = text_of(app)
    assert "edited" in text and "bus ventilation masks study" in text and "stopped the debate" in text
    assert "Verdict" in text, "stop before the search: the agent rules on no evidence"
    run_id = app.session_state["last_run_id"]
    kinds = [type(e).__name__ for e in store_of(demo_data_dir).events(run_id)]
    assert kinds.count("StepPaused") == 1 and "CheckerEditedQuery" in kinds and kinds[-1] == "VerdictReached"


def test_a_strike_without_a_reason_is_refused_with_a_message(app: AppTest) -> None:
    app.sidebar.text_input(key="checker_name.widget").input("Ana").run()
    app.sidebar.toggle(key="cfg.step").set_value(True).run()
    app.text_area(key="claim_text").input(CLAIM)
    app.button[0].click().run()
    next(b for b in app.button if b.label.startswith("Continue")).click().run()
    assert "Paused after round 1 — your turn" in text_of(app)
    strike = next(r for r in app.radio if r.key and r.key.endswith(".ev.E1"))
    strike.set_value("strike")
    next(b for b in app.button if b.label.startswith("Continue")).click().run()
    assert any("give a reason for E1" in e.value for e in app.error)
    assert "Paused after round 1 — your turn" in text_of(app), "still paused"


def test_history_filters_imports_and_overrides(app: AppTest, demo_data_dir: Path, tmp_path: Path) -> None:
    app.text_area(key="claim_text").input(CLAIM)
    app.button[0].click().run()
    run_id = app.session_state["last_run_id"]
    app.switch_page("pages/history.py").run()
    assert not app.exception
    app.text_input(key="history.claim").input("on buses").run()
    app.selectbox(key="history.open").select(run_id).run()
    assert not app.exception
    assert any("Step" in c.value and "Verdict" in c.value for c in app.caption)
    labels = [b.label for b in app.button]
    assert not any("Resume" in label for label in labels), "a completed run is not resumable"

    app.sidebar.text_input(key="checker_name.widget").input("Ana ![x](https://evil.example/p.png)").run()
    options = app.selectbox(key=f"history-{run_id}.override.label").options
    assert [o.split(" (")[0] for o in options] == ["SUPPORTED", "REFUTED", "NOT ENOUGH INFO"], "the one vocabulary"
    assert "SUPPORTED (the protocol's word: SUPPORTS)" in options
    app.selectbox(key=f"history-{run_id}.override.label").set_value("REFUTED")
    next(b for b in app.button if b.label == "Record my verdict").click().run()
    assert any("give a reason for your verdict" in e.value for e in app.error), "no reason, no override"
    assert store_of(demo_data_dir).get_run(run_id).checker_verdict is None  # type: ignore[union-attr]
    app.selectbox(key=f"history-{run_id}.override.label").set_value("REFUTED")
    app.text_area(key=f"history-{run_id}.override.note").input("the bus study was retracted")
    next(b for b in app.button if b.label == "Record my verdict").click().run()
    assert any(f"Recorded: REFUTED by {escape_markdown('Ana ![x](https://evil.example/p.png)')}" in s.value for s in app.success)
    assert "Checker's verdict" in text_of(app)
    store = store_of(demo_data_dir)
    assert store.get_run(run_id).final_verdict == "REFUTED"  # type: ignore[union-attr]
    record = json.loads(to_json(store.get_run(run_id), store.events(run_id)))  # type: ignore[arg-type]
    assert record["events"][-1]["type"] == "VerdictOverridden" and record["events"][-1]["model_verdict"]["label"]


def test_the_line_naming_a_run_in_historys_box_holds_while_the_run_ends_and_is_overridden(app: AppTest, demo_data_dir: Path) -> None:
    """A browser sends back the line it shows, and Streamlit empties a box whose line is gone: the open run closed as it ended."""
    from pipelines.core.domain import Verdict
    from pipelines.core.events import RunStarted, VerdictOverridden, VerdictReached

    store = store_of(demo_data_dir)
    store.create_run("trams-1", "Ventilation on trams cuts infections", "single", {})
    store.append("trams-1", RunStarted(run_id="trams-1", claim="Ventilation on trams cuts infections", protocol="single", config={}))
    app.switch_page("pages/history.py").run()
    app.text_input(key="history.claim").input("on trams").run()

    def line() -> str:
        return next(o for o in app.selectbox(key="history.open").options if o.endswith("trams-1"))

    while_running = line()
    app.selectbox(key="history.open").select("trams-1").run()
    store.append("trams-1", VerdictReached(verdict=Verdict(label="SUPPORTS", confidence=0.8)))
    store.finish("trams-1", "completed")
    app.run()
    assert line() == while_running, "ended"
    store.append("trams-1", VerdictOverridden(label="REFUTES", by="Ana", note="retracted"))
    app.run()
    assert line() == while_running, "overridden"
    assert "Ventilation on trams cuts infections · single ·" in while_running
    assert app.selectbox(key="history.open").value == "trams-1" and app.subheader[0].value.startswith("Ventilation on trams")

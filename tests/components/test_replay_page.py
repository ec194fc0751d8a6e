"""AppTest: the Replay page shows one stored run alone, step by step, opened by its link or chosen in its box; a link to a
run that is not here is said plainly."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.conftest import ROOT, fake_app

CLAIM = "Masks reduce transmission of respiratory viruses"


def test_a_run_opened_by_its_replay_link_walks_step_by_step(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path) -> None:
    at = fake_app(monkeypatch, demo_data_dir, database_url=f"sqlite:///{tmp_path / 'runs.sqlite'}")
    at.text_area(key="claim_text").input(CLAIM)
    at.selectbox(key="cfg.protocol").select("single").run()
    next(b for b in at.button if b.label == "Verify").click().run()
    run_id = next(c.value for c in at.code if "/history?run=" in c.value).rsplit("=", 1)[1]

    room = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)  # a new session: the teacher's screen
    room.query_params["replay"] = run_id
    room.run()
    room.switch_page("pages/replay.py").run()
    assert not room.exception, room.exception
    assert room.title[0].value == "🎓 Replay" and room.subheader[0].value.startswith("Masks reduce")
    first = next(c.value for c in room.caption if c.value.startswith("Step "))
    assert first.startswith("Step 1 of "), "a class starts at the beginning"
    next(b for b in room.button if b.key == "replay.next").click().run()
    later = next(c.value for c in room.caption if c.value.startswith("Step "))
    assert later.startswith("Step 2 of ")

    wrong = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    wrong.query_params["replay"] = "nothere"
    wrong.run()
    wrong.switch_page("pages/replay.py").run()
    assert any("No run nothere on this desk" in w.value for w in wrong.warning)


def test_the_replay_page_starts_a_run_at_its_first_step_and_history_at_its_last(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path
) -> None:
    """A class watches the debate before it sees the verdict: the Replay page opened on the verdict (History still does)."""
    app = fake_app(monkeypatch, demo_data_dir, timeout=120)
    app.sidebar.selectbox(key="cfg.protocol").select("single").run()
    app.text_area(key="claim_text").input(CLAIM)
    app.button[0].click().run()
    run_id = app.session_state["last_run_id"]
    app.switch_page("pages/replay.py").run()
    app.selectbox(key="replay.run").select(run_id).run()
    assert not app.exception

    def step() -> str:
        return next(c.value for c in app.caption if c.value.startswith("Step "))

    first = step()
    total = int(first.split(" of ")[1].split(":")[0])
    assert first.startswith("Step 1 of ") and total > 1 and "Verdict" not in first

    def verdict_shown() -> bool:
        return any(c.value.startswith("Decided by ") for c in app.caption)

    assert not verdict_shown(), "no verdict yet"
    for _ in range(total - 1):
        next(b for b in app.button if b.label == "Next ▶").click().run()
    assert step().startswith(f"Step {total} of {total}: **Verdict**") and verdict_shown()
    app.switch_page("pages/history.py").run()
    app.selectbox(key="history.open").select(run_id).run()
    assert step().startswith(f"Step {total} of {total}: **Verdict**")


def test_step_after_moves_one_step_once_its_seconds_have_passed_and_never_past_the_end() -> None:
    from components.stepper import step_after

    assert step_after(1, 4, last=100.0, now=101.0, every=4) == (1, 100.0), "too soon"
    assert step_after(1, 4, last=100.0, now=103.9, every=4) == (2, 103.9), "a tick a moment early still moves"
    assert step_after(2, 4, last=100.0, now=130.0, every=4) == (3, 130.0), "one step a tick, however late the tick"
    assert step_after(4, 4, last=100.0, now=130.0, every=4) == (4, 100.0), "the last step stays"


def test_play_moves_the_replay_on_by_itself_and_stops_at_the_verdict(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    """A teacher presses Play and talks; the page moves a step every few seconds. AppTest has no clock, so each ``run``
    here stands for a tick of the page's own (tests/e2e/test_replay_browser.py watches the clock in a browser)."""
    import time

    app = fake_app(monkeypatch, demo_data_dir, timeout=120)
    app.sidebar.selectbox(key="cfg.protocol").select("single").run()
    app.text_area(key="claim_text").input("Tides follow the Moon, for a class")
    app.button[0].click().run()
    run_id = app.session_state["last_run_id"]
    app.switch_page("pages/replay.py").run()
    app.selectbox(key="replay.run").select(run_id).run()

    def step() -> str:
        return next(c.value for c in app.caption if c.value.startswith("Step "))

    total = int(step().split(" of ")[1].split(":")[0])
    assert step().startswith("Step 1 of ") and total > 3
    app.select_slider(key=f"replay_play.{run_id}.every").set_value(2).run()
    next(b for b in app.button if b.label == "▶ Play").click().run()
    assert any(b.label == "⏸ Pause" for b in app.button) and step().startswith("Step 1 of "), "it waits its seconds first"
    time.sleep(2)
    app.run()
    assert step().startswith("Step 2 of ")
    time.sleep(1.8)
    next(b for b in app.button if b.label == "Next ▶").click().run()  # by hand, late in the step's seconds
    time.sleep(0.4)
    app.run()
    assert step().startswith("Step 3 of "), "a step moved by hand gets its own seconds, not what was left of the last"
    next(b for b in app.button if b.label == "⏸ Pause").click().run()
    time.sleep(2)
    app.run()
    assert step().startswith("Step 3 of ") and any(b.label == "▶ Play" for b in app.button), "paused, it stays"
    for _ in range(total - 4):  # to the step before the verdict by hand
        next(b for b in app.button if b.label == "Next ▶").click().run()
    next(b for b in app.button if b.label == "▶ Play").click().run()
    time.sleep(2)
    app.run()
    assert step().startswith(f"Step {total} of {total}")
    time.sleep(2)
    app.run()
    assert any(b.label == "▶ Play" for b in app.button) and step().startswith(f"Step {total} of {total}"), "stopped at the verdict"

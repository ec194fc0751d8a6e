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
    last = next(c.value for c in room.caption if c.value.startswith("Step "))
    next(b for b in room.button if b.key == "replay.prev").click().run()
    earlier = next(c.value for c in room.caption if c.value.startswith("Step "))
    assert earlier != last and int(earlier.split()[1]) == int(last.split()[1]) - 1

    wrong = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    wrong.query_params["replay"] = "nothere"
    wrong.run()
    wrong.switch_page("pages/replay.py").run()
    assert any("No run nothere on this desk" in w.value for w in wrong.warning)

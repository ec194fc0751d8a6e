"""AppTest: the app opens over a damaged spill file, stores its good lines and says which file it set aside (issue 46)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.core.events import StageCompleted
from pipelines.record.spill import SET_ASIDE, Spill
from pipelines.record.store import RunStore
from tests.components.conftest import fake_app

CLAIM = "Masks reduce transmission of respiratory viruses"


def test_the_app_says_which_spill_file_it_set_aside_and_goes_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{(tmp_path / 'runs.sqlite').resolve()}")
    store.create_run("r1", CLAIM, "single", {})
    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1"))
    spilled.events([StageCompleted(stage="a"), StageCompleted(stage="b")])
    spilled.close()
    text = spilled.path.read_text()
    spilled.path.write_text(text[:-20])  # the last line cut, as a killed writer leaves it
    store.engine.dispose()

    at = fake_app(monkeypatch, tmp_path)
    assert not at.exception, at.exception
    shown = [w.value.replace("\\", "") for w in at.warning]  # markdown-escaped: the path's - _ . as \- \_ \.
    assert any(spilled.path.name in w and "set aside" in w and "cut off" in w for w in shown), shown
    assert (spilled.path.parent / (spilled.path.name + SET_ASIDE)).is_file()
    assert [getattr(e, "stage", None) for e in RunStore(store.url).events("r1")] == ["a"]

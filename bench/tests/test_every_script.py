"""Every bench script imports and answers --help: a script nobody has run since a module moved fails here, not on the
day someone needs its figures."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    f"bench.{p.relative_to(BENCH).with_suffix('').as_posix().replace('/', '.')}"
    for p in [*BENCH.glob("*.py"), *BENCH.glob("analysis/*.py"), *BENCH.glob("data/*.py")]
    if p.name != "__init__.py"
)


def test_the_scripts_are_found() -> None:
    assert "bench.desk" in SCRIPTS and "bench.analysis.deciding_depth" in SCRIPTS and "bench.data.make_fm2" in SCRIPTS and len(SCRIPTS) > 30


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_script_imports_and_answers_help(name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(name)
    main = getattr(module, "main", None)
    if main is None:  # a library the scripts share (cache, baseline...): importing it is the check
        assert not name.startswith("bench.analysis."), f"{name} is a script: give it a main()"
        return
    monkeypatch.setattr(sys, "argv", [name, "--help"])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code in (0, None) and "usage" in capsys.readouterr().out.lower()

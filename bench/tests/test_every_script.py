"""Every bench script imports and answers --help the way the docs run it, ``python bench/NAME.py --help`` in a process of
its own (the script's folder first on sys.path, its ``__main__`` block run; forked from one process that imported the
libraries, tests/forked.py): a script nobody has run since a module
moved fails here, not on the day someone needs its figures."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.environment import settings_free_environment
from tests.forked import Forked

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
FILES = sorted(p for p in [*BENCH.glob("*.py"), *BENCH.glob("analysis/*.py"), *BENCH.glob("data/*.py")] if p.name != "__init__.py")
MODULES = sorted(f"bench.{p.relative_to(BENCH).with_suffix('').as_posix().replace('/', '.')}" for p in FILES)
SCRIPTS = [p.relative_to(ROOT).as_posix() for p in FILES if 'if __name__ == "__main__":' in p.read_text()]
HELP_TIMEOUT_S = 300  # a script that imports torch takes a while on a loaded 2-core machine


def test_the_scripts_are_found() -> None:
    assert "bench.desk" in MODULES and "bench.analysis.deciding_depth" in MODULES and "bench.data.make_fm2" in MODULES and len(MODULES) > 30
    assert "bench/desk.py" in SCRIPTS and "bench/analysis/deciding_depth.py" in SCRIPTS and len(SCRIPTS) > 30


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports(name: str) -> None:
    module = importlib.import_module(name)  # `python -m bench.NAME` imports it this way
    if getattr(module, "main", None) is None:  # a library the scripts share (cache, baseline...): importing it is the check
        assert not name.startswith("bench.analysis."), f"{name} is a script: give it a main()"
    else:
        assert f"bench/{name.removeprefix('bench.').replace('.', '/')}.py" in SCRIPTS, f"{name} has a main() but no __main__ block"


@pytest.fixture(scope="module")
def forked() -> Iterator[Forked]:
    with Forked(ROOT, settings_free_environment()) as server:  # each script a process of its own, torch imported once
        yield server


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_script_answers_help(script: str, forked: Forked) -> None:
    done = forked.run([sys.executable, script, "--help"], timeout=HELP_TIMEOUT_S)
    assert done.returncode == 0, f"python {script} --help exited {done.returncode}:\n{done.stderr[-2000:]}"
    assert done.stdout.lower().startswith("usage:"), f"python {script} --help printed no usage line:\n{done.stdout[:500]}"

"""tests/forked.py gives each command what a process of its own would: argv, sys.path[0], exit status, output, exit hooks."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forked import Forked

SCRIPT = """
import atexit, os, sys, threading, time
print("argv", sys.argv[1:])
print("path0", sys.path[0])
print("stdin", repr(sys.stdin.read()))
print("pipelines loaded", "pipelines" in sys.modules)
print("said on stderr", file=sys.stderr)
atexit.register(lambda: print("atexit ran"))
threading.Thread(target=lambda: (time.sleep(0.2), print("thread joined"))).start()
if "--sleep" in sys.argv:
    time.sleep(30)
if "--raise" in sys.argv:
    raise ValueError("broken")
sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
"""


@pytest.fixture
def forked(tmp_path: Path) -> Iterator[Forked]:
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "script.py").write_text(SCRIPT)
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "__init__.py").write_text("")
    (tmp_path / "mod" / "__main__.py").write_text(SCRIPT)
    with Forked(tmp_path, {"PATH": os.environ.get("PATH", "")}, libraries=("json",)) as server:
        yield server


def test_a_script_runs_as_python_script_would(forked: Forked, tmp_path: Path) -> None:
    done = forked.run([sys.executable, "tool/script.py", "a b", "3"])
    assert done.returncode == 3
    assert "argv ['a b', '3']" in done.stdout
    assert f"path0 {tmp_path / 'tool'}" in done.stdout  # the script's folder, as `python tool/script.py` sets it
    assert "stdin ''" in done.stdout  # not the server's pipe
    assert "pipelines loaded False" in done.stdout  # the project is imported by each command, never by the server
    assert done.stdout.rstrip().endswith("atexit ran") and "thread joined" in done.stdout
    assert done.stderr == "said on stderr\n"


def test_a_module_runs_as_python_m_would(forked: Forked, tmp_path: Path) -> None:
    done = forked.run([sys.executable, "-m", "mod", "x"])
    assert done.returncode == 0
    assert "argv ['x']" in done.stdout and f"path0 {tmp_path}" in done.stdout


def test_an_uncaught_error_exits_1_with_its_traceback_and_the_next_command_still_runs(forked: Forked) -> None:
    done = forked.run([sys.executable, "tool/script.py", "--raise"])
    assert done.returncode == 1 and "Traceback" in done.stderr and "ValueError: broken" in done.stderr
    assert forked.run([sys.executable, "tool/script.py"]).returncode == 0


def test_a_command_over_its_time_is_killed(forked: Forked) -> None:
    done = forked.run([sys.executable, "tool/script.py", "--sleep"], timeout=0.5)  # under a second: still a limit
    assert done.returncode < 0  # ended by a signal, as subprocess reports it


def test_interpreter_options_are_refused_rather_than_taken_for_a_script(forked: Forked) -> None:
    with pytest.raises(ValueError, match="-X"):
        forked.run([sys.executable, "-X", "importtime", "tool/script.py"])

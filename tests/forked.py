"""Run many short commands as if each were ``python ...`` in a process of its own, without paying the imports each time.

Tests that run documented commands or every bench script's ``--help`` started a fresh interpreter for each, and most of
each one's seconds went to importing the same libraries (chromadb, langchain, torch...). ``Forked`` starts this file as a
server once, with the environment and working folder the commands would have; the server imports those libraries (only
third-party ones: the project's own modules are imported afresh by every command, so an import the project broke still
fails), then forks a child per command. The child is a new process as far as the command can tell: its own argv,
``sys.path[0]`` as Python sets it (the script's folder, or the working folder for ``-m``), stdin from /dev/null, stdout
and stderr to files, its exit status the command's, ``atexit`` handlers and non-daemon threads run before it exits, and
killed after ``timeout`` seconds. What it cannot give: a library that reads the environment or starts a thread when
imported did so in the server, once; the commands here run with the server's environment, which is theirs.

This is the same design as the standard library's ``multiprocessing`` forkserver, with the child running a command line
instead of a function; that module starts its server from the caller's environment and runs functions, so it is not used.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType

HERE = Path(__file__).resolve()

# Heavy third-party libraries the app's commands and the bench scripts import: imported once, in the server.
LIBRARIES = (
    "numpy",
    "sqlalchemy",
    "pydantic_settings",
    "langchain_core.language_models.base",
    "langchain_openai",
    "chromadb",
    "bm25s",
    "onnxruntime",
    "torch",
    "transformers",
    "sentence_transformers",
    "pandas",
    "plotly.graph_objects",
)


class Forked:
    """A server of forked commands in ``cwd`` with ``env``; use as a context manager, call ``run(argv)`` like subprocess.run."""

    def __init__(self, cwd: Path | str, env: dict[str, str], libraries: tuple[str, ...] = LIBRARIES) -> None:
        self.outputs = Path(tempfile.mkdtemp(prefix="forked-"))
        self.server = subprocess.Popen(
            [sys.executable, str(HERE), str(self.outputs), *libraries],
            cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.count = 0

    def run(self, argv: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """``argv`` as given to subprocess (``[sys.executable, "-m", "pipelines", ...]`` or ``[sys.executable, "x.py", ...]``)."""
        assert self.server.stdin is not None and self.server.stdout is not None
        if argv[1].startswith("-") and argv[1] != "-m":
            raise ValueError(f"only `python SCRIPT ...` and `python -m MODULE ...` are run here, not {argv[1]}")
        self.count += 1
        seconds = max(1, math.ceil(timeout))  # whole seconds for alarm(), never 0 (which would turn the limit off)
        self.server.stdin.write(json.dumps({"argv": argv[1:], "timeout": seconds, "n": self.count}) + "\n")
        self.server.stdin.flush()
        line = self.server.stdout.readline()
        if not line:
            raise RuntimeError(f"the fork server ended (exit {self.server.wait()})")
        done = json.loads(line)
        out, err = (self.outputs / f"{self.count}.{name}" for name in ("out", "err"))
        return subprocess.CompletedProcess(argv, done["returncode"], out.read_text(errors="replace"), err.read_text(errors="replace"))

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self.server.stdin is not None:
            self.server.stdin.close()
        try:
            self.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.server.kill()
        for path in self.outputs.iterdir():
            path.unlink()
        self.outputs.rmdir()


def _child(argv: list[str], out: str, err: str, timeout: int, base_path: list[str]) -> None:
    """In the forked child: become ``python *argv`` and exit with its status."""
    import atexit
    import runpy
    import signal
    import threading
    import traceback

    signal.alarm(timeout)  # SIGALRM's default action ends the process: a hung command is a failed one
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY | os.O_CREAT), (2, err, os.O_WRONLY | os.O_CREAT)):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    code: int = 0
    try:
        if argv[0] == "-m":
            sys.argv = argv[1:]
            sys.path[:] = [os.getcwd(), *base_path]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            sys.path[:] = [str(Path(argv[0]).resolve().parent), *base_path]
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # as Python itself ends on an uncaught exception
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter does at exit: join non-daemon threads
        atexit._run_exitfuncs()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _serve(outputs: Path, libraries: list[str]) -> None:
    import importlib
    from contextlib import suppress

    base_path = sys.path[1:]  # without this file's folder: each command gets the first entry Python would give it
    for name in libraries:
        with suppress(ImportError):  # a library this install lacks: the commands that need it fail on their own
            importlib.import_module(name)
    requests = sys.stdin
    answers = sys.stdout
    for line in requests:
        asked = json.loads(line)
        out, err = str(outputs / f"{asked['n']}.out"), str(outputs / f"{asked['n']}.err")
        answers.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(asked["argv"], out, err, asked["timeout"], base_path)
        _, status = os.waitpid(pid, 0)
        answers.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        answers.flush()


if __name__ == "__main__":
    _serve(Path(sys.argv[1]), sys.argv[2:])

"""A full disk before a run: `verify`, `ingest` and `corpora` answer plainly, naming what is full, never with a traceback (issue 46)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli.main import main
from tests.disks import fill

ROOT = Path(__file__).resolve().parents[3]
COMMANDS = [
    [
        "verify",
        "Masks reduce transmission of respiratory viruses",
        "--protocol",
        "single",
        "--backend",
        "fake",
        "--corpus",
        "demo",
        "--no-web",
    ],
    ["ingest", "NOTES", "--corpus", "my-notes"],
    ["corpora"],
]


@pytest.fixture
def full_disk(small_disk: Path) -> Path:
    """A 3 MB tmpfs, filled to the last byte (skipped where it cannot be mounted)."""
    fill(small_disk)
    return small_disk


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_really_full_disk_before_a_run_is_answered_plainly(full_disk: Path, tmp_path: Path, command: list[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Randomized trials found masks reduce transmission of respiratory viruses.\n")
    argv = [sys.executable, "-m", "pipelines", *[str(notes) if a == "NOTES" else a for a in command]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATEDESK_")}
    env.update(DEBATEDESK_DATA_DIR=str(full_disk / "data"), PYTHONPATH=str(ROOT))
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "is full" in done.stderr and str(full_disk / "data") in done.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_the_index_refusing_for_want_of_space_is_answered_plainly(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same without a small file system: Chroma's client raises what it raises on a full disk (its SQLite's words)."""
    import chromadb
    from chromadb.errors import InternalError

    def full(*args: object, **kwargs: object) -> None:
        raise InternalError("error returned from database: (code: 13) database or disk is full")

    monkeypatch.setattr(chromadb, "PersistentClient", full)
    notes = tmp_path / "notes.txt"
    notes.write_text("Randomized trials found masks reduce transmission of respiratory viruses.\n")
    assert main([str(notes) if a == "NOTES" else a for a in command]) == 2
    err = capsys.readouterr().err
    assert "the disk holding the corpus index at" in err and "is full; nothing was changed" in err

"""Read files of a fetched public repository: a checkout, or a bare git directory (as a fetch brings it)."""

from __future__ import annotations

import subprocess
from pathlib import Path


class MirrorError(ValueError):
    """A file the script needs is not in the copy; the message names the copy and the file."""


def _is_git_dir(source: Path) -> bool:
    return (source / "HEAD").is_file() and (source / "objects").is_dir()


def read_text(source: Path, path: str) -> str:
    """``path`` of the repository at ``source``: the checkout's file, or the bare directory's HEAD version."""
    if (source / path).is_file():
        return (source / path).read_text(encoding="utf-8")
    if _is_git_dir(source):
        shown = subprocess.run(["git", "--git-dir", str(source), "show", f"HEAD:{path}"], capture_output=True, check=False)
        if shown.returncode == 0:
            return shown.stdout.decode("utf-8")
    raise MirrorError(f"{source}: no {path} (give a checkout of the repository or its bare git directory)")


def commit_of(source: Path) -> str:
    """The commit the copy holds (HEAD), or "unknown" for a folder without git."""
    where = ["--git-dir", str(source)] if _is_git_dir(source) else ["-C", str(source)]
    shown = subprocess.run(["git", *where, "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return shown.stdout.strip() if shown.returncode == 0 else "unknown"

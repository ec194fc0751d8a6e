"""A real small disk for the full-disk tests: a 3 MB tmpfs of the test's own, and a way to fill it to the last byte.

Mounting needs root; where it is refused the test is skipped, so the injected faults of ``tests/faults.py`` stay the
tests that always run. ``tests/conftest.py`` offers the fixture to every test.
"""

from __future__ import annotations

import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs of the test's own, unmounted afterwards (skipped where it cannot be mounted)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)], capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk is full; returns it (delete it to make room again)."""
    filler = disk / "filler"
    # Unbuffered: a buffered file keeps the bytes a short write left over and raises ENOSPC again when it closes.
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler

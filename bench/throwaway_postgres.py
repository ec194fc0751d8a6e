"""PostgreSQL for the benches that measure against it: a server named by URL, else a throwaway one started with
`.ci/postgres`, and a fresh database on it for each measurement (dropped afterwards, so runs never see each other's rows)."""

from __future__ import annotations

import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def postgres(url: str | None) -> Iterator[str]:
    """The server at ``url``; without one, a throwaway server on loopback, stopped when the block ends."""
    if url:
        yield url
        return
    folder = tempfile.mkdtemp(prefix="debatedesk-bench-pg.")
    started = subprocess.run([str(ROOT / ".ci" / "postgres"), "start", folder], capture_output=True, text=True, check=True)
    try:
        yield started.stdout.strip()
    finally:
        subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", folder], capture_output=True, check=False)


@contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """The URL of a new, empty database on ``server``, dropped (with any connections left to it) when the block ends."""
    name = f"bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(make_url(server), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

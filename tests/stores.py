"""The run-store databases tests run against: SQLite always, PostgreSQL when DEBATEDESK_TEST_POSTGRES_URL names a server.

`.ci/run` starts a throwaway PostgreSQL on loopback and exports that URL; each test gets a
database of its own on it, dropped afterwards.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_ENV = "DEBATEDESK_TEST_POSTGRES_URL"
POSTGRES_DIR_ENV = "DEBATEDESK_TEST_POSTGRES_DIR"  # the DIR given to `.ci/postgres start DIR`: a test may stop and start that server
DATABASES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgresql",
        id="postgresql",
        marks=pytest.mark.skipif(
            not os.environ.get(POSTGRES_ENV),
            reason=f"no PostgreSQL server: set {POSTGRES_ENV} (`.ci/run` starts one; `.ci/postgres start DIR` prints a URL)",
        ),
    ),
]


@pytest.fixture(params=DATABASES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty run database: a SQLite file, or a fresh database on the test PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
        return
    with postgres_database() as url:
        yield url


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh database on the test PostgreSQL server (DEBATEDESK_TEST_POSTGRES_URL), dropped afterwards."""
    server = make_url(os.environ[POSTGRES_ENV])
    name = f"dd_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT", pool_pre_ping=True)  # a test may restart the server
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def pg_ctl(folder: Path, *args: str) -> None:
    """pg_ctl on the throwaway server of `.ci/postgres start DIR` (``folder``): ``"-m", "immediate", "stop"``, or ``"start"``."""
    binary = next(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    port = (folder / "port").read_text().strip()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    command = [str(binary), "-D", str(folder / "data"), "-l", str(folder / "server.log"), "-w", "-o", options, *args]
    subprocess.run(["runuser", "-u", "postgres", "--", *command], check=True, capture_output=True)

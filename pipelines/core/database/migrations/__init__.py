"""The desk's database as named migrations (Alembic), applied when the run store opens it, on SQLite and PostgreSQL.

Each change is one file under ``versions/`` (``NNNN_what_it_adds.py``: ``revision``,
``down_revision`` naming the one before, ``upgrade()`` with Alembic's ``op``); the applied one
is recorded in the database's ``alembic_version`` table. ``upgrade`` brings a database to the
newest: an empty one is built, one made before migrations (tables but no ``alembic_version``)
gets the columns and indexes it lacks. ``python -m pipelines.core.database.migrations new "what it
adds"`` writes the next file from the difference between the tables in ``pipelines/core/database/tables.py`` and the migrations
(docs/durable-runs.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import sqlalchemy as sa
from alembic import command, op
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from filelock import FileLock
from sqlalchemy.engine import Connection, Engine

FOLDER = Path(__file__).resolve().parent
# Taken by PostgreSQL's pg_advisory_xact_lock while migrating, so two processes opening one database wait in turn.
LOCK_KEY = 0x44445354  # "DDST"


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration for these migrations, without an alembic.ini; ``connection`` is the one to migrate."""
    config = Config()
    config.set_main_option("script_location", str(FOLDER))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest migration's name."""
    found = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert found is not None, "no migration under versions/"
    return found


def applied(connection: Connection) -> str | None:
    """The migration ``connection``'s database is at, or None before any (an empty database, or one made before migrations)."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> None:
    """Bring ``engine``'s database to the newest migration, one process at a time.

    PostgreSQL migrates in one transaction under an advisory lock. SQLite's driver runs DDL
    outside transactions, so a file lock beside the database keeps two processes that open a
    new database at once (the app and the command line) from building it twice.
    """
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database and database != ":memory:" and not database.startswith("file:"):
        with FileLock(f"{database}.migrate.lock"):
            _upgrade(engine)
    else:
        _upgrade(engine)


def _upgrade(engine: Engine) -> None:
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
        if applied(connection) == head():
            return
        command.upgrade(alembic_config(connection), "head")


def differences(connection: Connection, metadata: sa.MetaData) -> list[object]:
    """What the database has that ``metadata`` lacks, or lacks that it has (empty when a migration covers every table)."""
    return list(compare_metadata(MigrationContext.configure(connection), metadata))


def bring_up(table: sa.Table) -> None:
    """Inside a migration: create ``table`` with its indexes, or give an existing one the columns and indexes it lacks.

    A database made before migrations may be at any earlier schema; the first migration uses this so it
    ends where a new database starts. Added columns are nullable: rows already there have no value.
    """
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if not inspector.has_table(table.name):
        table.create(bind)
        return
    columns = {c["name"] for c in inspector.get_columns(table.name)}
    for column in table.columns:
        if column.name not in columns:
            op.add_column(table.name, sa.Column(column.name, column.type, nullable=True))
    indexes = {i["name"] for i in inspector.get_indexes(table.name)}
    for index in table.indexes:
        if index.name not in indexes:
            op.create_index(str(index.name), table.name, [c.name for c in index.columns], unique=bool(index.unique))


def new_revision(message: str, metadata: sa.MetaData) -> Path:
    """Write the next migration file: the difference between ``metadata`` and a database built by the migrations so far."""
    with tempfile.TemporaryDirectory() as folder:
        engine = sa.create_engine(f"sqlite:///{folder}/schema.sqlite")
        upgrade(engine)
        with engine.begin() as connection:
            config = alembic_config(connection)
            config.attributes["target_metadata"] = metadata
            number = len(list(ScriptDirectory.from_config(config).walk_revisions())) + 1
            slug = "_".join(message.lower().split())[:40]
            script = command.revision(config, message, autogenerate=True, rev_id=f"{number:04d}")
        engine.dispose()
    assert script is not None and not isinstance(script, list)
    path = Path(script.path)
    return path.rename(path.with_name(f"{number:04d}_{slug}.py"))

"""Opening the desk's database: one SQLAlchemy engine per URL (SQLite or PostgreSQL), set up the same way for every store.

SQLite gets WAL, normal syncing and foreign keys on each connection and a 30-second wait for a busy file; PostgreSQL
checks a pooled connection before using it. On both, text holding a NUL character is refused before it reaches the
driver, with the same plain message on both.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event

from pipelines.core.errors import UnstorableTextError


def connect(url: str) -> Engine:
    """An engine for ``url``; the database is neither built nor migrated here (``migrations.upgrade`` does that)."""
    kwargs: dict[str, Any] = {}
    is_sqlite = url.startswith("sqlite")
    if is_sqlite:
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    else:
        kwargs["pool_pre_ping"] = True
    engine = create_engine(url, **kwargs)
    if is_sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "before_cursor_execute", _refuse_nul)  # one plain message on both databases, never SQL text
    return engine


def _refuse_nul(_conn: Any, _cursor: Any, _statement: str, parameters: Any, _context: Any, _executemany: bool) -> None:
    rows = parameters if isinstance(parameters, list) else [parameters]
    for row in rows:
        values = row.values() if isinstance(row, dict) else row if isinstance(row, tuple | list) else ()
        if any(isinstance(v, str) and "\x00" in v for v in values):
            raise UnstorableTextError(
                "the text holds a NUL character (U+0000), which the run store cannot keep; remove it (it can come with text "
                "copied from a terminal or a binary file) and try again"
            )


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # With WAL, NORMAL syncs at checkpoints, not at every commit: a committed event survives a crash of the app
    # (the durability a run needs); only a power cut can lose the last moments. 10-50x faster appends here.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()

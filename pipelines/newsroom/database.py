"""The desk's one database: every table its migrations build (runs and their record, sign-in, the claims queue)."""

from __future__ import annotations

from sqlalchemy import MetaData

from pipelines.access import sessions
from pipelines.newsroom import queue
from pipelines.record import store


def desk_schema() -> MetaData:
    """The tables the desk's code reads and writes, together; the migrations must build exactly these (a test compares them)."""
    together = MetaData()
    for part in (store.schema(), sessions.schema(), queue.schema()):
        for table in part.sorted_tables:
            table.to_metadata(together)
    return together

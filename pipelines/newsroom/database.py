"""The desk's one database: every table its migrations build (runs and their record, sign-in, the claims queue)."""

from __future__ import annotations

from sqlalchemy import MetaData

from pipelines.access import sessions
from pipelines.newsroom import notices, queue, reviews_in
from pipelines.record import store
from pipelines.tables import DeskTable

DECLARED_IN = (store, sessions, queue, reviews_in, notices)  # the modules whose tables make up the database; importing them declares them


def desk_schema() -> MetaData:
    """The tables the desk's code reads and writes, together; the migrations must build exactly these (a test compares them)."""
    return DeskTable.metadata

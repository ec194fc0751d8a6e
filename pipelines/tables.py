"""The base every table of the desk's one database is declared on: runs and their record, sign-in, the claims queue.

One database, one ``MetaData``: ``newsroom.database.desk_schema`` imports each module that declares
tables here and hands the migrations (and their test) the whole of it.
"""

from __future__ import annotations

from sqlalchemy.orm import DeclarativeBase


class DeskTable(DeclarativeBase):
    """A table of the desk's database (its migrations build it)."""

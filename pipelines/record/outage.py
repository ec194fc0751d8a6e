"""How to say to a person that the run store is away or cannot be written.

A database that stopped answering, a full disk and a read-only folder all reach the code as
SQLAlchemy's ``OperationalError`` (or an ``OSError`` from the disk; which errors those are:
``pipelines/core/database/faults.py``); they are worth waiting for and must be told plainly,
with where the store is and never the SQL that failed.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from pipelines.core.database.faults import is_store_fault
from pipelines.core.errors import StoreUnavailableError


def fault_message(url: str, exc: BaseException) -> str:
    """What is wrong with the store, in words a person can act on (no SQL, no traceback)."""
    where = store_key(url)
    text = str(getattr(exc, "orig", None) or exc).lower()
    err = getattr(exc, "errno", None)
    if err in (errno.ENOSPC, errno.EDQUOT) or "disk is full" in text or "no space" in text:
        return f"the disk holding the run store at {where} is full"
    if err in (errno.EROFS, errno.EACCES, errno.EPERM) or "readonly" in text or "read-only" in text or "unable to open" in text:
        return f"the run store at {where} cannot be written (its folder is read-only or not ours)"
    return f"the run store at {where} is unreachable"


def store_key(url: str) -> str:
    """The store's address without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(an unreadable database address)"


@contextmanager
def store_faults_plain(url: str) -> Iterator[None]:
    """A store that is away or cannot be written raises StoreUnavailableError with a plain message, not the driver's text."""
    try:
        yield
    except Exception as exc:
        if not is_store_fault(exc):
            raise
        raise StoreUnavailableError(f"{fault_message(url, exc)}; nothing was changed. Try again once it is back") from exc

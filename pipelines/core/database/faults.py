"""Whether an error means the desk's database is away or cannot be written: down, its disk full, its folder read-only.

They reach the code as SQLAlchemy's ``OperationalError`` or ``InterfaceError``, a connection the driver invalidated, or
an ``OSError`` from the disk. The run store waits for them and says so (``pipelines/record/outage.py``); the evidence
memory, which lives in the same database, says it is unavailable and the run goes on without it.
"""

from __future__ import annotations

import errno

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})


def is_store_fault(exc: BaseException) -> bool:
    """The store is away or cannot be written (worth waiting for), not a bug or a refusal."""
    if isinstance(exc, OperationalError | InterfaceError):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS

"""Store faults on demand, for the tests and the soak bench: the database "goes away" for a while, or the disk "fills".

Test tooling: the app never imports it (it lived in ``pipelines/record/`` until issue 47).

``StoreOutage(engine)`` hooks the engine's connection checkout and every statement: while an
outage lasts, both raise what the real fault raises (an ``OperationalError`` from the driver
wrapped by SQLAlchemy), so the code under test meets the same exception class and message it
would meet when PostgreSQL stops, the disk is full or the folder turns read-only.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

MESSAGES = {
    "down": 'connection to server at "127.0.0.1", port 5432 failed: Connection refused',
    "full": "database or disk is full",
    "readonly": "attempt to write a readonly database",
}


class _DriverError(Exception):
    """Stands for the DBAPI driver's own error inside SQLAlchemy's OperationalError."""


class StoreOutage:
    """Make ``engine`` fail for a while: ``start(seconds)`` (or ``start()`` until ``stop``), of a given kind."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._until = 0.0
        self._kind = "down"
        self._lock = threading.Lock()
        self.failures = 0  # statements and connections refused so far
        event.listen(engine, "before_cursor_execute", self._on_execute)
        event.listen(engine, "checkout", self._on_checkout)

    def start(self, seconds: float = float("inf"), kind: str = "down") -> None:
        with self._lock:
            self._kind = kind
            self._until = time.monotonic() + seconds

    def stop(self) -> None:
        with self._lock:
            self._until = 0.0

    @property
    def active(self) -> bool:
        with self._lock:
            return time.monotonic() < self._until

    def remove(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._on_execute)
        event.remove(self._engine, "checkout", self._on_checkout)

    def _fail(self, statement: str) -> None:
        if not self.active:
            return
        with self._lock:
            self.failures += 1
            message = MESSAGES[self._kind]
        raise OperationalError(statement, None, _DriverError(message))

    def _on_execute(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        self._fail(statement)

    def _on_checkout(self, *_args: Any) -> None:
        self._fail("connect")

"""Model calls bounded per endpoint across every process of a shared desk: slots held as PostgreSQL advisory locks.

In one process, ``llm.limits.Limiters`` keeps each endpoint (backend and base URL) within its role's *Parallel calls*.
Workers on several machines each have their own, so W workers would send W times that to one model server. On a desk
whose work runs on workers, each process's limiters are ``DeskLimiters`` instead: a call takes its process's slot first
(so a process never waits with more connections than its bound), then one of the endpoint's N desk-wide slots, each a
session-level advisory lock ``(endpoint key, slot number)`` in the desk's PostgreSQL, tried without blocking and tried
again shortly while all N are held. A lock is released when the call ends, and by the server when the process holding
it dies (its connection closes), so a killed worker never keeps a slot.

When the database cannot be reached, a call goes on under its process's bound alone (a warning is logged): the run
pauses its writes as in any store outage, and its model calls must not fail for want of a slot.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import zlib
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from pipelines.run.llm.limits import Limiters, SharedLimiter

log = logging.getLogger(__name__)

POLL_S = (0.02, 0.1)  # wait between two tries while every slot is held (jittered, so waiters do not beat in step)


def endpoint_key(key: str) -> int:
    """The endpoint's first advisory-lock key: a 32-bit signed number from its name (the slot is the second)."""
    return zlib.crc32(key.encode("utf-8")) - 2**31


class DeskSlot:
    """One endpoint's bound across the desk; an async context manager around one model call."""

    def __init__(self, limiters: DeskLimiters, key: str, local: SharedLimiter) -> None:
        self._limiters = limiters
        self._key = key
        self._lock_key = endpoint_key(key)
        self._local = local

    @property
    def capacity(self) -> int:
        return self._local.capacity

    async def __aenter__(self) -> tuple[Connection, int] | None:
        await self._local.acquire()
        try:
            held = await asyncio.to_thread(self._take)
        except BaseException:
            self._local.release()
            raise
        _HELD[(id(asyncio.current_task()), id(self))] = held
        return held

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        held = _HELD.pop((id(asyncio.current_task()), id(self)), None)
        try:
            if held is not None:
                await asyncio.to_thread(self._give_back, *held)
        finally:
            self._local.release()

    def _take(self) -> tuple[Connection, int] | None:
        try:
            conn = self._limiters.engine.connect()
        except SQLAlchemyError as exc:
            log.warning(
                "model calls to %s: the desk's database did not answer (%s); this call is bounded by this process only", self._key, exc
            )
            return None
        try:
            while True:
                slots = list(range(self.capacity))
                random.shuffle(slots)
                for slot in slots:
                    if conn.scalar(text("SELECT pg_try_advisory_lock(:k, :s)"), {"k": self._lock_key, "s": slot}):
                        return conn, slot
                time.sleep(random.uniform(*POLL_S))
        except SQLAlchemyError as exc:
            conn.invalidate()  # any lock it held goes with the connection
            conn.close()
            log.warning("model calls to %s: the desk's database went away (%s); this call is bounded by this process only", self._key, exc)
            return None

    def _give_back(self, conn: Connection, slot: int) -> None:
        try:
            conn.execute(text("SELECT pg_advisory_unlock(:k, :s)"), {"k": self._lock_key, "s": slot})
        except SQLAlchemyError:
            conn.invalidate()  # the server ends the session, and with it the lock
        finally:
            conn.close()


_HELD: dict[tuple[int, int], Any] = {}  # (the task in a call, its DeskSlot) -> the connection and slot it holds


class DeskLimiters(Limiters):
    """``Limiters`` whose every endpoint is also bounded across the desk (``DeskSlot``), on the desk's PostgreSQL at ``url``."""

    def __init__(self, url: str) -> None:
        super().__init__()
        # its own small pool, in autocommit (a session lock outlives transactions; no transaction is left open while a call runs)
        self.engine = create_engine(url, isolation_level="AUTOCOMMIT", pool_size=2, max_overflow=64, pool_pre_ping=True)

    def get(self, key: str, capacity: int) -> DeskSlot:  # type: ignore[override]
        return DeskSlot(self, key, super().get(key, capacity))

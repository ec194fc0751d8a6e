"""Concurrency bounds shared by every run in the process, whichever thread and event loop runs it.

Each run drives its protocol on its own thread with its own event loop (``runner.stream_run``),
so an ``asyncio.Semaphore`` made in one run cannot bound another. A batch of 8 claims with
4 parallel calls each would otherwise send 32 calls at once to one endpoint. ``SharedLimiter``
is a semaphore that coroutines on any loop can await: a released slot is handed to the
longest waiter on its own loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from types import TracebackType


class SharedLimiter:
    """At most ``capacity`` holders at once, across threads and event loops; first come, first served."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._capacity = capacity
        self._in_use = 0
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def in_use(self) -> int:
        return self._in_use

    def resize(self, capacity: int) -> None:
        """Change the bound; waiters are let in at once if it grew."""
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        with self._lock:
            self._capacity = capacity
            while self._waiters and self._in_use < self._capacity:
                self._in_use += 1
                self._hand_over(*self._waiters.popleft())

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._in_use < self._capacity and not self._waiters:
                self._in_use += 1
                return
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                if (loop, waiter) in self._waiters:
                    self._waiters.remove((loop, waiter))
                    raise
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot arrived just as we were cancelled: give it back
            raise

    def release(self) -> None:
        with self._lock:
            if self._waiters and self._in_use <= self._capacity:
                self._hand_over(*self._waiters.popleft())  # the slot passes straight on: in_use unchanged
            else:
                self._in_use -= 1

    def _hand_over(self, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[None]) -> None:
        if loop.is_closed():
            self._in_use -= 1  # that run is gone; the slot is free again
            return
        loop.call_soon_threadsafe(self._grant, waiter)

    def _grant(self, waiter: asyncio.Future[None]) -> None:
        if waiter.done():  # cancelled while the hand-over was on its way
            self.release()
        else:
            waiter.set_result(None)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


class Limiters:
    """One SharedLimiter per endpoint (backend and base URL), made on first use."""

    def __init__(self) -> None:
        self._limiters: dict[str, SharedLimiter] = {}
        self._lock = threading.Lock()

    def get(self, key: str, capacity: int) -> SharedLimiter:
        """The endpoint's limiter; a run asking for a different bound resizes it (the latest setting wins)."""
        with self._lock:
            limiter = self._limiters.get(key)
            if limiter is None:
                limiter = self._limiters[key] = SharedLimiter(capacity)
            elif limiter.capacity != capacity:
                limiter.resize(capacity)
            return limiter

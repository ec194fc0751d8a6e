"""Limits on a run's model calls: concurrency bounds shared by every run in the process, and spend limits.

Each run drives its protocol on its own thread with its own event loop (``runner.stream_run``),
so an ``asyncio.Semaphore`` made in one run cannot bound another. A batch of 8 claims with
4 parallel calls each would otherwise send 32 calls at once to one endpoint. ``SharedLimiter``
is a semaphore that coroutines on any loop can await: a released slot is handed to the
longest waiter on its own loop. ``Budget`` (below) counts what a run, or a whole batch, spends.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from contextlib import ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from pipelines.core.events import BudgetStop

if TYPE_CHECKING:
    from pipelines.core.config import BudgetConfig


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


# --- Spend limits: how many calls, tokens or how much money a run (and its batch) may spend ---


class BudgetExhaustedError(Exception):
    """A spend limit is reached: the run stops before its next model call.

    Not a ``DebateDeskError`` on purpose: stages catch those to carry on past one failed call,
    and a budget must stop the whole run, not one stage.
    """

    def __init__(self, stop: BudgetStop) -> None:
        super().__init__(describe_stop(stop))
        self.stop = stop


def describe_stop(stop: BudgetStop) -> str:
    """``stopped by budget: 40 of 40 model calls`` (a batch's limit says so)."""
    return stop.says()


class Budget:
    """What a run (or a batch) may still spend; thread-safe, so the runs of a batch can share their batch's.

    A model call asks ``start_call`` first (inside its concurrency slot): it is refused once any
    limit is reached, so a run makes at most ``max_calls`` calls. Tokens and money are known only
    when a call ends (``charge``): calls already under way when the limit is passed still finish, so
    those two can end slightly above their limit, never by more than the calls in flight.
    Answers from a cache or a resumed run's journal are free and never asked about.
    """

    def __init__(
        self,
        *,
        calls: int = 0,
        tokens: int = 0,
        cost: float = 0.0,
        price_of: Callable[[str], float] = lambda _model: 0.0,
        scope: Literal["run", "batch"] = "run",
        parent: Budget | None = None,
        priced: bool = False,
    ) -> None:
        self._priced = priced
        self.allowed = {"calls": float(calls), "tokens": float(tokens), "cost": float(cost)}
        self.used = {"calls": 0.0, "tokens": 0.0, "cost": 0.0}
        self.scope = scope
        self.parent = parent
        self._price_of = price_of
        self._lock = threading.Lock()

    @classmethod
    def for_run(cls, config: BudgetConfig, parent: Budget | None = None) -> Budget:
        return cls(
            calls=config.max_calls,
            tokens=config.max_tokens,
            cost=config.max_cost,
            price_of=config.price_of,
            parent=parent,
            priced=bool(config.prices or config.default_price),
        )

    @classmethod
    def for_batch(cls, config: BudgetConfig) -> Budget:
        return cls(
            calls=config.batch_max_calls,
            tokens=config.batch_max_tokens,
            cost=config.batch_max_cost,
            price_of=config.price_of,
            scope="batch",
        )

    def reached(self) -> BudgetStop | None:
        """The first limit reached (this budget's, then its parent's), or None while there is room."""
        chain = self._chain()
        with ExitStack() as held:
            for budget in chain:
                held.enter_context(budget._lock)
            return next((stop for budget in chain if (stop := budget._stop()) is not None), None)

    def start_call(self) -> None:
        """Reserve a call about to be made, here and in every parent; raises ``BudgetExhaustedError`` (and reserves nothing) when a
        limit is reached.

        The check and the count happen under the locks of the whole chain at once (taken child first, always in that
        order, so two runs of one batch cannot deadlock): no interleaving of threads lets a call past a limit.
        """
        chain = self._chain()
        with ExitStack() as held:
            for budget in chain:
                held.enter_context(budget._lock)
            stop = next((stop for budget in chain if (stop := budget._stop()) is not None), None)
            if stop is not None:
                raise BudgetExhaustedError(stop)
            for budget in chain:
                budget.used["calls"] += 1

    def _chain(self) -> list[Budget]:
        chain: list[Budget] = []
        budget: Budget | None = self
        while budget is not None:
            chain.append(budget)
            budget = budget.parent
        return chain

    def _stop(self) -> BudgetStop | None:
        # The caller holds this budget's lock.
        for limit in ("calls", "tokens", "cost"):
            allowed = self.allowed[limit]
            if allowed and self.used[limit] >= allowed:
                return BudgetStop(scope=self.scope, limit=limit, used=round(self.used[limit], 6), allowed=allowed)  # type: ignore[arg-type]
        return None

    @property
    def priced(self) -> bool:
        """Whether the run has prices at all (then every call's cost is recorded with it)."""
        return self._priced

    def cost_of(self, model: str, tokens: int) -> float:
        """What ``tokens`` of ``model`` cost at this budget's prices."""
        return tokens / 1000 * self._price_of(model)

    def charge(self, model: str, tokens: int) -> None:
        """A call has ended: its tokens, and their price, count towards this budget and its parent's."""
        with self._lock:
            self.used["tokens"] += tokens
            self.used["cost"] += tokens / 1000 * self._price_of(model)
        if self.parent is not None:
            self.parent.charge(model, tokens)

    def spent_before(self, calls: int, tokens_by_model: dict[str, int]) -> None:
        """What a resumed run had spent before: it counts towards the run's limits (not its batch's, paid already)."""
        with self._lock:
            self.used["calls"] += calls
            for model, tokens in tokens_by_model.items():
                self.used["tokens"] += tokens
                self.used["cost"] += tokens / 1000 * self._price_of(model)

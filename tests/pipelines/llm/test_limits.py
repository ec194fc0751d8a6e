import asyncio
import threading
import time

import pytest

from pipelines.run.llm.limits import Limiters, SharedLimiter


def _hammer(limiter: SharedLimiter, tasks: int, peak: list[int], lock: threading.Lock, active: list[int]) -> None:
    async def one() -> None:
        async with limiter:
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            await asyncio.sleep(0.02)
            with lock:
                active[0] -= 1

    async def many() -> None:
        await asyncio.gather(*(one() for _ in range(tasks)))

    asyncio.run(many())


async def _held_with_a_waiter(limiter: SharedLimiter) -> asyncio.Future[None]:
    """The limiter's one slot taken, and a second acquire waiting for it."""
    await limiter.acquire()
    waiter = asyncio.ensure_future(limiter.acquire())
    await asyncio.sleep(0.01)
    return waiter


def test_one_bound_holds_across_threads_each_with_its_own_event_loop() -> None:
    limiter, peak, active, lock = SharedLimiter(2), [0], [0], threading.Lock()
    threads = [threading.Thread(target=_hammer, args=(limiter, 4, peak, lock, active)) for _ in range(3)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2 and limiter.in_use == 0
    assert time.perf_counter() - started >= 12 / 2 * 0.02  # 12 holds of 20 ms, 2 at a time


def test_a_cancelled_waiter_does_not_leak_its_slot() -> None:
    limiter = SharedLimiter(1)

    async def go() -> None:
        waiter = await _held_with_a_waiter(limiter)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        limiter.release()
        async with limiter:
            assert limiter.in_use == 1

    asyncio.run(go())
    assert limiter.in_use == 0


def test_growing_the_bound_lets_waiters_in() -> None:
    limiter = SharedLimiter(1)

    async def go() -> None:
        waiter = await _held_with_a_waiter(limiter)
        assert not waiter.done()
        limiter.resize(2)
        await asyncio.wait_for(waiter, 1)
        assert limiter.in_use == 2
        limiter.release()
        limiter.release()

    asyncio.run(go())
    assert limiter.in_use == 0


def test_limiters_are_one_per_endpoint_and_the_latest_bound_wins() -> None:
    limiters = Limiters()
    a = limiters.get("fake|", 4)
    assert limiters.get("fake|", 4) is a and limiters.get("openai|http://x", 4) is not a
    assert limiters.get("fake|", 2) is a and a.capacity == 2
    with pytest.raises(ValueError):
        SharedLimiter(0)

"""The limiter's semaphore is fair: it wakes exactly as many waiters as there are free places."""

from __future__ import annotations

import asyncio

from facetlab.client.limits import _Slots


def test_each_waiter_wakes_once_in_order_and_no_newcomer_barges() -> None:
    async def main() -> tuple[list[int], int]:
        slots = _Slots(2)
        order: list[int] = []
        resumed = 0

        async def worker(i: int) -> None:
            nonlocal resumed
            await slots.acquire()
            resumed += 1
            order.append(i)
            await asyncio.sleep(0)
            slots.release()

        tasks = [asyncio.ensure_future(worker(i)) for i in range(200)]
        await asyncio.gather(*tasks)
        return order, resumed

    order, resumed = asyncio.run(main())
    assert order == list(range(200))  # first come, first served
    assert resumed == 200  # every acquire returned exactly once


def test_release_hands_the_place_to_a_waiter_before_a_newcomer() -> None:
    async def main() -> list[str]:
        slots = _Slots(1)
        await slots.acquire()
        got: list[str] = []

        async def take(name: str) -> None:
            await slots.acquire()
            got.append(name)

        waiter = asyncio.ensure_future(take("waiter"))
        await asyncio.sleep(0)
        slots.release()  # handed to the waiter: used stays 1
        assert slots.used == 1
        newcomer = asyncio.ensure_future(take("newcomer"))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert got == ["waiter"]
        slots.release()
        await asyncio.gather(waiter, newcomer)
        return got

    assert asyncio.run(main()) == ["waiter", "newcomer"]


def test_a_cancelled_waiter_that_was_handed_a_place_passes_it_on() -> None:
    async def main() -> int:
        slots = _Slots(1)
        await slots.acquire()
        first = asyncio.ensure_future(slots.acquire())
        second = asyncio.ensure_future(slots.acquire())
        await asyncio.sleep(0)
        slots.release()  # handed to `first`
        first.cancel()  # ... which is cancelled before it runs
        await asyncio.gather(first, return_exceptions=True)
        await asyncio.wait_for(second, 1.0)  # the place went on to `second`
        return slots.used

    assert asyncio.run(main()) == 1


def test_growing_wakes_as_many_as_the_new_room() -> None:
    async def main() -> int:
        slots = _Slots(0)
        waiters = [asyncio.ensure_future(slots.acquire()) for _ in range(5)]
        await asyncio.sleep(0)
        slots.resize(3)
        await asyncio.sleep(0)
        done = sum(w.done() for w in waiters)
        slots.resize(5)
        await asyncio.gather(*waiters)
        return done

    assert asyncio.run(main()) == 3

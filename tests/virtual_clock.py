"""Virtual time for the limiter's tests: no sleeps, no wall clock.

``VirtualClock`` is a :class:`facetlab.client.limits.Clock` whose ``sleep`` returns
when virtual time reaches its deadline. ``clock.run(main())`` drives it: whenever every
task is waiting (the event loop has no ready callback left), time jumps to the
earliest deadline. Everything that waits in the code
under test must wait on the clock (or on futures), never on ``asyncio.sleep`` with a
duration.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Coroutine
from typing import Any, TypeVar

from facetlab.client.limits import Clock

T = TypeVar("T")


class VirtualClock(Clock):
    def __init__(self) -> None:
        self.t = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.t + max(0.0, seconds), next(self._order), future))
        await future

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        async def drive() -> T:
            loop = asyncio.get_running_loop()
            task = asyncio.ensure_future(main)
            while not task.done():
                await asyncio.sleep(0)
                if not task.done() and not loop._ready:  # type: ignore[attr-defined]
                    self._advance()  # nothing else can run: time moves on
            return task.result()

        return asyncio.run(drive())

    def _advance(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():  # a cancelled sleep
            heapq.heappop(self._sleepers)
        if not self._sleepers:
            raise RuntimeError("every task waits and no sleep is pending: a deadlock")
        deadline = self._sleepers[0][0]
        self.t = max(self.t, deadline)
        while self._sleepers and self._sleepers[0][0] <= self.t:
            future = heapq.heappop(self._sleepers)[2]
            if not future.done():
                future.set_result(None)


async def together(*calls: Coroutine[Any, Any, Any]) -> list[Any]:
    """``asyncio.gather`` as a coroutine, for ``clock.run(together(...))``."""
    return list(await asyncio.gather(*calls))

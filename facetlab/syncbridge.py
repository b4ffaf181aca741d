"""The one sync-over-async bridge: run a coroutine to completion from plain code.

Without a running event loop it is ``asyncio.run``. Inside one (a Jupyter cell)
the coroutine runs on a helper thread with its own loop, so there is no "event
loop is already running" error; a ``KeyboardInterrupt`` (the notebook's interrupt
button) reaching the waiting thread is handed to ``on_interrupt``, which lets the
coroutine stop cleanly, and the call still returns (or raises) its outcome.

>>> async def add(a: int, b: int) -> int:
...     return a + b
>>> run_sync(lambda: add(2, 3))
5
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(
    make: Callable[[], Coroutine[Any, Any, T]],
    *,
    on_interrupt: Callable[[], None] | None = None,
) -> T:
    """The result of the coroutine ``make()`` returns, from sync code (Jupyter included).

    ``make`` is called on the thread that runs the loop. Without ``on_interrupt`` a
    ``KeyboardInterrupt`` while waiting propagates at once.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = asyncio.run(make())
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            done.set()

    # An Event, not Thread.join: a KeyboardInterrupt inside join() can leave the thread
    # looking finished while it still runs.
    threading.Thread(target=work, name="facetlab-sync", daemon=True).start()
    while not done.is_set():
        try:
            done.wait(0.1)
        except KeyboardInterrupt:
            if on_interrupt is None:
                raise
            on_interrupt()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value

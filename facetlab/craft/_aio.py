"""CRAFT's event-loop helpers: sync calls (through facetlab's one bridge) and one backend loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from facetlab import syncbridge

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, or the same on a helper thread when a loop already runs here.

    facetlab's one bridge (:mod:`facetlab.syncbridge`, standard library only).
    """
    return syncbridge.run_sync(lambda: coro)


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def backend_loop() -> asyncio.AbstractEventLoop:
    """One long-lived event loop (daemon thread) for every backend call CRAFT makes.

    SDK clients bind their connection pools to the loop they first ran on; sending all
    calls through one loop lets many short ``asyncio.run`` scopes share a backend.
    """
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="craft-backend-loop", daemon=True
            ).start()
            _loop = loop
        return _loop


def on_backend_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on :func:`backend_loop` and wait for it (sync callers)."""
    return asyncio.run_coroutine_threadsafe(coro, backend_loop()).result()


async def aon_backend_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on :func:`backend_loop` from any other loop."""
    loop = backend_loop()
    try:
        if asyncio.get_running_loop() is loop:
            return await coro
    except RuntimeError:
        pass
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))

"""Ctrl-C, SIGTERM, SIGHUP and Jupyter interrupts, routed to a running sweep.

An interrupt must not lose what was paid for: the sweep stops starting calls,
lets the calls in flight finish (or cancels them after a grace period), writes
their records, prints its summary and releases its lock. :class:`Interrupter`
carries the request to the sweep's event loop from wherever it arrives: a signal
handler on the loop (a terminal, a notebook's ``await arun(...)``) or another
thread (``run(...)`` inside Jupyter runs the sweep on a worker thread, and the
interrupt arrives as ``KeyboardInterrupt`` on the waiting main thread).

>>> stop = Interrupter()
>>> stop.request()          # before a sweep is attached: remembered
>>> stop.pending
1
"""

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

# SIGHUP: a closed terminal or ssh session; without a handler it kills the sweep between a
# paid answer and its record, and the resume pays again (Windows has no SIGHUP)
HANDLED_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM) + (
    (signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()
)


class Interrupter:
    """Delivers stop requests to one running sweep (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._target: Callable[[], None] | None = None
        self.pending = 0
        """Requests that arrived before a sweep was attached (replayed on attach)."""

    def attach(self, target: Callable[[], None]) -> None:
        """Route requests to ``target`` on the running loop (call from the loop's thread)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self._loop, self._target = loop, target
            replay, self.pending = self.pending, 0
        for _ in range(replay):
            target()

    def detach(self) -> None:
        with self._lock:
            self._loop = self._target = None

    def request(self) -> None:
        """Ask the sweep to stop (a second request cancels calls in flight at once)."""
        with self._lock:
            loop, target = self._loop, self._target
            if loop is None or target is None:
                self.pending += 1
                return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            target()
        else:
            loop.call_soon_threadsafe(target)

    @contextlib.contextmanager
    def signals(self) -> Iterator[None]:
        """Handle SIGINT, SIGTERM and SIGHUP on the running loop while inside (main thread only).

        The previous handlers (a terminal's default, a Jupyter kernel's own) are
        restored on exit.
        """
        loop = asyncio.get_running_loop()
        installed: list[tuple[signal.Signals, Any]] = []
        if threading.current_thread() is threading.main_thread():
            for sig in HANDLED_SIGNALS:
                previous = signal.getsignal(sig)
                try:
                    loop.add_signal_handler(sig, self.request)
                except (NotImplementedError, RuntimeError, ValueError):
                    continue  # e.g. Windows event loops: Ctrl-C then ends the run as before
                installed.append((sig, previous))
        try:
            yield
        finally:
            for sig, previous in installed:
                loop.remove_signal_handler(sig)
                with contextlib.suppress(TypeError, ValueError):
                    signal.signal(sig, previous)

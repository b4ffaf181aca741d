"""Call an agent on many inputs concurrently, capturing failures instead of raising.

:func:`asample_inputs` runs on the caller's event loop (CRAFT's one async core; the
sync :func:`facetlab.craft.inspect` enters it once through
:func:`facetlab.syncbridge.run_sync`). Adapters with a coroutine ``arun`` are awaited
there with a semaphore; sync adapters run on a bounded thread pool, off the loop.
Results come back in input order. With a ``timeout``, a call
that takes longer becomes a failed sample; a sync call cannot be killed, so it is left
running on a daemon thread (it never keeps the process alive). An agent that calls
``sys.exit`` fails its sample instead of ending the process. An agent that raises any
other ``BaseException`` (``KeyboardInterrupt`` included, a custom ``BaseException``
subclass) stops the run with one :class:`AgentError`: such an exception is never a
failed sample, and never an unhandled traceback on a worker thread.

>>> import asyncio
>>> from facetlab.craft import AgentTrace, from_function
>>> agent = from_function(lambda inp: AgentTrace(decision=inp["x"]))
>>> [s.decision for s in asyncio.run(asample_inputs(agent, [{"x": "a"}, {"x": "b"}]))]
['a', 'b']
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from facetlab.craft.adapter import check_trace, is_async_adapter
from facetlab.craft.errors import AgentError, CraftConfigError
from facetlab.craft.types import AgentInput, AgentTrace


@dataclass(frozen=True)
class Sample:
    """One agent call: its trace, or the error that replaced it."""

    trace: AgentTrace | None
    error: str | None = None
    fatal: bool = False
    """The agent raised a ``BaseException`` that must stop the run (see the module doc)."""

    @property
    def decision(self) -> str | None:
        return None if self.trace is None else self.trace.decision


# What a failing agent call may raise and still be only a failed sample. SystemExit is
# included (an agent calling sys.exit must not end the inspection); KeyboardInterrupt is not.
CAUGHT: tuple[type[BaseException], ...] = (Exception, SystemExit)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, AgentError):
        return str(exc)
    if isinstance(exc, SystemExit):
        return f"agent called sys.exit({exc.code!r})"
    text = str(exc).encode("utf-8", "backslashreplace").decode("utf-8")
    return f"agent raised {type(exc).__name__}: {text}"


def _timed_out(timeout: float) -> Sample:
    return Sample(None, f"agent call timed out after {timeout:g} s")


def _fatal(exc: BaseException) -> Sample:
    text = str(exc).encode("utf-8", "backslashreplace").decode("utf-8")
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return Sample(None, f"agent raised {what}", fatal=True)


def _call_once(adapter: Any, input: AgentInput) -> Sample:
    try:
        return Sample(check_trace(adapter.run(input), agent=_name(adapter)))
    except CAUGHT as exc:  # a failing sample is recorded, never fatal
        return Sample(None, _describe(exc))
    except BaseException as exc:  # caught here, raised once by the caller
        return _fatal(exc)


def _raise_fatal(samples: Sequence[Sample]) -> list[Sample]:
    for sample in samples:
        if sample.fatal:
            raise AgentError(f"{sample.error}; the run was stopped")
    return list(samples)


def _call_sync(adapter: Any, input: AgentInput, timeout: float | None = None) -> Sample:
    if timeout is None:
        return _call_once(adapter, input)
    box: list[Sample] = []
    worker = threading.Thread(
        target=lambda: box.append(_call_once(adapter, input)), name="craft-agent", daemon=True
    )
    worker.start()
    worker.join(timeout)
    return box[0] if box else _timed_out(timeout)


def _name(adapter: Any) -> str:
    return str(getattr(adapter, "name", type(adapter).__name__))


async def asample_inputs(
    adapter: Any,
    inputs: Sequence[AgentInput],
    *,
    concurrency: int = 8,
    timeout: float | None = None,
) -> list[Sample]:
    """Run ``adapter`` once per input, at most ``concurrency`` calls at a time.

    ``timeout`` (seconds) bounds each call; ``None`` waits as long as the agent takes.
    """
    if concurrency < 1:
        raise CraftConfigError(f"concurrency must be >= 1, got {concurrency}")
    if timeout is not None and not timeout > 0:
        raise CraftConfigError(f"timeout must be > 0 seconds, got {timeout}")
    if not inputs:
        return []
    if not is_async_adapter(adapter):
        return await asyncio.to_thread(_sample_threads, adapter, inputs, concurrency, timeout)
    gate = asyncio.Semaphore(concurrency)

    async def one(input: AgentInput) -> Sample:
        async with gate:
            try:
                trace = await asyncio.wait_for(adapter.arun(input), timeout)
                return Sample(check_trace(trace, agent=_name(adapter)))
            except TimeoutError:
                assert timeout is not None
                return _timed_out(timeout)
            except CAUGHT as exc:
                return Sample(None, _describe(exc))
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # raised once below
                return _fatal(exc)

    return _raise_fatal(await asyncio.gather(*(one(i) for i in inputs)))


def _sample_threads(
    adapter: Any, inputs: Sequence[AgentInput], concurrency: int, timeout: float | None
) -> list[Sample]:
    """A sync adapter on a thread pool (a late call is left on its daemon thread)."""
    if concurrency == 1 or len(inputs) == 1:
        out: list[Sample] = []
        for i in inputs:
            out.append(_call_sync(adapter, i, timeout))
            if out[-1].fatal:
                break
        return _raise_fatal(out)
    with ThreadPoolExecutor(max_workers=min(concurrency, len(inputs))) as pool:
        return _raise_fatal(list(pool.map(lambda i: _call_sync(adapter, i, timeout), inputs)))

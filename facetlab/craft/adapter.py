"""Wrap a plain function (sync or async) as an agent CRAFT can sample.

>>> from facetlab.craft import AgentTrace
>>> adapter = from_function(lambda inp: AgentTrace(decision="P3"))
>>> adapter.run({"body": "hello"}).decision
'P3'
"""

import asyncio
import inspect as _inspect
from collections.abc import Awaitable, Callable
from typing import Any, cast

from facetlab.craft._checks import check_trace
from facetlab.craft.types import AgentInput, AgentTrace
from facetlab.syncbridge import run_sync

__all__ = ["AgentFunction", "FunctionAdapter", "check_trace", "from_function", "is_async_adapter"]

AgentFunction = Callable[[AgentInput], AgentTrace] | Callable[[AgentInput], Awaitable[AgentTrace]]


class FunctionAdapter:
    """An :class:`AgentAdapter` around a callable; async callables also get :meth:`arun`."""

    def __init__(self, fn: AgentFunction, *, name: str | None = None) -> None:
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", type(fn).__name__))
        self.is_async = _inspect.iscoroutinefunction(fn) or _inspect.iscoroutinefunction(
            type(fn).__call__
        )

    def __repr__(self) -> str:
        return f"FunctionAdapter({self.name!r}, async={self.is_async})"

    def run(self, input: AgentInput) -> AgentTrace:
        if self.is_async:
            return run_sync(lambda: self.arun(input))
        return check_trace(self.fn(input), agent=self.name)

    async def arun(self, input: AgentInput) -> AgentTrace:
        if self.is_async:
            result = await cast(Callable[[AgentInput], Awaitable[AgentTrace]], self.fn)(input)
        else:
            result = await asyncio.to_thread(
                cast(Callable[[AgentInput], AgentTrace], self.fn), input
            )
        return check_trace(result, agent=self.name)


def from_function(fn: AgentFunction, *, name: str | None = None) -> FunctionAdapter:
    """Wrap ``fn(input) -> AgentTrace`` (or an ``async def``) as an agent adapter."""
    if not callable(fn):
        raise TypeError(f"from_function expects a callable, got {type(fn).__name__}")
    return FunctionAdapter(fn, name=name)


def is_async_adapter(adapter: Any) -> bool:
    """Whether CRAFT should sample ``adapter`` with asyncio (it has a coroutine ``arun``)."""
    if isinstance(adapter, FunctionAdapter):
        return adapter.is_async
    return _inspect.iscoroutinefunction(getattr(adapter, "arun", None))

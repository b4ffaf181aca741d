"""Local fake LLM servers for tests and benchmarks (no network, no keys).

See :class:`fakes.server.FakeLLMServer` (a provider's API, with faults and a rate limit)
and :class:`fakes.engine.FakeEngine` (a self-hosted continuous-batching engine).
"""

from __future__ import annotations

from .engine import EngineSpec, EngineStats, FakeEngine
from .server import FakeLLMServer, FakeRequest, Fault, default_responder

__all__ = [
    "EngineSpec",
    "EngineStats",
    "FakeEngine",
    "FakeLLMServer",
    "FakeRequest",
    "Fault",
    "default_responder",
]

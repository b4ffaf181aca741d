"""Local fake LLM servers for tests and benchmarks (no network, no keys).

See :class:`fakes.server.FakeLLMServer`.
"""

from __future__ import annotations

from .server import FakeLLMServer, FakeRequest, Fault, default_responder

__all__ = ["FakeLLMServer", "FakeRequest", "Fault", "default_responder"]

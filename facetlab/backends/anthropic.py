"""Anthropic Messages API backend (official ``anthropic`` SDK, ``AsyncAnthropic``).

    >>> backend = AnthropicBackend("claude-sonnet-4-6")          # doctest: +SKIP
    >>> await backend.agenerate(ModelRequest("Say hi"))           # doctest: +SKIP

The key comes from ``api_key=`` or ``ANTHROPIC_API_KEY``. The SDK's own retries are
off (``max_retries=0``): the runner retries, using the errors raised here.

Sampling: ``max_tokens`` and ``system`` are sent. ``temperature``, ``top_p`` and
``seed`` are **not sent**: the Messages API has no ``seed``, and the API version
this SDK speaks (``anthropic-version: 2026-10-21``) rejects ``temperature`` and
``top_p`` for every Claude model (the SDK's ``messages.create`` no longer takes
them). :meth:`AnthropicBackend.effective_params` reports them as ``None`` so a
record says what the provider actually received, and setting one logs a warning
once per backend.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from typing import Any

import anthropic

from facetlab.backends._common import (
    LoopBoundClient,
    map_sdk_error,
    option_float,
    resolve_api_key,
    sdk_error_types,
)
from facetlab.backends.base import ModelRequest, ModelResponse, SamplingParams, Usage
from facetlab.errors import BackendError

ENV_KEY = "ANTHROPIC_API_KEY"
logger = logging.getLogger("facetlab.backends.anthropic")
_SDK_ERRORS = sdk_error_types(anthropic)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key access, so SDK objects and plain dicts (batch results) both work."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def response_from_message(
    message: Any, *, latency_s: float | None = None, request_id: str | None = None
) -> ModelResponse:
    """Convert an Anthropic ``Message`` (SDK object or its JSON dict) to a :class:`ModelResponse`.

    Text is the concatenation of the ``text`` blocks (thinking and tool blocks are
    skipped); ``refusal`` is true when ``stop_reason == "refusal"``.
    """
    blocks = _get(message, "content", None) or []
    text = "".join(
        str(_get(block, "text", "")) for block in blocks if _get(block, "type") == "text"
    )
    usage = _get(message, "usage", None)
    stop_reason = _get(message, "stop_reason", None)
    rid = request_id or _get(message, "_request_id", None) or _get(message, "id", None)
    return ModelResponse(
        text=text,
        model_id=str(_get(message, "model", "") or ""),
        usage=Usage(
            input_tokens=_get(usage, "input_tokens", None) if usage is not None else None,
            output_tokens=_get(usage, "output_tokens", None) if usage is not None else None,
        ),
        stop_reason=stop_reason,
        latency_s=latency_s,
        refusal=stop_reason == "refusal",
        provider_request_id=rid,
    )


class AnthropicBackend:
    """Claude models through the Messages API."""

    provider = "anthropic"
    unsupported_params: frozenset[str] = frozenset({"seed", "temperature", "top_p"})
    """Sampling parameters this API does not take; they are not sent."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | str | None = 600.0,
        client: anthropic.AsyncAnthropic | None = None,
        http_client: Any = None,
        **options: Any,
    ) -> None:
        if options:
            raise TypeError(f"AnthropicBackend: unknown options {sorted(options)}")
        self.model = model
        self.base_url = base_url
        factory = None
        if client is None:
            key = resolve_api_key(api_key, ENV_KEY, self.provider)
            seconds = option_float({"timeout": timeout}, "timeout", 600.0)

            def factory() -> anthropic.AsyncAnthropic:
                return anthropic.AsyncAnthropic(
                    api_key=key,
                    base_url=base_url,
                    max_retries=0,
                    timeout=seconds,
                    http_client=http_client,
                )

            client = factory()
        self._secret = api_key or getattr(client, "api_key", None)
        self._clients = LoopBoundClient(client, factory if http_client is None else None)
        self._warned = False
        """The SDK client (the runner's batch support uses it)."""

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client for the running event loop (the runner's batch support uses it)."""
        return self._clients.get()

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"AnthropicBackend(model={self.model!r}{where})"

    __str__ = __repr__

    def effective_params(self, params: SamplingParams) -> SamplingParams:
        """The parameters actually sent (``seed``, ``temperature``, ``top_p`` dropped)."""
        return dataclasses.replace(params, seed=None, temperature=None, top_p=None)

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact ``messages.create`` parameters for ``request``."""
        params = request.params
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params.max_tokens,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if params.system is not None:
            body["system"] = params.system
        dropped = sorted(k for k in self.unsupported_params if getattr(params, k) is not None)
        if dropped and not self._warned:
            self._warned = True
            logger.warning(
                "%s: %s not sent (not supported by the Anthropic Messages API); recorded as None",
                self.model,
                ", ".join(dropped),
            )
        return body

    def response_from_message(
        self, message: Any, *, latency_s: float | None = None
    ) -> ModelResponse:
        return response_from_message(message, latency_s=latency_s)

    def map_error(self, exc: BaseException) -> BackendError:
        """The facetlab error for an SDK exception (also used by batch collection)."""
        return map_sdk_error(
            exc, provider=self.provider, secrets=(self._secret,), request_id_header="request-id"
        )

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        body = self.request_body(request)
        started = time.perf_counter()
        try:
            message = await self.client.messages.create(**body)
        except _SDK_ERRORS as exc:
            raise self.map_error(exc) from None
        except json.JSONDecodeError as exc:  # a 200 whose body is not JSON (a broken proxy)
            raise self.map_error(exc) from None
        return response_from_message(message, latency_s=time.perf_counter() - started)

    async def aclose(self) -> None:
        await self._clients.current().close()

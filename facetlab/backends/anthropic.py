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
record says what the provider actually received (the runner notes them once;
``declaration.unsent(params)`` names them).
"""

from __future__ import annotations

from typing import Any

import anthropic

from facetlab.backends._common import (
    HTTP_TRANSPORTS,
    SDKBackend,
    get_field,
    require_fields,
    resolve_api_key,
    sdk_client_options,
    sends_directly,
    thinking_config,
    with_extra,
)
from facetlab.backends.base import (
    DEFAULT_TIMEOUT_S,
    EFFORTS,
    Declaration,
    ModelRequest,
    ModelResponse,
    Usage,
)

ENV_KEY = "ANTHROPIC_API_KEY"


def response_from_message(
    message: Any, *, latency_s: float | None = None, request_id: str | None = None
) -> ModelResponse:
    """Convert an Anthropic ``Message`` (SDK object or its JSON dict) to a :class:`ModelResponse`.

    Text is the concatenation of the ``text`` blocks (thinking and tool blocks are
    skipped); ``refusal`` is true when ``stop_reason == "refusal"``. A reply without
    ``content`` is a :class:`~facetlab.backends._common.MalformedReplyError`.
    """
    require_fields(message, ("content",), kind="Messages API reply")
    blocks = get_field(message, "content", None) or []
    text = "".join(
        str(get_field(block, "text", "")) for block in blocks if get_field(block, "type") == "text"
    )
    thinking = "".join(
        str(get_field(block, "thinking", ""))
        for block in blocks
        if get_field(block, "type") == "thinking"
    )
    usage = get_field(message, "usage", None)
    stop_reason = get_field(message, "stop_reason", None)
    rid = request_id or get_field(message, "_request_id", None) or get_field(message, "id", None)
    return ModelResponse(
        text=text,
        model_id=str(get_field(message, "model", "") or ""),
        usage=messages_usage(usage),
        stop_reason=stop_reason,
        latency_s=latency_s,
        refusal=stop_reason == "refusal",
        provider_request_id=rid,
        thinking=thinking or None,
    )


def messages_usage(usage: Any) -> Usage:
    """A Messages API ``usage``: its ``input_tokens`` exclude cache reads, which are added."""
    if usage is None:
        return Usage()
    fresh = get_field(usage, "input_tokens", None)
    read = get_field(usage, "cache_read_input_tokens", None)
    written = get_field(usage, "cache_creation_input_tokens", None)
    details = get_field(usage, "output_tokens_details", None)
    total_in = None
    if isinstance(fresh, int):
        total_in = fresh + (read if isinstance(read, int) else 0)
        total_in += written if isinstance(written, int) else 0
    return Usage(
        input_tokens=total_in if total_in is not None else fresh,
        output_tokens=get_field(usage, "output_tokens", None),
        cached_input_tokens=read,
        reasoning_tokens=get_field(details, "thinking_tokens", None) if details else None,
    )


class AnthropicBackend(SDKBackend[anthropic.AsyncAnthropic]):
    """Claude models through the Messages API."""

    provider = "anthropic"
    sdk_module = "anthropic"
    request_id_header = "request-id"
    declaration = Declaration(
        http_timeout=True,
        sends=frozenset({"max_tokens", "system"}),
        batch_api="anthropic",
        efforts=frozenset(EFFORTS),
        thinking=frozenset({"off", "adaptive", "budget"}),
        min_thinking_budget=1024,
        structured_output=True,
        http_transports=frozenset(HTTP_TRANSPORTS),
    )

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | str | None = DEFAULT_TIMEOUT_S,
        client: anthropic.AsyncAnthropic | None = None,
        http_client: Any = None,
        http_transport: str = "httpx",
        **options: Any,
    ) -> None:
        if options:
            raise TypeError(f"AnthropicBackend: unknown options {sorted(options)}")
        self.model = model
        self.base_url = base_url
        factory, key = None, api_key
        if client is None:
            key = resolve_api_key(api_key, ENV_KEY, self.provider)
            common = sdk_client_options(
                base_url=base_url,
                timeout=timeout,
                http_client=http_client,
                sdk=anthropic,
                on_response=self._on_response,
            )

            def factory() -> anthropic.AsyncAnthropic:
                return anthropic.AsyncAnthropic(api_key=key, **common())

        self._bind_client(
            client, factory, api_key=key, rebuildable=http_client is None,
            direct=sends_directly(http_transport, base_url, http_client),
        )  # fmt: skip

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
        if params.effort is not None:
            body["output_config"] = {"effort": params.effort}
        if params.thinking is not None:
            body["thinking"] = thinking_config(params.thinking)
        if request.output_schema is not None:
            schema = {"type": "json_schema", "schema": dict(request.output_schema)}
            body.setdefault("output_config", {})["format"] = schema
        with_extra(body, request.extra_body)
        return body

    def response_from_message(
        self, message: Any, *, latency_s: float | None = None
    ) -> ModelResponse:
        return response_from_message(message, latency_s=latency_s)

    async def _send(self, body: dict[str, Any]) -> Any:
        # the exact body (``messages.create`` only passes its fields on, and would refuse
        # an extra_body field as a keyword)
        return await self._post("/v1/messages", body)

"""OpenAI Chat Completions backend (official ``openai`` SDK, ``AsyncOpenAI``).

Also serves every OpenAI-compatible server — vLLM, Ollama, llama.cpp's
``llama-server``, LM Studio — through ``base_url``::

    get_backend("openai/gpt-5.4")                                              # api.openai.com
    get_backend("openai/Qwen/Qwen3-8B", base_url="http://127.0.0.1:8000/v1")  # vLLM

The key comes from ``api_key=`` or ``OPENAI_API_KEY``; with a ``base_url`` it is
optional (local servers ignore it). The SDK's retries are off (``max_retries=0``).

Sampling: ``temperature``, ``top_p``, ``seed`` and ``system`` (a system message)
are sent when set. The token limit is sent as ``max_completion_tokens`` to
api.openai.com (its current models reject ``max_tokens``) and as ``max_tokens`` to
any other ``base_url`` (what most compatible servers understand); override with
``max_tokens_param=``.

Structured output (a request's ``output_schema``) goes in the form the server takes
(``structured_format``). ``"auto"``, the default for a ``base_url``, learns it from the
first structured call: OpenAI's ``response_format={"type": "json_schema", ...}`` (vLLM,
SGLang, LM Studio, Ollama, llama.cpp's ``llama-server``), and where the server refuses
that shape (llama-cpp-python's server answers it with an HTTP 500 naming the validation
error) ``{"type": "json_object", "schema": ...}``, said in one log line; every later call
uses what worked. ``"json_schema"``, ``"json_object"`` and ``"llama.cpp"`` (llama-server's
own ``json_schema`` field) fix the form. A request's ``extra_body`` joins the body as is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import TYPE_CHECKING, Any, Literal

from facetlab.backends._common import (
    HTTP_TRANSPORTS,
    SDKBackend,
    get_field,
    option_float,
    require_fields,
    resolve_api_key,
    sdk_client_options,
    sends_directly,
    with_extra,
)
from facetlab.backends.base import (
    DEFAULT_TIMEOUT_S,
    EFFORTS,
    Declaration,
    ModelRequest,
    ModelResponse,
    RetryDecision,
    Usage,
)
from facetlab.errors import BackendError, ConfigError
from facetlab.project import version as facetlab_version

if TYPE_CHECKING:
    import openai

ENV_KEY = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_NO_KEY = "no-key-needed"  # local servers ignore the key, but the SDK wants a non-empty one

# llama-cpp-python's server answers a body it cannot validate with HTTP 500 and
# pydantic's message ("1 validation error: {... 'loc': ('body', ...) ...}"): every
# repeat of that body fails the same way.
_INVALID_BODY = re.compile(r"validation errors?:.*?'loc': \('body'", re.DOTALL)

# A refusal that names the structured-output field (llama-cpp-python's 500 names
# ('body', 'response_format', 'type'); vLLM's and LM Studio's 400s name it too): another
# form may pass; any other 400 would fail whatever the form
_FORM_REFUSED = re.compile(r"response_format|json_schema")

# Where a self-hosted server says how many requests it runs at once: llama.cpp's
# llama-server and SGLang (vLLM publishes no such figure over HTTP)
SLOTS_PUBLISHED = (("/props", "total_slots"), ("/get_server_info", "max_running_requests"))

MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]
StructuredFormat = Literal["auto", "json_schema", "json_object", "llama.cpp"]

logger = logging.getLogger("facetlab.backends")


def response_from_completion(
    completion: Any, *, latency_s: float | None = None, request_id: str | None = None
) -> ModelResponse:
    """Convert a ``ChatCompletion`` (SDK object or its JSON dict) to a :class:`ModelResponse`.

    ``refusal`` is true when the message carries a ``refusal`` or the choice
    finished with ``content_filter``. A completion with an empty ``choices`` list gives
    empty text and ``stop_reason="no_choices"`` (recorded, not dropped); one without a
    ``choices`` field is a :class:`~facetlab.backends._common.MalformedReplyError`.
    """
    require_fields(completion, ("choices",), kind="chat completion")
    choices = get_field(completion, "choices", None) or []
    usage = get_field(completion, "usage", None)
    rid = (
        request_id
        or get_field(completion, "_request_id", None)
        or get_field(completion, "id", None)
    )
    text = ""
    stop_reason: str | None = "no_choices"
    refusal = False
    thinking: str | None = None
    if choices:
        choice = choices[0]
        message = get_field(choice, "message", None)
        content = get_field(message, "content", None) if message is not None else None
        refusal_text = get_field(message, "refusal", None) if message is not None else None
        stop_reason = get_field(choice, "finish_reason", None)
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):  # some compatible servers send content parts
            text = "".join(str(get_field(part, "text", "")) for part in content)
        for name in ("reasoning_content", "reasoning"):  # vLLM, DeepSeek, Ollama, llama.cpp
            value = get_field(message, name, None) if message is not None else None
            if isinstance(value, str) and value:
                thinking = value
                break
        if refusal_text:
            refusal = True
            text = text or str(refusal_text)
        refusal = refusal or stop_reason == "content_filter"
    return ModelResponse(
        text=text,
        model_id=str(get_field(completion, "model", "") or ""),
        usage=chat_usage(usage),
        stop_reason=stop_reason,
        latency_s=latency_s,
        refusal=refusal,
        provider_request_id=rid,
        thinking=thinking,
    )


def chat_usage(usage: Any) -> Usage:
    """A Chat Completions ``usage`` (cached prompt and reasoning tokens from their details)."""
    if usage is None:
        return Usage()
    prompt = get_field(usage, "prompt_tokens_details", None)
    completion = get_field(usage, "completion_tokens_details", None)
    return Usage(
        input_tokens=get_field(usage, "prompt_tokens", None),
        output_tokens=get_field(usage, "completion_tokens", None),
        cached_input_tokens=get_field(prompt, "cached_tokens", None) if prompt else None,
        reasoning_tokens=get_field(completion, "reasoning_tokens", None) if completion else None,
    )


class OpenAIBackend(SDKBackend["openai.AsyncOpenAI"]):
    """Chat Completions against api.openai.com or any OpenAI-compatible ``base_url``."""

    provider = "openai"
    sdk_module = "openai"
    env_key = ENV_KEY
    declaration = Declaration(
        http_timeout=True,
        batch_api="openai",
        efforts=frozenset(EFFORTS),
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
        max_tokens_param: MaxTokensParam | None = None,
        organization: str | None = None,
        structured_format: StructuredFormat | None = None,
        client: openai.AsyncOpenAI | None = None,
        http_client: Any = None,
        http_transport: str = "httpx",
        key_required: bool | None = None,
        **options: Any,
    ) -> None:
        if options:
            raise TypeError(f"{type(self).__name__}: unknown options {sorted(options)}")
        self.model = model
        self.base_url = base_url
        if max_tokens_param not in (None, "max_tokens", "max_completion_tokens"):
            raise ConfigError(
                f"max_tokens_param={max_tokens_param!r}: expected 'max_tokens' or "
                "'max_completion_tokens'"
            )
        if structured_format not in (None, "auto", "json_schema", "json_object", "llama.cpp"):
            raise ConfigError(
                f"structured_format={structured_format!r}: expected 'auto' (learnt from the "
                "server), 'json_schema' or 'json_object' (llama-cpp-python's server) or "
                "'llama.cpp' (llama-server's own json_schema field)"
            )
        # OpenAI's own API takes json_schema; a server of unknown make is asked once
        self.structured_format: StructuredFormat = structured_format or (
            "auto" if base_url else "json_schema"
        )
        self._form_lock = asyncio.Lock()
        self.max_tokens_param: MaxTokensParam = max_tokens_param or (
            "max_completion_tokens" if base_url is None else "max_tokens"
        )
        factory, key = None, api_key
        self.organization = organization
        self.timeout_s = option_float({"timeout": timeout}, "timeout", DEFAULT_TIMEOUT_S)
        if client is None:
            required = base_url is None if key_required is None else key_required
            key = resolve_api_key(api_key, self.env_key, self.provider, required=required)

            def factory() -> openai.AsyncOpenAI:
                import openai  # here: a direct call never needs the SDK (~0.5 s to import)

                common = sdk_client_options(
                    base_url=base_url, timeout=timeout, http_client=http_client, sdk=openai,
                    on_response=self._on_response,
                )  # fmt: skip
                client = openai.AsyncOpenAI(
                    api_key=key or _NO_KEY, organization=organization, **common()
                )
                # The SDK imports its chat resources on first use (~35 ms); doing it here
                # keeps that out of the first call, whose send time paces the rate window.
                _ = client.chat.completions
                return client

        self._bind_client(
            client, factory, api_key=key, rebuildable=http_client is None,
            direct=sends_directly(http_transport, base_url, http_client),
        )  # fmt: skip

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact ``chat.completions.create`` parameters for ``request``."""
        params = request.params
        messages: list[dict[str, str]] = []
        if params.system is not None:
            messages.append({"role": "system", "content": params.system})
        messages.append({"role": "user", "content": request.prompt})
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        body[self.max_tokens_param] = params.max_tokens
        if params.temperature is not None:
            body["temperature"] = params.temperature
        if params.top_p is not None:
            body["top_p"] = params.top_p
        if params.seed is not None:
            body["seed"] = params.seed
        if params.effort is not None:
            body["reasoning_effort"] = params.effort
        if request.output_schema is not None:
            schema, form = dict(request.output_schema), self.structured_format
            if form == "json_object":
                body["response_format"] = {"type": "json_object", "schema": schema}
            elif form == "llama.cpp":
                body["json_schema"] = schema
            else:
                named = {"name": "reply", "schema": schema}
                body["response_format"] = {"type": "json_schema", "json_schema": named}
        return with_extra(body, request.extra_body)

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        """One call; the first structured call to a server of unknown make learns the form
        it takes (json_schema, else json_object) while the others wait, so a refused form
        costs one refused request per run, never a failed trial."""
        learning = self.structured_format == "auto" or self._form_lock.locked()
        if request.output_schema is not None and learning:
            async with self._form_lock:
                if self.structured_format == "auto":
                    return await self._learn_form(request)
        return await super().agenerate(request)

    async def _learn_form(self, request: ModelRequest) -> ModelResponse:
        self.structured_format = "json_schema"  # the schema enforced by name, where taken
        try:
            return await super().agenerate(request)
        except BackendError as exc:
            # the form refused: an answer about the request's body that names the field
            if not (exc.status in (400, 422, 500) and _FORM_REFUSED.search(str(exc))):
                self.structured_format = "auto"  # not about the form: still unknown
                raise
            self.structured_format = "json_object"  # llama-cpp-python takes only this
            logger.warning(
                "%s at %s refused structured output as json_schema (%s); sending it as "
                "json_object with the schema", self.model, self.base_url,
                " ".join(str(exc).split())[:100],
            )  # fmt: skip
        return await super().agenerate(request)

    def direct_target(self) -> tuple[str, dict[str, str], float | None]:
        """What a direct call is sent with, as the SDK would send it (without importing it):
        its base URL and bearer key, the organization when set."""
        headers = {"Authorization": f"Bearer {self._secret or _NO_KEY}",
                   "Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"facetlab/{facetlab_version()}"}  # fmt: skip
        if self.organization:
            headers["OpenAI-Organization"] = self.organization
        return self.base_url or DEFAULT_BASE_URL, headers, self.timeout_s

    async def server_slots(self) -> int | None:
        """How many requests a self-hosted server runs at once, where it says
        (:data:`SLOTS_PUBLISHED`); None for a provider's own API or a server that does not."""
        root = (self.base_url or "").rstrip("/").removesuffix("/v1")
        for path, name in SLOTS_PUBLISHED if root else ():
            with contextlib.suppress(Exception):  # a 404, a page that is not JSON: not said
                if self.sends_directly:
                    said: Any = await self._direct().get_json(root + path, timeout=5)
                else:
                    said = await self.client.get(
                        root + path, cast_to=object, options={"timeout": 5}
                    )
                if type(slots := said.get(name)) is int and slots > 0:  # not a bool
                    return slots
        return None

    def should_retry(self, exc: BaseException) -> RetryDecision:
        """A 500 that says the request body is invalid (llama-cpp-python) is not retried."""
        if isinstance(exc, BackendError) and exc.status == 500 and _INVALID_BODY.search(str(exc)):
            return RetryDecision(False)
        return super().should_retry(exc)

    def response_from_message(
        self, completion: Any, *, latency_s: float | None = None
    ) -> ModelResponse:
        return response_from_completion(completion, latency_s=latency_s)

    async def _send(self, body: dict[str, Any]) -> Any:
        # The SDK's ``post`` with the exact body: ``chat.completions.create`` would walk
        # its ~40 typed parameters on every call (docs/running.md).
        extra = body.get("extra_body")  # create()'s keyword: its fields join the JSON
        if isinstance(extra, dict):
            body = {**{k: v for k, v in body.items() if k != "extra_body"}, **extra}
        return await self._post("/chat/completions", body, security={"bearer_auth": True})

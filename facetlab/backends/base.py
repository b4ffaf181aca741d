"""The one interface every model provider implements.

A backend turns a :class:`ModelRequest` into a :class:`ModelResponse`. The core
is async (:meth:`Backend.agenerate`); :func:`generate` is the sync twin built on
it. Errors are :class:`facetlab.errors.BackendError` subclasses: transient ones
(rate limits, timeouts, 5xx, dropped connections) are retried by the runner,
permanent ones fail the trial with the provider's message.

API keys are read by each backend from the environment or the provider's own
config at construction time and are never stored on requests, responses or
records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from facetlab.errors import BackendError, ConfigError
from facetlab.numbers import check_number


@dataclass(frozen=True)
class SamplingParams:
    """Explicit sampling parameters; every one of them is recorded on the trial record.

    ``None`` means "the provider's default" and is recorded as such.
    """

    temperature: float | None = None
    max_tokens: int = 1024
    system: str | None = None
    seed: int | None = None
    top_p: float | None = None
    effort: str | None = None
    """Reasoning effort: ``low``, ``medium``, ``high``, ``xhigh`` or ``max`` (None: the default)."""
    thinking: str | int | None = None
    """Thinking: ``"off"``, ``"adaptive"`` or a budget in tokens (None: the default)."""
    structured: bool = False
    """Ask for the probe's reply as JSON (``--structured``): each request carries the probe's
    reply schema (:meth:`facetlab.probes.base.Probe.reply_schema`) as its ``output_schema``."""
    extra_body: Mapping[str, Any] | None = field(default=None, hash=False)
    """Fields each request body carries as they are (:attr:`ModelRequest.extra_body`)."""

    def __post_init__(self) -> None:
        # a NaN or negative temperature would fail every trial after paying for the first
        # ones, or be sent as is: each value is refused here, before any request
        check_number("--temperature", self.temperature, minimum=0.0, maximum=MAX_TEMPERATURE)
        check_number("top_p", self.top_p, minimum=0.0, inclusive=False, maximum=1.0)
        _check_count("--max-tokens", self.max_tokens, minimum=1)
        if self.seed is not None:
            _check_count("--seed", self.seed, minimum=0, maximum=MAX_SEED)
        if self.effort is not None and self.effort not in EFFORTS:
            raise ConfigError(f"--effort is {self.effort!r}; expected one of {', '.join(EFFORTS)}")
        if self.extra_body is not None:
            try:  # part of the trial key and the record: JSON, as sent
                json.dumps(self.extra_body, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"extra_body is not a JSON object: {exc}") from None
        thinking = self.thinking
        if isinstance(thinking, bool) or not (
            thinking is None
            or thinking in ("off", "adaptive")
            or (isinstance(thinking, int) and thinking > 0)
        ):
            raise ConfigError(
                f"--thinking is {thinking!r}; expected off, adaptive or a budget in tokens (> 0)"
            )

    def to_dict(self) -> dict[str, Any]:
        """The recorded form; ``effort``, ``thinking``, ``structured`` and ``extra_body``
        appear only when set (so the content keys of sweeps that set none stay what they
        were)."""
        out: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "seed": self.seed,
            "top_p": self.top_p,
        }
        if self.effort is not None:
            out["effort"] = self.effort
        if self.thinking is not None:
            out["thinking"] = self.thinking
        if self.structured:  # likewise: the paper's keys never carry these two
            out["structured"] = True
        if self.extra_body:
            out["extra_body"] = dict(self.extra_body)
        return out

    @property
    def reasoning(self) -> bool:
        """Whether a reasoning setting asks the model to think (effort or thinking not off)."""
        return self.effort is not None or self.thinking not in (None, "off")


MAX_TEMPERATURE = 2.0
"""The highest temperature any provider facetlab speaks to accepts (OpenAI, Gemini: 2)."""

MAX_SEED = 2**63 - 1
"""Seeds are sent as signed 64-bit integers."""


def _check_count(name: str, value: object, *, minimum: int, maximum: int | None = None) -> None:
    """A ConfigError naming ``name`` unless ``value`` is a whole number in range."""
    ok = (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value >= minimum
        and (maximum is None or value <= maximum)
    )
    if not ok:
        bound = f"at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise ConfigError(f"{name} is {value!r}; expected a whole number {bound}")


DEFAULT_TIMEOUT_S = 600.0
"""The default bound on one call, in seconds (``--timeout``; the SDK backends' HTTP timeout)."""

MAX_RETRY_AFTER_S = 120.0
"""The longest ``retry-after`` a call waits out by default before it fails
(``--max-retry-after``)."""

EFFORTS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
"""The reasoning-effort levels facetlab asks for (each backend maps or refuses them)."""


def thinking_kind(thinking: str | int | None) -> str | None:
    """``"off"``, ``"adaptive"``, ``"budget"`` (a number of tokens) or None."""
    return None if thinking is None else ("budget" if isinstance(thinking, int) else str(thinking))


@dataclass(frozen=True)
class ModelRequest:
    """One prompt to send.

    ``context`` describes the trial the prompt belongs to (the runner's is
    :meth:`facetlab.records.schema.Trial.context`). Real providers ignore it;
    the ``replay`` and ``simulated`` backends use it to find the recorded answer or
    to reason about the instance. Documented keys (all optional):

    - ``probe``: "p1" | "p2" | "p3" | "c2" | "c0" | "c3" | "anchor" | "h1"
    - ``instance_id``, ``base_instance_id``, ``variant``
    - ``perturbed_factor``: "F3" style label for C2
    - ``repeat``: int, the repeat index within the cell
    - ``seed``: int, a per-trial seed derived from the sweep seed
    - ``instance``: the :class:`facetlab.instances.Instance` the prompt was built from
      (for C2 the anchor with factor K already rewritten)
    - ``base_instance``: the base :class:`~facetlab.instances.Instance` for variants
    - ``template``: prompt template name, e.g. "facet-v3"
    - ``hint``: H1's planted hint (:class:`facetlab.probes.hint.PlantedHint`), or None
    """

    prompt: str
    params: SamplingParams = field(default_factory=SamplingParams)
    context: Mapping[str, Any] = field(default_factory=dict)
    output_schema: Mapping[str, Any] | None = None
    """A JSON schema the reply must follow (structured output), for backends that declare
    ``structured_output``; the model client refuses it for the others."""
    extra_body: Mapping[str, Any] | None = None
    """Fields added to the request body as they are (a server's own settings: ``min_p``,
    ``grammar``); a field the backend sets itself is refused."""


@dataclass(frozen=True)
class Usage:
    """Tokens as the provider reported them (None: not reported)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    """Of ``input_tokens``, how many were read from the provider's prompt cache."""
    reasoning_tokens: int | None = None
    """Of ``output_tokens``, how many the model spent reasoning (thinking)."""


@dataclass(frozen=True)
class ModelResponse:
    """What a provider answered."""

    text: str
    model_id: str
    """The model id as the provider reported it (may differ from the requested one)."""
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    latency_s: float | None = None
    refusal: bool = False
    provider_request_id: str | None = None
    thinking: str | None = None
    """The model's thinking text, where the provider returns it."""

    @property
    def emptied_by_reasoning(self) -> bool:
        """No answer text because the token limit went to reasoning (not an ``ok`` reply)."""
        return (
            not self.text.strip()
            and self.stop_reason in ("max_tokens", "length")
            and bool(self.usage.reasoning_tokens or self.thinking)
        )


SAMPLING_FIELDS: frozenset[str] = frozenset(
    {"temperature", "max_tokens", "system", "seed", "top_p"}
)
"""Every :class:`SamplingParams` field."""


@dataclass(frozen=True)
class Declaration:
    """What a backend is, declared once by its class, so no layer above tests provider names.

    >>> sends = Declaration(sends=frozenset({"max_tokens", "system"}))
    >>> sends.sent(SamplingParams(temperature=0.7, system="Be brief.")).to_dict()
    {'temperature': None, 'max_tokens': 1024, 'system': 'Be brief.', 'seed': None, 'top_p': None}
    """

    sends: frozenset[str] = SAMPLING_FIELDS
    """The :class:`SamplingParams` fields its request body carries (the rest are not sent)."""
    batch_api: str | None = None
    """The provider batch API it answers through with ``--batch`` (``"anthropic"``, ``"openai"``)."""
    free: bool = False
    """Calls cost nothing (a local server, an offline reasoner): no price is needed."""
    offline: bool = False
    """Answers without a network, deterministically and for free: built before a sweep starts
    (a misspelt name fails at once), never cached."""
    model_names: str | None = None
    """``"module:function"`` listing its model names (for a did-you-mean); None: the price table's."""
    endpoint_env: tuple[str, ...] = ()
    """Environment variables naming the server it talks to (``OLLAMA_HOST``): part of the
    trial key when set, so two servers never share answers."""
    endpoint_option: str | None = None
    """A model-string option that names the server (Bedrock ``region``): when given it is
    already in the model string, and ``endpoint_env`` is not read."""
    efforts: frozenset[str] = frozenset()
    """The ``effort`` levels it sends (in its provider's own field); others are refused."""
    thinking: frozenset[str] = frozenset()
    """The ``thinking`` settings it sends: ``off``, ``adaptive``, ``budget``."""
    min_thinking_budget: int = 1
    """The smallest thinking budget the provider takes (Anthropic: 1024)."""
    no_thinking_reason: str | None = None
    """Why this model takes no ``thinking`` setting where others of its provider do (a
    per-model declaration: Bedrock's non-Claude models); said in place of the provider's."""
    structured_output: bool = False
    """It sends a request's ``output_schema`` in its provider's structured-output field."""
    http_timeout: bool = False
    """Its constructor takes ``timeout=`` (seconds) for its HTTP client; the runner sets it
    a little above the run's ``--timeout``, so the run's limit is the one that binds."""
    http_transports: frozenset[str] = frozenset()
    """The ``http_transport=`` values its constructor takes (``"httpx"``, ``"aiohttp"``);
    the runner asks for aiohttp for the backends it builds and closes in its own loop."""

    def refusal(self, params: SamplingParams, provider: str) -> str | None:
        """Why ``params`` cannot be sent to ``provider`` (a reasoning setting, structured
        output or body fields it does not take)."""
        if params.structured and not self.structured_output:
            return f"--structured: {provider} has no structured-output field for a JSON schema"
        if params.extra_body and self.offline:
            return f"extra_body: {provider} answers offline and sends no request body"
        if params.effort is not None and params.effort not in self.efforts:
            takes = ", ".join(e for e in EFFORTS if e in self.efforts) or "no effort setting"
            return f"--effort {params.effort}: {provider} does not take it (it takes: {takes})"
        kind = thinking_kind(params.thinking)
        if kind is not None and kind not in self.thinking:
            if self.no_thinking_reason is not None:
                return f"--thinking {params.thinking}: {self.no_thinking_reason}"
            takes = ", ".join(sorted(self.thinking)) or "no thinking setting"
            return f"--thinking {params.thinking}: {provider} does not take it (it takes: {takes})"
        if isinstance(params.thinking, int) and not (
            self.min_thinking_budget <= params.thinking < params.max_tokens
        ):
            return (
                f"--thinking {params.thinking}: {provider} takes a thinking budget of at least "
                f"{self.min_thinking_budget} tokens and below --max-tokens ({params.max_tokens}), "
                "which the thinking counts toward"
            )
        return None

    def sent(self, params: SamplingParams) -> SamplingParams:
        """``params`` as this backend sends them: fields it does not send are ``None``."""
        unsent: dict[str, Any] = {
            name: None for name in SAMPLING_FIELDS - self.sends if name != "max_tokens"
        }
        return replace(params, **unsent) if unsent else params

    def unsent(self, params: SamplingParams) -> list[str]:
        """The fields of ``params`` that were set but are not sent."""
        return sorted(
            name
            for name in SAMPLING_FIELDS - self.sends
            if name != "max_tokens" and getattr(params, name) is not None
        )


DEFAULT_DECLARATION = Declaration()
"""A backend that declares nothing: sends every parameter, costs money, has no batch API."""


def declaration_of(backend: Backend | None) -> Declaration:
    """A backend's :class:`Declaration` (the default for no backend)."""
    return DEFAULT_DECLARATION if backend is None else backend.declaration


TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 499})
"""4xx statuses worth retrying (409 conflict, 425 too early, 499 client closed request); all 5xx are too."""


def is_transient_status(status: int) -> bool:
    """True for 408, 409, 425, 429, 499 and every 5xx (529 "overloaded" included)."""
    return status in TRANSIENT_STATUSES or status >= 500


@dataclass(frozen=True)
class RetryDecision:
    """What a failed call means to the model client, in one value (as inspect_ai's
    providers say it): ``retry``, whether to send it again; ``kind``, ``"rate_limit"`` (a
    429: the limiter slows down and every call waits out ``retry_after``) or
    ``"transient"`` (anything else worth a retry), None when neither; ``retry_after``, the
    seconds the provider asked to wait, if it did (may be inf: the client holds it to its
    cap, ``--max-retry-after``)."""

    retry: bool
    kind: Literal["rate_limit", "transient"] | None = None
    retry_after: float | None = None


def retry_decision(exc: BaseException) -> RetryDecision:
    """The decision by the failure alone: a :class:`~facetlab.errors.BackendError` says
    whether to retry itself (its provider mapped it: ``transient``, or a retryable status),
    a 429 is a rate limit; the runner's own timeout and a dropped connection are
    transient; anything else is not (a bug in a custom backend fails the trial with its
    message, once)."""
    import asyncio  # not at import: `facetlab --help` loads this module

    wait = getattr(exc, "retry_after", None)
    retry = (
        exc.transient or (exc.status is not None and is_transient_status(exc.status))
        if isinstance(exc, BackendError)
        else isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError))
    )
    return RetryDecision(
        retry,
        "rate_limit" if getattr(exc, "status", None) == 429 else "transient" if retry else None,
        float(wait) if isinstance(wait, (int, float)) and wait >= 0 else None,  # NaN is not >= 0
    )


@dataclass(frozen=True)
class RateSignal:
    """What a provider's rate-limit headers said about requests (None: not said)."""

    limit_rpm: float | None = None
    remaining: float | None = None
    reset_s: float | None = None  # until the request count is replenished


@runtime_checkable
class Backend(Protocol):
    """A model provider. Implementations live one per file in ``facetlab/backends/``.

    A backend subclasses this class (as inspect_ai's providers subclass ``ModelAPI``) and
    so declares everything the layers above ask of it: what it is (``declaration``),
    where it sends (``base_url``) and which failures are worth a retry
    (:meth:`should_retry`, one :class:`RetryDecision`); the defaults here fit a backend that declares nothing. Its
    constructor takes ``(model, *, base_url=None, **options)`` (see
    :func:`facetlab.backends.get_backend`).
    """

    provider: str
    """Short provider name: "anthropic", "openai", "bedrock", "ollama", "gemini", "replay", "simulated"."""
    model: str
    """The provider's model id, e.g. "claude-sonnet-4-6"."""
    declaration: Declaration = DEFAULT_DECLARATION
    """What it sends and is (a provider whose models differ: see :meth:`declaration_for`)."""
    base_url: str | None = None
    """The server asked, when it is not the provider's own (limits and prices are per server)."""
    rate_signal: RateSignal | None = None
    """What the last reply's rate-limit headers said (the model client paces by it)."""
    structured_format: str | None = None
    """The form its structured output takes where a server takes several (learnt from the
    server: ``openai``), recorded with each structured trial; None: its provider's one field."""

    @classmethod
    def declaration_for(cls, model_id: str) -> Declaration:
        """What the backend of ``model_id`` will declare, before one is built."""
        return cls.declaration

    def effective_params(self, params: SamplingParams) -> SamplingParams:
        """The parameters actually sent: those its declaration does not send are ``None``."""
        return self.declaration.sent(params)

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        """Send one request. Raises BackendError subclasses on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        return None

    async def server_slots(self) -> int | None:
        """How many requests the server runs at once, where it says so (a self-hosted
        server); None: it does not say (the model client then sizes from latency)."""
        return None

    def should_retry(self, exc: BaseException) -> RetryDecision:
        """What a failed call means: whether to repeat it, why, and the wait the provider
        asked for (the provider decides; default: :func:`retry_decision`)."""
        return retry_decision(exc)


def generate(backend: Backend, request: ModelRequest) -> ModelResponse:
    """Sync twin of :meth:`Backend.agenerate`, usable where no event loop runs.

    Inside a running loop (a Jupyter cell) it runs on a helper thread
    (:func:`facetlab.syncbridge.run_sync`); ``await backend.agenerate(...)`` avoids that.
    """
    from facetlab.syncbridge import run_sync

    return run_sync(lambda: backend.agenerate(request))

"""An agent backed by any facetlab LLM backend, answering in strict JSON with citations.

The model is asked for ``{"decision", "rationale", "cited_evidence": [{"path", "quote"}]}``;
each quote is located in the input to become an :class:`EvidenceRef` with a real span.
A refusal raises :class:`AgentRefusalError` and a reply that is not the asked-for JSON
raises :class:`AgentOutputError`; CRAFT's sampler records both as failed samples.
"""

import json
import math
import re
import threading
from collections.abc import Sequence
from typing import Any

from facetlab.craft.errors import (
    AgentError,
    AgentOutputError,
    AgentRefusalError,
    CraftConfigError,
    PathError,
)
from facetlab.craft.evidence.resolver import is_free_text, kind_of
from facetlab.craft.path import get_path, iter_leaves
from facetlab.craft.types import AgentInput, AgentTrace, EvidenceRef, Span
from facetlab.syncbridge import run_sync

DEFAULT_TASK = "Read the input below and make a decision about it."

OUTPUT_CONTRACT = """Answer with one JSON object and nothing else (no prose, no code fence):
{"decision": "<your decision>",
 "rationale": "<one or two sentences explaining the decision>",
 "cited_evidence": [{"path": "<dot-path of an input field, e.g. ticket.body>",
                     "quote": "<the exact words from that field that drove the decision>"}]}
Cite only the evidence that actually determined the decision. Copy quotes verbatim; for a
number or a label field give its path and omit "quote"."""

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_REFUSAL = re.compile(
    r"^\s*(i'?m sorry|i am sorry|i can(?:no|')t|i won'?t|i am unable|i'?m unable|as an ai)",
    re.IGNORECASE,
)


def reply_schema(decisions: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON schema of an agent's reply (structured output): the :data:`OUTPUT_CONTRACT`.

    >>> reply_schema(["P1", "P3"])["properties"]["decision"]
    {'type': 'string', 'enum': ['P1', 'P3']}
    """
    decision: dict[str, Any] = {"type": "string"}
    if decisions:
        decision["enum"] = list(decisions)
    citation = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "quote": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "decision": decision,
            "rationale": {"type": "string"},
            "cited_evidence": {"type": "array", "items": citation},
        },
        "required": ["decision", "rationale", "cited_evidence"],
        "additionalProperties": False,
    }


def build_prompt(
    input: AgentInput, *, task: str = DEFAULT_TASK, decisions: Sequence[str] | None = None
) -> str:
    """The prompt an :class:`LLMAgentAdapter` sends for ``input``."""
    parts = [task.strip()]
    if decisions:
        allowed = ", ".join(json.dumps(d) for d in decisions)
        parts.append(f"The decision must be exactly one of: {allowed}.")
    parts += [
        'Input (JSON; refer to fields by dot-paths such as "a.b" or "items.0"):\n'
        + json.dumps(input, indent=2, ensure_ascii=False, default=str),
        OUTPUT_CONTRACT,
    ]
    return "\n\n".join(parts)


def _locate(value: str, quote: str) -> Span | None:
    start = value.find(quote)
    if start >= 0:
        return Span(start, start + len(quote), quote)
    m = re.search(re.escape(quote), value, re.IGNORECASE)
    if m:
        return Span(m.start(), m.end(), m.group())
    # tolerate whitespace differences: match word by word
    words = quote.split()
    if words:
        pattern = r"\s+".join(re.escape(w) for w in words)
        if m := re.search(pattern, value, re.IGNORECASE):
            return Span(m.start(), m.end(), m.group())
    return None


def resolve_citation(
    input: AgentInput, path: str, quote: str | None
) -> tuple[EvidenceRef | None, str | None]:
    """One model citation -> an :class:`EvidenceRef` (or ``None``) and a warning.

    A leading dot (jq style, ``.body``) is read from the root; when that path is not in
    the input, the one leaf whose path ends with it (``ticket.body``) is taken.
    """
    if path.startswith(".") and path.strip("."):
        rooted = path.lstrip(".")
        ends = [p for p, _ in iter_leaves(input) if p == rooted or p.endswith("." + rooted)]
        path = ends[0] if len(ends) == 1 else rooted
    try:
        value = get_path(input, path)
    except PathError as exc:
        value = None
        if quote:
            for other, leaf in iter_leaves(input):
                if isinstance(leaf, str) and (span := _locate(leaf, quote)):
                    ref = EvidenceRef(other, "text", "explicit", span)
                    return ref, f"cited path {path!r} not in input; quote found in {other!r}"
        return None, f"cited evidence dropped: {exc}"
    if isinstance(value, (dict, list)):
        return None, f"cited path {path!r} is a {type(value).__name__}, not a field"
    if isinstance(value, str) and (quote or is_free_text(value)):
        if not quote:
            return EvidenceRef(path, "text", "explicit", Span(0, len(value), value)), None
        span = _locate(value, quote)
        if span is None:
            return None, f"cited quote {quote!r} does not occur in {path!r}; dropped"
        return EvidenceRef(path, "text", "explicit", span), None
    return EvidenceRef(path, kind_of(value), "explicit"), None


def parse_reply(
    text: str, input: AgentInput, *, decisions: Sequence[str] | None = None, agent: str = "llm"
) -> AgentTrace:
    """Parse a strict-JSON reply into an :class:`AgentTrace`; raise on anything else."""
    body = text.strip()
    if fenced := _FENCE.match(body):
        body = fenced.group(1)
    try:
        # strict=False: a raw newline inside a string is harmless, and grammar-constrained
        # small models emit it (SmolLM2 on llama-cpp-python's server: 12 of 143 replies)
        data = json.loads(body, strict=False)
    except json.JSONDecodeError as exc:
        if _REFUSAL.match(body):
            raise AgentRefusalError(f"{agent} refused: {body[:200]!r}") from None
        raise AgentOutputError(
            f"{agent} reply is not valid JSON ({exc.msg} at line {exc.lineno} col {exc.colno}): "
            f"{body[:200]!r}"
        ) from None
    if not isinstance(data, dict):
        raise AgentOutputError(f"{agent} reply is JSON {type(data).__name__}, expected an object")
    decision = data.get("decision")
    if not isinstance(decision, str) or not decision.strip():
        raise AgentOutputError(
            f"{agent} reply: 'decision' must be a non-empty string, got {decision!r}"
        )
    decision = decision.strip()
    if decisions:
        match = next((d for d in decisions if d.lower() == decision.lower()), None)
        if match is None:
            raise AgentOutputError(
                f"{agent} reply: decision {decision!r} is not one of {list(decisions)}"
            )
        decision = match
    rationale = data.get("rationale", "")
    if not isinstance(rationale, str):
        raise AgentOutputError(f"{agent} reply: 'rationale' must be a string")
    cited = data.get("cited_evidence", [])
    if not isinstance(cited, list):
        raise AgentOutputError(f"{agent} reply: 'cited_evidence' must be a list")
    refs: list[EvidenceRef] = []
    warnings: list[str] = []
    for index, item in enumerate(cited):
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            warnings.append(f"cited_evidence[{index}] has no string 'path'; dropped")
            continue
        quote = item.get("quote")
        if quote is not None and not isinstance(quote, str):
            warnings.append(f"cited_evidence[{index}].quote is not a string; ignored")
            quote = None
        ref, warning = resolve_citation(input, item["path"], quote or None)
        if ref is not None and ref not in refs:
            refs.append(ref)
        if warning:
            warnings.append(warning)
    # An optional numeric "confidence" becomes the trace's score (the qualified verdict
    # then also tests how far it moves); anything else there is ignored with a warning.
    confidence = data.get("confidence")
    score: float | None = None
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
        if math.isfinite(confidence):
            score = float(confidence)
    elif confidence is not None:
        warnings.append(f"'confidence' {confidence!r} is not a number; ignored")
    return AgentTrace(decision, rationale, refs, warnings, score)


class ModelAgent:
    """What an agent that calls a model through a :class:`~facetlab.client.ModelClient`
    has: :meth:`use_limits`, :attr:`spend_usd`, and :meth:`run`, which enters the
    coroutine :meth:`arun` through :func:`facetlab.syncbridge.run_sync`."""

    backend: Any
    client: Any

    async def arun(self, input: AgentInput) -> AgentTrace:
        raise NotImplementedError

    def run(self, input: AgentInput) -> AgentTrace:
        return run_sync(lambda: self.arun(input))

    def use_limits(
        self, *, budget_usd: float | None = None, requests_per_minute: float | None = None
    ) -> None:
        """Send later calls within a budget (USD) and a request rate (``craft --budget-usd --rpm``).

        A call whose worst-case cost no longer fits the budget is not sent; the sample
        fails with the budget's message.
        """
        self.client = limited_client(
            self.backend, budget_usd=budget_usd, requests_per_minute=requests_per_minute
        )

    @property
    def spend_usd(self) -> float:
        """What this agent's calls have cost so far (by the price table)."""
        return float(self.client.meter.spent_usd)


class LLMAgentAdapter(ModelAgent):
    """An agent adapter around a facetlab :class:`~facetlab.backends.base.Backend`.

    ``arun`` is the call; ``run`` enters it through :func:`facetlab.syncbridge.run_sync`
    (CRAFT itself awaits ``arun`` on its own loop). The backend rebuilds its SDK client
    when it meets a new event loop.
    """

    def __init__(
        self,
        backend: Any,
        *,
        task: str = DEFAULT_TASK,
        decisions: Sequence[str] | None = None,
        temperature: float | None = 1.0,
        max_tokens: int = 1024,
        system: str | None = None,
        client: Any | None = None,
        structured: bool = False,
    ) -> None:
        from facetlab.backends import declaration_of
        from facetlab.client import ModelClient

        if structured and not declaration_of(backend).structured_output:
            provider = getattr(backend, "provider", type(backend).__name__)
            raise CraftConfigError(
                f"structured=True: {provider} takes no JSON schema for its reply; "
                "use an OpenAI-compatible, Anthropic, Gemini or Ollama model, or structured=False"
            )
        self.backend = backend
        self.failure_causes: dict[str, int] = {}
        """Failed calls by cause (``craft`` prints them): what the client said, refusals,
        replies that were not the asked-for JSON."""
        self._lock = threading.Lock()
        self.structured = structured
        """Ask for the reply as JSON against :func:`reply_schema`, in the provider's
        structured-output field (OpenAI and compatible servers ``response_format``,
        Anthropic ``output_config.format``); a backend without one fails each sample."""
        self.client: ModelClient = client or ModelClient(backend)
        """Every call goes through it: retries, rate limits, budget (see :meth:`use_limits`)."""
        self.task = task
        self.decisions = list(decisions) if decisions else None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.system = system
        self.name = f"{getattr(backend, 'provider', 'llm')}/{getattr(backend, 'model', '?')}"

    def __repr__(self) -> str:
        return f"LLMAgentAdapter({self.name!r})"

    def prompt(self, input: AgentInput) -> str:
        return build_prompt(input, task=self.task, decisions=self.decisions)

    async def arun(self, input: AgentInput) -> AgentTrace:
        try:
            return await self._ask(input)
        except AgentError as exc:
            cause = failure_cause(exc)
            with self._lock:
                self.failure_causes[cause] = self.failure_causes.get(cause, 0) + 1
            raise

    async def _ask(self, input: AgentInput) -> AgentTrace:
        from facetlab.backends.base import ModelRequest, SamplingParams
        from facetlab.errors import BackendError, BudgetExceededError

        request = ModelRequest(
            self.prompt(input),
            params=SamplingParams(
                temperature=self.temperature, max_tokens=self.max_tokens, system=self.system
            ),
            context={"probe": "craft-agent"},
            output_schema=reply_schema(self.decisions) if self.structured else None,
        )
        try:
            response = (await self.client.generate(request)).response
        except BudgetExceededError as exc:
            raise AgentError(f"{self.name}: not sent, budget reached: {exc}") from exc
        except BackendError as exc:
            raise AgentError(f"{self.name}: backend error: {exc}") from exc
        if response.refusal:
            raise AgentRefusalError(f"{self.name} refused: {response.text[:200]!r}")
        if response.stop_reason in ("max_tokens", "length"):
            raise AgentOutputError(
                f"{self.name} reply was cut off at max_tokens={self.max_tokens}: "
                f"{response.text[:120]!r}"
            )
        return parse_reply(response.text, input, decisions=self.decisions, agent=self.name)

    async def aclose(self) -> None:
        await self.backend.aclose()


def failure_cause(exc: AgentError) -> str:
    """A short cause for a failed agent call (the client's cause for a model call)."""
    origin = exc.__cause__
    cause = getattr(origin, "cause", None)
    if isinstance(cause, str):
        return cause
    if type(origin).__name__ == "BudgetExceededError":
        return "not sent: budget reached"
    if isinstance(exc, AgentRefusalError):
        return "the model refused"
    if isinstance(exc, AgentOutputError):
        return "cut off at max_tokens" if "cut off" in str(exc) else "reply not the asked-for JSON"
    return type(origin or exc).__name__


def limited_client(
    backend: Any, *, budget_usd: float | None = None, requests_per_minute: float | None = None
) -> Any:
    """A :class:`~facetlab.client.ModelClient` for ``backend`` with a budget and a request rate."""
    from facetlab.client import CostMeter, Limits, ModelClient

    return ModelClient(
        backend,
        limits=Limits(requests_per_minute=requests_per_minute),
        meter=CostMeter(budget_usd),
    )


DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-4o-mini",
    "bedrock": "anthropic.claude-3-5-haiku-20241022-v1:0",
}
"""The model each named entry point uses when none is given."""


def llm_adapter(
    provider: str,
    model: str | None = None,
    *,
    backend: Any | None = None,
    base_url: str | None = None,
    task: str = DEFAULT_TASK,
    decisions: Sequence[str] | None = None,
    temperature: float | None = 1.0,
    max_tokens: int = 1024,
    system: str | None = None,
    structured: bool = False,
    **backend_options: Any,
) -> LLMAgentAdapter:
    """An :class:`LLMAgentAdapter` for ``provider/model`` via :func:`facetlab.backends.get_backend`.

    ``model`` defaults to :data:`DEFAULT_MODELS` for the provider. ``structured=True``
    asks for the reply as JSON against :func:`reply_schema` where the provider can
    constrain it (small and open models then answer parseably). Pass ``backend=`` to
    reuse an existing facetlab backend (or a fake in tests); ``backend_options`` (e.g.
    ``api_key``) go to :func:`facetlab.backends.get_backend`.

    >>> adapter = llm_adapter("openai", backend=my_backend, decisions=["P1", "P3"])  # doctest: +SKIP
    """
    if model is None:
        if provider not in DEFAULT_MODELS:
            raise AgentError(
                f"no default model for provider {provider!r}; pass model= "
                f"(defaults exist for {', '.join(DEFAULT_MODELS)})"
            )
        model = DEFAULT_MODELS[provider]
    if backend is None:
        from facetlab.backends import get_backend

        backend = get_backend(f"{provider}/{model}", base_url=base_url, **backend_options)
    return LLMAgentAdapter(
        backend,
        task=task,
        decisions=decisions,
        temperature=temperature,
        max_tokens=max_tokens,
        system=system,
        structured=structured,
    )


# Named entry points: the same adapter, one provider each (options as in llm_adapter).


def anthropic_adapter(model: str | None = None, **options: Any) -> LLMAgentAdapter:
    """An agent backed by ``anthropic/<model>`` (Messages API; key from ANTHROPIC_API_KEY).

    >>> agent = anthropic_adapter(decisions=["P1", "P2", "P3"])  # doctest: +SKIP
    >>> report = inspect(agent, {"body": "..."})                # doctest: +SKIP
    """
    return llm_adapter("anthropic", model, **options)


def openai_adapter(model: str | None = None, **options: Any) -> LLMAgentAdapter:
    """An agent backed by ``openai/<model>`` (or any OpenAI-compatible server via ``base_url``)."""
    return llm_adapter("openai", model, **options)


def bedrock_adapter(model: str | None = None, **options: Any) -> LLMAgentAdapter:
    """An agent backed by ``bedrock/<model>`` (Converse API; AWS credential chain)."""
    return llm_adapter("bedrock", model, **options)

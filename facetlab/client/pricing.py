"""A maintained price table: USD per 1M input/output tokens, per provider model id.

Used for ``--dry-run`` estimates, ``--budget-usd`` and the ``cost_usd`` of every
record. Prices change; the table carries its date and source, and a user can
override or extend it with a JSON file named by ``FACETLAB_PRICES``
(``{"model-id": {"input": 3.0, "output": 15.0}}``; a key is a model id or
``provider/model-id``).

>>> price_for("anthropic/claude-sonnet-4-6").input_per_mtok
3.0
>>> round(cost_usd("anthropic/claude-sonnet-4-6", 1000, 100), 6)
0.0045
"""

import functools
import json
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from facetlab.errors import ConfigError
from facetlab.models import MODELS

AS_OF = "2026-04-15"
"""The date of the oldest price in the built-in table (each family carries its own)."""
SOURCE = (
    "Vendor list prices as last checked by the facetlab maintainers (each family names its "
    "page and date); facetlab cannot verify them offline. Verify before relying on an "
    "estimate and override with FACETLAB_PRICES=<file.json>."
)
BATCH_DISCOUNT = 0.5
"""Anthropic Message Batches and OpenAI Batch both bill half the on-demand price."""


@dataclass(frozen=True)
class Price:
    """USD per one million tokens, and where the figure comes from.

    Reasoning (thinking) tokens are billed as output: every provider here counts them
    in its output tokens. Input read from the provider's prompt cache is billed at
    ``cached_input_per_mtok`` (the input price when the provider has no such rate).
    """

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    source: str = "FACETLAB_PRICES"
    as_of: str = ""

    @property
    def cached_rate(self) -> float:
        """USD per 1M cached input tokens."""
        if self.cached_input_per_mtok is None:
            return self.input_per_mtok
        return self.cached_input_per_mtok

    def cost(
        self,
        input_tokens: object,
        output_tokens: object,
        *,
        batch: bool = False,
        cached: object = None,
    ) -> float | None:
        """USD for one call; ``None`` when its usage is not counts (a free price is 0 all
        the same). ``cached`` input tokens (part of the input) are billed at the cached
        rate; reasoning tokens are part of the output."""
        if self.input_per_mtok == 0 and self.output_per_mtok == 0:
            return 0.0
        if not (is_count(input_tokens) and is_count(output_tokens)):
            return None
        assert isinstance(input_tokens, int) and isinstance(output_tokens, int)  # checked
        read = min(cached, input_tokens) if isinstance(cached, int) and is_count(cached) else 0
        usd = (
            (input_tokens - read) * self.input_per_mtok
            + read * self.cached_rate
            + output_tokens * self.output_per_mtok
        ) / 1e6
        return usd * BATCH_DISCOUNT if batch else usd


_ANTHROPIC = (
    "Anthropic pricing page (claude.com/pricing); cache reads at 0.1x input (Anthropic's "
    "documented ratio, entered 2026-12-01 without an online check)"
)
_OPENAI = (
    "OpenAI API pricing page (openai.com/api/pricing); the cached-input rates (0.1x input "
    "for GPT-5 models, 0.5x for GPT-4o) entered 2026-12-01 without an online check"
)
_BEDROCK = "AWS Bedrock on-demand pricing, us-east-1 (aws.amazon.com/bedrock/pricing)"
_GEMINI = (
    "Gemini API pricing (ai.google.dev/gemini-api/docs/pricing), standard tier, prompts "
    "up to 200k tokens, context-cache reads at 0.1x input; as quoted from that page in "
    "March 2026 by a third-party summary (not checked online by facetlab: no network)"
)
_BEDROCK_ADDED = (
    "AWS Bedrock on-demand pricing, us-east-1 (aws.amazon.com/bedrock/pricing); entered "
    "2026-12-01 from the published list without an online check (no network): verify"
)

# The paper's models, by display name; their provider ids come from the one model
# table (facetlab.models), so an id is never restated here.
_PAPER_PRICES: dict[str, Price] = {
    "Claude Sonnet 4.6": Price(3.0, 15.0, 0.30, _ANTHROPIC, "2026-04-15"),
    "Claude Opus 4.6": Price(5.0, 25.0, 0.50, _ANTHROPIC, "2026-04-15"),
    "GPT-5.4": Price(2.5, 15.0, 0.25, _OPENAI, "2026-04-15"),
    "DeepSeek v3.2": Price(0.62, 1.85, None, _BEDROCK, "2026-04-15"),
    "Mistral Large 3": Price(0.5, 1.5, None, _BEDROCK, "2026-04-15"),
    "Llama 4 Maverick": Price(0.24, 0.97, None, _BEDROCK, "2026-04-15"),
    "Llama 4 Scout": Price(0.17, 0.66, None, _BEDROCK, "2026-04-15"),
    "Qwen3 Next 80B-A3B": Price(0.15, 1.2, None, _BEDROCK, "2026-04-15"),
}

# Other current models people run the probes on, keyed by provider model id.
_OTHER_PRICES: dict[str, Price] = {
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, _ANTHROPIC, "2026-04-15"),
    "gpt-5": Price(1.25, 10.0, 0.125, _OPENAI, "2026-04-15"),
    "gpt-5-mini": Price(0.25, 2.0, 0.025, _OPENAI, "2026-04-15"),
    "gpt-4o": Price(2.5, 10.0, 1.25, _OPENAI, "2026-04-15"),
    "gpt-4o-mini": Price(0.15, 0.6, 0.075, _OPENAI, "2026-04-15"),
    # Bedrock's other families: Claude (CRAFT's default Bedrock agent) and Amazon Nova
    "anthropic.claude-3-5-haiku-20241022-v1:0": Price(0.8, 4.0, 0.08, _BEDROCK_ADDED, "2026-12-01"),
    "amazon.nova-pro-v1:0": Price(0.8, 3.2, 0.2, _BEDROCK_ADDED, "2026-12-01"),
    "amazon.nova-lite-v1:0": Price(0.06, 0.24, 0.015, _BEDROCK_ADDED, "2026-12-01"),
    "amazon.nova-micro-v1:0": Price(0.035, 0.14, 0.00875, _BEDROCK_ADDED, "2026-12-01"),
    "gemini-2.5-pro": Price(1.25, 10.0, 0.125, _GEMINI, "2026-03"),
    "gemini-2.5-flash": Price(0.30, 2.50, 0.03, _GEMINI, "2026-03"),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.01, _GEMINI, "2026-03"),
}

# Keyed by the provider's model id (the part after "provider/").
_TABLE: dict[str, Price] = {
    **{
        model_id: _PAPER_PRICES[info.display_name]
        for info in MODELS
        for model_id in info.provider_ids
    },
    **_OTHER_PRICES,
}

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})


def _overrides() -> dict[str, Price]:
    path = os.environ.get("FACETLAB_PRICES")
    if not path:
        return {}
    try:
        stat = Path(path).stat()
    except OSError as exc:
        raise ConfigError(f"FACETLAB_PRICES={path}: cannot read price file: {exc}") from exc
    # priced once per paid response: re-read the file only when it changes
    return dict(_read_overrides(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=8)
def _read_overrides(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, Price], ...]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"FACETLAB_PRICES={path}: cannot read price file: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"FACETLAB_PRICES={path}: expected an object of model id -> prices")
    out: list[tuple[str, Price]] = []
    for model_id, entry in raw.items():
        try:
            cached = entry.get("cached_input")
            price = Price(
                float(entry["input"]),
                float(entry["output"]),
                None if cached is None else float(cached),
                source=f"FACETLAB_PRICES={path}",
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(
                f"FACETLAB_PRICES={path}: /{model_id} must be "
                '{"input": <USD per 1M>, "output": <USD per 1M>} (optional "cached_input")'
            ) from exc
        for side, value in (
            ("input", price.input_per_mtok),
            ("output", price.output_per_mtok),
            ("cached_input", price.cached_rate),
        ):
            # a NaN or negative price would make every budget check pass
            if not math.isfinite(value) or value < 0:
                raise ConfigError(
                    f"FACETLAB_PRICES={path}: /{model_id}/{side} is {value}; "
                    "expected a finite number >= 0 (USD per 1M tokens)"
                )
        out.append((model_id, price))
    return tuple(out)


def split_model(model: str) -> tuple[str, str]:
    """``"anthropic/claude-sonnet-4-6"`` -> ``("anthropic", "claude-sonnet-4-6")``."""
    provider, sep, model_id = model.partition("/")
    return (provider, model_id) if sep else ("", model)


def is_loopback(url: str | None) -> bool:
    """Whether a base URL points at this machine (a local server: free unless priced).

    >>> is_loopback("http://127.0.0.1:8000/v1"), is_loopback("https://api.openai.com/v1")
    (True, False)
    """
    if not url:
        return False
    return (urlsplit(url if "://" in url else f"http://{url}").hostname or "") in LOOPBACK_HOSTS


def price_for(model: str, *, endpoint: str | None = None) -> Price | None:
    """The price of a model string or bare model id; ``None`` when unknown.

    Providers that declare themselves free (local servers, offline reasoners) price
    at zero, and so does any model asked on a loopback ``endpoint`` (or the string's
    ``?base_url=``) unless ``FACETLAB_PRICES`` names it; model-string options
    (``?region=``, ``?profile=``) never change the price.
    """
    from facetlab.backends import provider_declaration

    provider, model_id = split_model(model)
    model_id, _, query = model_id.partition("?")
    overrides = _overrides()
    for key in (f"{provider}/{model_id}", model_id):  # "openai/mock" or "mock"
        if key in overrides:
            return overrides[key]
    if provider and provider_declaration(provider).free:
        return Price(0.0, 0.0, source=f"{provider}: free (declared by its backend)")
    given = parse_qs(query).get("base_url", [None])[0]
    if is_loopback(endpoint or given):
        if stray := [key for key in overrides if key.startswith(f"{provider}/")]:
            # a price meant for this model under another spelling would be ignored silently
            # (warnings shows it once per process)
            warnings.warn(
                f"{provider}/{model_id} on a local server is free: FACETLAB_PRICES prices "
                f"{', '.join(sorted(stray))}, not {provider}/{model_id}",
                stacklevel=2,
            )
        return Price(0.0, 0.0, source="a local server (loopback): free")
    if model_id in _TABLE:
        return _TABLE[model_id]
    # Bedrock cross-region inference profiles ("us.", "eu.", "apac.") bill like the base id.
    bases = (
        model_id[len(p) :] for p in ("us.", "eu.", "apac.", "global.") if model_id.startswith(p)
    )
    return next((_TABLE[base] for base in bases if base in _TABLE), None)


# No call reads or writes a billion tokens: a larger usage is not a count (10^400 would
# not even convert to a float), and the call is charged its worst case instead.
MAX_TOKENS_PER_CALL = 10**9


def is_count(value: object) -> bool:
    """A token count a price can be applied to: a whole number from 0 to a billion."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS_PER_CALL
    )


def cost_usd(
    model: str,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    batch: bool = False,
    cached_input_tokens: int | None = None,
    endpoint: str | None = None,
) -> float | None:
    """USD for one call by ``model``'s price (:meth:`Price.cost`); ``None`` when the
    price or the usage is unknown."""
    price = price_for(model, endpoint=endpoint)
    if price is None:
        return None
    return price.cost(input_tokens, output_tokens, batch=batch, cached=cached_input_tokens)


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: one token per four characters, at least one."""
    return max(1, (len(text) + 3) // 4)


def price_table() -> dict[str, Price]:
    """The effective table (built-in entries plus ``FACETLAB_PRICES`` overrides)."""
    return {**_TABLE, **_overrides()}


def describe_table() -> str:
    """The table in use as text (``facetlab prices``): model id, USD per 1M, date and source."""
    rows = sorted(price_table().items(), key=lambda item: (item[1].source, item[0]))
    lines = [
        f"USD per 1M tokens (built-in table as of {AS_OF}; {SOURCE})",
        f"{'model id':<44} {'input':>8} {'cached':>8} {'output':>8}  as of       source",
        *(
            f"{model_id:<44} {p.input_per_mtok:>8.3f} {p.cached_rate:>8.4f} "
            f"{p.output_per_mtok:>8.3f}  {p.as_of or '-':<10}  {p.source}"
            for model_id, p in rows
        ),
    ]
    lines.append(
        "free: providers that declare it (ollama, replay, simulated) and any model on a "
        "loopback server (127.0.0.1, localhost) unless FACETLAB_PRICES names it"
    )
    return "\n".join(lines)

"""A maintained price table: USD per 1M input/output tokens, per provider model id.

Used for ``--dry-run`` estimates, ``--budget-usd`` and the ``cost_usd`` of every
record. Prices change; the table carries its date and source, and a user can
override or extend it with a JSON file named by ``FACETLAB_PRICES``
(``{"model-id": {"input": 3.0, "output": 15.0}}``).

>>> price_for("anthropic/claude-sonnet-4-6").input_per_mtok
3.0
>>> round(cost_usd("anthropic/claude-sonnet-4-6", 1000, 100), 6)
0.0045
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from facetlab.errors import ConfigError
from facetlab.models import MODELS

AS_OF = "2026-04-15"
SOURCE = (
    "Vendor list prices (Anthropic pricing page, OpenAI API pricing page, AWS Bedrock "
    "on-demand pricing for us-east-1) as last checked by the facetlab maintainers; "
    "facetlab cannot verify them offline. Verify before relying on an estimate and "
    "override with FACETLAB_PRICES=<file.json>."
)
BATCH_DISCOUNT = 0.5
"""Anthropic Message Batches and OpenAI Batch both bill half the on-demand price."""


@dataclass(frozen=True)
class Price:
    """USD per one million tokens."""

    input_per_mtok: float
    output_per_mtok: float


# The paper's models, by display name; their provider ids come from the one model
# table (facetlab.models), so an id is never restated here.
_PAPER_PRICES: dict[str, Price] = {
    "Claude Sonnet 4.6": Price(3.0, 15.0),
    "Claude Opus 4.6": Price(5.0, 25.0),
    "GPT-5.4": Price(2.5, 15.0),
    # AWS Bedrock on-demand (us-east-1)
    "DeepSeek v3.2": Price(0.62, 1.85),
    "Mistral Large 3": Price(0.5, 1.5),
    "Llama 4 Maverick": Price(0.24, 0.97),
    "Llama 4 Scout": Price(0.17, 0.66),
    "Qwen3 Next 80B-A3B": Price(0.15, 1.2),
}

# Other current models people run the probes on, keyed by provider model id.
_OTHER_PRICES: dict[str, Price] = {
    "claude-haiku-4-5": Price(1.0, 5.0),
    "gpt-5": Price(1.25, 10.0),
    "gpt-5-mini": Price(0.25, 2.0),
    "gpt-4o": Price(2.5, 10.0),
    "gpt-4o-mini": Price(0.15, 0.6),
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
            price = Price(float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"FACETLAB_PRICES={path}: /{model_id} must be "
                '{"input": <USD per 1M>, "output": <USD per 1M>}'
            ) from exc
        for side, value in (("input", price.input_per_mtok), ("output", price.output_per_mtok)):
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
    if not sep:
        return "", model
    return provider, model_id


def price_for(model: str) -> Price | None:
    """The price of a model string or bare model id; ``None`` when unknown.

    Providers that declare themselves free (local servers, offline reasoners) price
    at zero; model-string options (``?region=``) never change the price.
    """
    from facetlab.backends import provider_declaration

    provider, model_id = split_model(model)
    model_id = model_id.partition("?")[0]  # options (region, profile, timeout) do not change it
    if provider and provider_declaration(provider).free:
        return Price(0.0, 0.0)
    table = {**_TABLE, **_overrides()}
    if model_id in table:
        return table[model_id]
    # Bedrock cross-region inference profiles ("us.", "eu.", "apac.") bill like the base id.
    for prefix in ("us.", "eu.", "apac.", "global."):
        if model_id.startswith(prefix) and model_id[len(prefix) :] in table:
            return table[model_id[len(prefix) :]]
    return None


def cost_usd(
    model: str, input_tokens: int | None, output_tokens: int | None, *, batch: bool = False
) -> float | None:
    """USD for one call; ``None`` when the price or the usage is unknown."""
    price = price_for(model)
    if price is not None and price.input_per_mtok == 0 and price.output_per_mtok == 0:
        return 0.0  # free providers cost nothing even when they report no usage
    if price is None or input_tokens is None or output_tokens is None:
        return None
    usd = (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6
    return usd * BATCH_DISCOUNT if batch else usd


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: one token per four characters, at least one."""
    return max(1, (len(text) + 3) // 4)


def price_table() -> dict[str, Price]:
    """The effective table (built-in entries plus ``FACETLAB_PRICES`` overrides)."""
    return {**_TABLE, **_overrides()}

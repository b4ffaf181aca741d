"""The one canonical model catalogue: every model facetlab knows by name.

Raw FACET files name the same model in several ways (CLI aliases such as
``opus``, vendor ids such as ``claude-opus-4-6``, Bedrock ids such as
``us.meta.llama4-scout-17b-instruct-v1:0`` and the file-name form ``..._v1_0``).
Every such spelling maps to exactly one :class:`ModelInfo` here; nothing else in
facetlab keeps its own list of model names. The catalogue is generic: which of these
models the FACET paper reports, in which order, and its case labels live in
:mod:`facetlab.paper.models`; which raw runs the FACET data marks as unused, in
:mod:`facetlab.datasets.conventions`.

>>> canonical_model("opus").display_name
'Claude Opus 4.6'
>>> canonical_model("bedrock/us.meta.llama4-scout-17b-instruct-v1_0").display_name
'Llama 4 Scout'
>>> canonical_model("gemini-default") is None
True
"""

from dataclasses import dataclass
from typing import Literal

__all__ = ["MODELS", "ModelInfo", "canonical_model", "model_by_name", "model_candidates"]


@dataclass(frozen=True)
class ModelInfo:
    """One model of the catalogue (labs, weights and parameters as the FACET paper's Table 1 gives them).

    ``provider_ids`` are the ids a provider API accepts (the first one is the one
    facetlab requests); ``legacy_labels`` are the other spellings found in the
    FACET v3 raw files and file names. ``order`` is the position in the catalogue
    (0 = first; presets list models in this order). ``lab`` is spelled as in the paper's Table 1.
    """

    display_name: str
    lab: str
    weights: Literal["open", "closed"]
    provider: str
    provider_ids: tuple[str, ...]
    legacy_labels: tuple[str, ...]
    order: int
    params: str = "n/d"
    """Total / active parameters as the paper's Table 1 gives them ("n/d": not disclosed)."""

    @property
    def aliases(self) -> tuple[str, ...]:
        """Every spelling that resolves to this model (display name included)."""
        return (self.display_name, *self.provider_ids, *self.legacy_labels)


MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        display_name="Claude Sonnet 4.6",
        lab="Anthropic",
        weights="closed",
        provider="anthropic",
        provider_ids=("claude-sonnet-4-6",),
        legacy_labels=("sonnet", "claude-sonnet", "claude-sonnet-4.6"),
        order=0,
    ),
    ModelInfo(
        display_name="Claude Opus 4.6",
        lab="Anthropic",
        weights="closed",
        provider="anthropic",
        provider_ids=("claude-opus-4-6",),
        legacy_labels=("opus", "claude-opus", "claude-opus-4.6"),
        order=1,
    ),
    ModelInfo(
        display_name="GPT-5.4",
        lab="OpenAI",
        weights="closed",
        provider="openai",
        provider_ids=("gpt-5.4",),
        legacy_labels=("codex", "codex-gpt-5.4", "gpt-5-4"),
        order=2,
    ),
    ModelInfo(
        display_name="DeepSeek v3.2",
        lab="DeepSeek",
        weights="open",
        provider="bedrock",
        provider_ids=("deepseek.v3.2",),
        legacy_labels=("bedrock-deepseek.v3.2", "deepseek-v3.2"),
        order=3,
        params="671B / 37B",
    ),
    ModelInfo(
        display_name="Mistral Large 3",
        lab="Mistral",
        weights="open",
        provider="bedrock",
        provider_ids=("mistral.mistral-large-3-675b-instruct",),
        legacy_labels=("bedrock-mistral.mistral-large-3-675b-instruct", "mistral-large-3"),
        order=4,
        params="675B / 41B",
    ),
    ModelInfo(
        display_name="Llama 4 Maverick",
        lab="Meta",
        weights="open",
        provider="bedrock",
        provider_ids=(
            "us.meta.llama4-maverick-17b-instruct-v1:0",
            "meta.llama4-maverick-17b-instruct-v1:0",
        ),
        legacy_labels=(
            "us.meta.llama4-maverick-17b-instruct-v1_0",
            "us.meta.llama4-maverick-17b-instruct-v1-0",
            "llama4-maverick",
        ),
        order=5,
        params="400B / 17B",
    ),
    ModelInfo(
        display_name="Llama 4 Scout",
        lab="Meta",
        weights="open",
        provider="bedrock",
        provider_ids=(
            "us.meta.llama4-scout-17b-instruct-v1:0",
            "meta.llama4-scout-17b-instruct-v1:0",
        ),
        legacy_labels=(
            "us.meta.llama4-scout-17b-instruct-v1_0",
            "us.meta.llama4-scout-17b-instruct-v1-0",
            "llama4-scout",
        ),
        order=6,
        params="109B / 17B",
    ),
    ModelInfo(
        display_name="Qwen3 Next 80B-A3B",
        lab="Alibaba",
        weights="open",
        provider="bedrock",
        provider_ids=("qwen.qwen3-next-80b-a3b",),
        legacy_labels=("bedrock-qwen.qwen3-next-80b-a3b", "qwen3-next-80b-a3b"),
        order=7,
        params="80B / 3.9B",
    ),
)

_INDEX: dict[str, ModelInfo] = {alias.lower(): model for model in MODELS for alias in model.aliases}


def model_candidates(raw_id: str) -> list[str]:
    """The lower-cased spellings a raw id may be known by: itself, and without a ``provider/`` or
    ``provider:`` prefix.

    >>> model_candidates("Anthropic/claude-opus-4-6")
    ['anthropic/claude-opus-4-6', 'claude-opus-4-6']
    """
    # "anthropic/claude-opus-4-6" and "bedrock:deepseek.v3.2" name the model after the prefix.
    key = raw_id.strip().lower()
    out = [key]
    for sep in ("/", ":"):
        head, found, tail = key.partition(sep)
        if found and head.isalpha() and tail:
            out.append(tail)
    return out


def canonical_model(raw_id: str | None) -> ModelInfo | None:
    """The catalogue model a raw id, alias or display name refers to, or ``None``.

    Case-insensitive; an optional ``provider/`` prefix is ignored.

    >>> canonical_model("claude-sonnet-4-6").display_name
    'Claude Sonnet 4.6'
    >>> canonical_model("gemini-default") is None
    True
    """
    found = (_INDEX.get(key) for key in model_candidates(raw_id or ""))
    return next((model for model in found if model is not None), None) if raw_id else None


def model_by_name(display_name: str) -> ModelInfo:
    """The :class:`ModelInfo` with this exact display name (``KeyError`` if none).

    >>> model_by_name("GPT-5.4").provider_ids
    ('gpt-5.4',)
    """
    for model in MODELS:
        if model.display_name == display_name:
            return model
    known = ", ".join(m.display_name for m in MODELS)
    raise KeyError(f"no model named {display_name!r} in the catalogue; known: {known}")

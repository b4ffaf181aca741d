"""The one canonical model table: the eight models of the FACET paper.

Raw FACET files name the same model in several ways (CLI aliases such as
``opus``, vendor ids such as ``claude-opus-4-6``, Bedrock ids such as
``us.meta.llama4-scout-17b-instruct-v1:0`` and the file-name form ``..._v1_0``).
Every such spelling maps to exactly one :class:`ModelInfo` here; nothing else in
facetlab keeps its own list of model names.

>>> canonical_model("opus").display_name
'Claude Opus 4.6'
>>> canonical_model("bedrock/us.meta.llama4-scout-17b-instruct-v1_0").display_name
'Llama 4 Scout'
>>> exclusion_reason("gemini-default")
'gemini: not in the paper'
>>> case_of("facet-neg-cf-001-adv2")
'CF-Cabral'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CASES",
    "MODELS",
    "PAPER_MODEL_ORDER",
    "ModelInfo",
    "canonical_model",
    "case_of",
    "exclusion_reason",
    "model_by_name",
]


@dataclass(frozen=True)
class ModelInfo:
    """One model as the paper reports it.

    ``provider_ids`` are the ids a provider API accepts (the first one is the one
    facetlab requests); ``legacy_labels`` are the other spellings found in the
    FACET v3 raw files and file names. ``order`` is the position in the paper's
    tables and figures (0 = first). ``lab`` is spelled as in the paper's Table 1.
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

PAPER_MODEL_ORDER: tuple[str, ...] = tuple(m.display_name for m in MODELS)
"""Display names in the order of the paper's tables and figures."""

CASES: dict[str, str] = {
    "cf-001": "CF-Cabral",
    "cf-002": "CF-Barker",
    "cf-003": "CF-Biakanja",
}
"""Counterfactual family (``cf-00N``) → the paper's case label."""

# Ids found in the raw files that the paper deliberately leaves out, with why.
_EXCLUDED: dict[str, str] = {
    "gemini-default": "gemini: not in the paper",
    "opus-effort-high": "opus effort-high configuration: not in the paper",
    "us.deepseek.v3-2:0": "failed run with a wrong model id",
    "us.deepseek.v3-2_0": "failed run with a wrong model id",
}

_INDEX: dict[str, ModelInfo] = {alias.lower(): model for model in MODELS for alias in model.aliases}

_CASE_RE = re.compile(r"(?:^|[-_])(cf-\d{3})(?:$|[-_])")


def _candidates(raw_id: str) -> list[str]:
    # "anthropic/claude-opus-4-6" and "bedrock:deepseek.v3.2" name the model after the prefix.
    key = raw_id.strip().lower()
    out = [key]
    for sep in ("/", ":"):
        head, found, tail = key.partition(sep)
        if found and head.isalpha() and tail:
            out.append(tail)
    return out


def canonical_model(raw_id: str | None) -> ModelInfo | None:
    """The paper model a raw id, alias or display name refers to, or ``None``.

    Case-insensitive; an optional ``provider/`` prefix is ignored.

    >>> canonical_model("claude-sonnet-4-6").display_name
    'Claude Sonnet 4.6'
    >>> canonical_model("gemini-default") is None
    True
    """
    if not raw_id:
        return None
    for key in _candidates(raw_id):
        if key in _EXCLUDED:
            return None
        model = _INDEX.get(key)
        if model is not None:
            return model
    return None


def model_by_name(display_name: str) -> ModelInfo:
    """The :class:`ModelInfo` with this exact display name (``KeyError`` if none).

    >>> model_by_name("GPT-5.4").provider_ids
    ('gpt-5.4',)
    """
    for model in MODELS:
        if model.display_name == display_name:
            return model
    raise KeyError(f"no paper model named {display_name!r}; known: {', '.join(PAPER_MODEL_ORDER)}")


def exclusion_reason(raw_id: str | None, *, source_file: str | None = None) -> str | None:
    """Why a run with this model id is not one of the paper's runs, or ``None``.

    ``source_file`` matters for pilot files: the opus effort-high runs record the
    plain ``claude-opus-4-6`` id and are only told apart by their file name.

    >>> exclusion_reason("us.deepseek.v3-2:0")
    'failed run with a wrong model id'
    >>> exclusion_reason("claude-opus-4-6", source_file="facet-neg-0002-real-opus-effort-high-1.json")
    'opus effort-high configuration: not in the paper'
    >>> exclusion_reason("sonnet") is None
    True
    """
    if source_file is not None and "opus-effort-high" in source_file.lower():
        return _EXCLUDED["opus-effort-high"]
    if not raw_id:
        return "unknown model id"
    for key in _candidates(raw_id):
        if key in _EXCLUDED:
            return _EXCLUDED[key]
        if key.startswith("gemini"):
            return _EXCLUDED["gemini-default"]
    if canonical_model(raw_id) is not None:
        return None
    return "unknown model id"


def case_of(instance_id: str | None) -> str | None:
    """The paper's case label (``CF-Cabral``...) of a counterfactual id, else ``None``.

    Adversarial variants belong to their counterfactual's case; anchors and other
    in-distribution instances have no case label.

    >>> case_of("facet-neg-cf-002-adv")
    'CF-Barker'
    >>> case_of("facet-neg-0003") is None
    True
    """
    if not instance_id:
        return None
    match = _CASE_RE.search(instance_id.lower())
    return CASES.get(match.group(1)) if match else None

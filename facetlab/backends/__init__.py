"""Model providers behind one interface, chosen by a model string.

    >>> from facetlab.backends import get_backend
    >>> backend = get_backend("anthropic/claude-sonnet-4-6")             # doctest: +SKIP
    >>> backend = get_backend("openai/qwen3", base_url="http://127.0.0.1:8000/v1")  # doctest: +SKIP
    >>> backend = get_backend("replay/gpt-5.4")                          # doctest: +SKIP

One registry: the built-in providers (``anthropic``, ``openai``, ``bedrock``,
``ollama``, ``gemini``, and the offline ``replay`` and ``simulated``) by the path of
their :class:`Backend` class, imported on first use (asking for a Claude model does
not import boto3; the provider layer never imports the reasoners' probes and
records), plus what :func:`register_backend` adds.
"""

import importlib
import os
import threading
from collections.abc import Callable
from typing import Any

from facetlab.backends.base import (
    DEFAULT_DECLARATION,
    Backend,
    Declaration,
    ModelRequest,
    ModelResponse,
    RetryDecision,
    SamplingParams,
    Usage,
    declaration_of,
    generate,
)
from facetlab.backends.modelstring import ModelSpec, parse_model_string
from facetlab.errors import ConfigError

BackendClass = type[Backend]
"""A :class:`Backend` subclass: ``cls(model_id, *, base_url=None, **options)``."""

_BUILT_IN: dict[str, str] = {  # provider -> "module:Class", imported on first use
    "anthropic": "facetlab.backends.anthropic:AnthropicBackend",
    "openai": "facetlab.backends.openai:OpenAIBackend",
    "bedrock": "facetlab.backends.bedrock:BedrockBackend",
    "ollama": "facetlab.backends.ollama:OllamaBackend",
    "gemini": "facetlab.backends.gemini:GeminiBackend",
    "replay": "facetlab.reasoners.replay:ReplayBackend",
    "simulated": "facetlab.reasoners.simulated:SimulatedBackend",
}

_classes: dict[str, BackendClass] = {}
_lock = threading.Lock()


def register_backend(prefix: str, backend: BackendClass) -> None:
    """Make ``get_backend("<prefix>/<model>")`` build ``backend(model, base_url=..., **options)``.

    Registering a prefix again replaces the earlier class (tests use this to install fakes).
    """
    if not prefix or "/" in prefix or "?" in prefix or prefix != prefix.lower():
        raise ConfigError(f"invalid provider prefix {prefix!r}: lowercase, no '/' or '?'")
    with _lock:
        _classes[prefix] = backend


def available_providers() -> tuple[str, ...]:
    """Every provider prefix :func:`get_backend` accepts."""
    return tuple(dict.fromkeys([*_BUILT_IN, *_classes]))  # the built-in ones first


def backend_class(provider: str) -> BackendClass:
    """The :class:`Backend` class of ``provider`` (its module imported now, nothing built)."""
    with _lock:
        found = _classes.get(provider)
    if found is not None:
        return found
    if provider not in _BUILT_IN:
        raise ConfigError(
            f"unknown provider {provider!r}; valid providers: {', '.join(available_providers())}"
        )
    module_name, _, attr = _BUILT_IN[provider].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise ConfigError(
            f"provider {provider!r} is not available: module {module_name} is missing"
        ) from None
    cls: BackendClass = getattr(module, attr)
    with _lock:
        return _classes.setdefault(provider, cls)


def provider_declaration(provider: str) -> Declaration:
    """What the backends of ``provider`` declare; the default for a provider nobody registered."""
    if provider not in available_providers():
        return DEFAULT_DECLARATION
    return backend_class(provider).declaration


def model_declaration(model: str, backend: Backend | None = None) -> Declaration:
    """What a model string's backend declares: ``backend``'s own when given, else its
    class's for the model (:meth:`Backend.declaration_for`: Bedrock's models differ);
    the default for an unknown provider."""
    if backend is not None:
        return backend.declaration
    try:
        spec = parse_model_string(model)
    except ConfigError:
        return provider_declaration(model.partition("/")[0])
    return backend_class(spec.provider).declaration_for(spec.model)


def endpoint_of(model: str, *, base_url: str | None = None) -> str | None:
    """The server a model string is asked on, when it is not the provider's default.

    ``base_url`` (or the string's ``?base_url=``/``?endpoint_url=``), else the first of
    the provider's ``endpoint_env`` variables that is set (``OLLAMA_HOST=...``) unless
    the string names it itself (``?region=``). Credentials are the caller's to strip.
    """
    spec = parse_model_string(model)
    url = base_url or spec.options.get("base_url") or spec.options.get("endpoint_url")
    if url:
        return str(url)
    declared = provider_declaration(spec.provider)
    if declared.endpoint_option and declared.endpoint_option in spec.options:
        return None  # already part of the model string
    for name in declared.endpoint_env:
        if value := os.environ.get(name, "").strip():
            return value
    return None


def get_backend(model: str, *, base_url: str | None = None, **options: Any) -> Backend:
    """The backend for a model string such as ``"bedrock/deepseek.v3.2?region=us-west-2"``.

    Options in the string and keyword ``options`` are passed to the provider's
    constructor (keywords win). ``base_url`` points ``openai``/``ollama``/``anthropic``
    at another server. Raises :class:`~facetlab.errors.ConfigError` for an unknown
    provider, a malformed string, a missing key (naming its environment variable) or
    an option the provider does not take.
    """
    spec = parse_model_string(model)
    make: Callable[..., Backend] = backend_class(spec.provider)
    merged: dict[str, Any] = {**spec.options, **options}
    if base_url is not None:
        merged["base_url"] = base_url
    try:
        return make(spec.model, **merged)
    except TypeError as exc:
        # unknown keyword options: say which provider rejected what
        if "option" in str(exc) or "unexpected keyword" in str(exc):
            raise ConfigError(f"{spec.provider}: {exc}") from None
        raise


__all__ = [
    "DEFAULT_DECLARATION",
    "Backend",
    "BackendClass",
    "Declaration",
    "ModelRequest",
    "ModelResponse",
    "ModelSpec",
    "RetryDecision",
    "SamplingParams",
    "Usage",
    "available_providers",
    "backend_class",
    "declaration_of",
    "endpoint_of",
    "generate",
    "get_backend",
    "model_declaration",
    "parse_model_string",
    "provider_declaration",
    "register_backend",
]

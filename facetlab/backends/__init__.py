"""Model providers behind one interface, chosen by a model string.

    >>> from facetlab.backends import get_backend
    >>> backend = get_backend("anthropic/claude-sonnet-4-6")             # doctest: +SKIP
    >>> backend = get_backend("openai/qwen3", base_url="http://127.0.0.1:8000/v1")  # doctest: +SKIP
    >>> backend = get_backend("replay/gpt-5.4")                          # doctest: +SKIP

Built-in providers: ``anthropic``, ``openai``, ``bedrock``, ``ollama``, ``gemini``,
``replay`` and ``simulated`` (the last registers itself from
``facetlab.reasoners.simulated``). Provider modules are imported only when used, so
asking for a Claude model does not import boto3. Add a provider with
:func:`register_backend`.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from facetlab.backends.base import (
    DEFAULT_DECLARATION,
    Backend,
    Declaration,
    ModelRequest,
    ModelResponse,
    SamplingParams,
    TrialContext,
    Usage,
    declaration_of,
    generate,
)
from facetlab.backends.modelstring import ModelSpec, parse_model_string
from facetlab.errors import ConfigError

BackendFactory = Callable[..., Backend]
"""``factory(model_id, *, base_url=None, **options) -> Backend``."""

# provider -> "module:ClassName", imported on first use
_LAZY: dict[str, str] = {
    "anthropic": "facetlab.backends.anthropic:AnthropicBackend",
    "openai": "facetlab.backends.openai:OpenAIBackend",
    "bedrock": "facetlab.backends.bedrock:BedrockBackend",
    "ollama": "facetlab.backends.ollama:OllamaBackend",
    "gemini": "facetlab.backends.gemini:GeminiBackend",
    "replay": "facetlab.reasoners.replay:ReplayBackend",
}
# providers whose module registers itself on import
_SELF_REGISTERING: dict[str, str] = {"simulated": "facetlab.reasoners.simulated"}

_registry: dict[str, BackendFactory] = {}
_lock = threading.Lock()


_declarations: dict[str, Declaration] = {}


def register_backend(
    prefix: str, factory: BackendFactory, *, declaration: Declaration | None = None
) -> None:
    """Make ``get_backend("<prefix>/<model>")`` call ``factory(model, base_url=..., **options)``.

    ``declaration`` says what the backend is (see :class:`Declaration`); without one,
    the factory's own ``declaration`` attribute (a backend class's) is used, else the
    default. Registering a prefix again replaces the earlier factory (tests use this
    to install fakes).
    """
    if not prefix or "/" in prefix or "?" in prefix or prefix != prefix.lower():
        raise ConfigError(f"invalid provider prefix {prefix!r}: lowercase, no '/' or '?'")
    with _lock:
        _registry[prefix] = factory
        _declarations[prefix] = declaration or declaration_of(factory)


def provider_declaration(provider: str) -> Declaration:
    """What the backends of ``provider`` declare; the default for a provider nobody registered.

    Imports the provider's module on first use (not its SDK client: nothing is built).
    """
    with _lock:
        found = _declarations.get(provider)
    if found is not None:
        return found
    if provider not in _LAZY and provider not in _SELF_REGISTERING:
        return DEFAULT_DECLARATION
    factory = _factory(provider)
    with _lock:
        return _declarations.setdefault(provider, declaration_of(factory))


def available_providers() -> tuple[str, ...]:
    """Every provider prefix :func:`get_backend` accepts."""
    return tuple(sorted(set(_LAZY) | set(_SELF_REGISTERING) | set(_registry)))


def _factory(provider: str) -> BackendFactory:
    with _lock:
        found = _registry.get(provider)
    if found is not None:
        return found
    if provider in _LAZY:
        module_name, _, attr = _LAZY[provider].partition(":")
        factory: BackendFactory = getattr(importlib.import_module(module_name), attr)
        with _lock:
            return _registry.setdefault(provider, factory)
    if provider in _SELF_REGISTERING:
        module_name = _SELF_REGISTERING[provider]
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            raise ConfigError(
                f"provider {provider!r} is not available: module {module_name} is missing"
            ) from None
        with _lock:
            found = _registry.get(provider)
        if found is None:
            found = _from_spec_factory(module_name)
        if found is None:
            raise ConfigError(
                f"provider {provider!r}: {module_name} did not call register_backend({provider!r}, ...)"
            )
        return found
    raise ConfigError(
        f"unknown provider {provider!r}; valid providers: {', '.join(available_providers())}"
    )


def model_declaration(model: str, backend: object | None = None) -> Declaration:
    """The declaration of a model string's backend: ``backend``'s own if it has one, else
    its model's where the provider declares per model (a ``declaration_for(model_id)``
    class method), else its provider's (``"provider/model?options"``; the default for an
    unknown provider)."""
    if backend is not None and isinstance(getattr(backend, "declaration", None), Declaration):
        return declaration_of(backend)
    provider = str(getattr(backend, "provider", "") or model.partition("/")[0])
    declared = provider_declaration(provider)
    if backend is None and provider in available_providers():
        # a provider whose models differ (Bedrock: only Claude takes thinking) says per model
        per_model = getattr(_factory(provider), "declaration_for", None)
        if callable(per_model):
            try:
                spec = parse_model_string(model, available_providers())
            except ConfigError:
                return declared
            found = per_model(spec.model)
            return found if isinstance(found, Declaration) else declared
    return declared


def endpoint_of(model: str, *, base_url: str | None = None) -> str | None:
    """The server a model string is asked on, when it is not the provider's default.

    ``base_url`` (or the string's ``?base_url=``/``?endpoint_url=``), else the first of
    the provider's ``endpoint_env`` variables that is set (``OLLAMA_HOST=...``) unless
    the string names it itself (``?region=``). Credentials are the caller's to strip.
    """
    spec = parse_model_string(model, available_providers())
    url = base_url or spec.options.get("base_url") or spec.options.get("endpoint_url")
    if url:
        return str(url)
    declared = provider_declaration(spec.provider)
    if declared.endpoint_option and declared.endpoint_option in spec.options:
        return None  # already part of the model string
    for name in declared.endpoint_env:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def _from_spec_factory(module_name: str) -> BackendFactory | None:
    """A factory for a module exposing ``<X>Backend.from_spec(spec)`` but not registering.

    The spec string is rebuilt as ``model?options`` (options as in the model string).
    """
    module = importlib.import_module(module_name)
    for name in dir(module):
        cls = getattr(module, name)
        if name.endswith("Backend") and callable(getattr(cls, "from_spec", None)):
            return _spec_factory(cls, module_name)
    return None


def _spec_factory(cls: Any, module_name: str) -> BackendFactory:
    def factory(model: str, *, base_url: str | None = None, **options: Any) -> Backend:
        if base_url is not None:
            raise ConfigError(f"{module_name}: base_url does not apply")
        spec = f"{model}?{urlencode(options)}" if options else model
        backend: Backend = cls.from_spec(spec)
        return backend

    return factory


def get_backend(model: str, *, base_url: str | None = None, **options: Any) -> Backend:
    """The backend for a model string such as ``"bedrock/deepseek.v3.2?region=us-west-2"``.

    Options in the string and keyword ``options`` are passed to the provider's
    constructor (keywords win). ``base_url`` points ``openai``/``ollama``/``anthropic``
    at another server. Raises :class:`~facetlab.errors.ConfigError` for an unknown
    provider, a malformed string, a missing key (naming its environment variable) or
    an option the provider does not take.
    """
    spec = parse_model_string(model, available_providers())
    factory = _factory(spec.provider)
    merged: dict[str, Any] = {**spec.options, **options}
    if base_url is not None:
        merged["base_url"] = base_url
    try:
        return factory(spec.model, **merged)
    except TypeError as exc:
        # unknown keyword options: say which provider rejected what
        if "option" in str(exc) or "unexpected keyword" in str(exc):
            raise ConfigError(f"{spec.provider}: {exc}") from None
        raise


__all__ = [
    "Backend",
    "BackendFactory",
    "Declaration",
    "ModelRequest",
    "ModelResponse",
    "ModelSpec",
    "SamplingParams",
    "TrialContext",
    "Usage",
    "available_providers",
    "declaration_of",
    "endpoint_of",
    "generate",
    "get_backend",
    "model_declaration",
    "parse_model_string",
    "provider_declaration",
    "register_backend",
]

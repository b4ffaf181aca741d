"""Model strings: ``provider/model?option=value&...``.

A model string names the provider and the provider's own model id; options after
``?`` are passed to the backend's constructor (as strings)::

    >>> parse_model_string("anthropic/claude-sonnet-4-6")
    ModelSpec(provider='anthropic', model='claude-sonnet-4-6', options={})
    >>> parse_model_string("bedrock/deepseek.v3.2?region=us-west-2")
    ModelSpec(provider='bedrock', model='deepseek.v3.2', options={'region': 'us-west-2'})

The split is on the first ``/`` only, so ``openai/meta-llama/Llama-3.1-8B`` (a vLLM
model id with a slash) keeps its slash.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit

from facetlab.backends._common import decoded_text, redact_secrets
from facetlab.errors import ConfigError

# Hints for strings without a provider prefix: the bare id tells which provider is meant.
_PREFIX_HINTS: tuple[tuple[str, str], ...] = (
    ("claude", "anthropic"),
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("gemini", "gemini"),
    ("deepseek.", "bedrock"),
    ("mistral.", "bedrock"),
    ("qwen.", "bedrock"),
    ("us.", "bedrock"),
    ("meta.", "bedrock"),
    ("amazon.", "bedrock"),
    ("llama", "ollama"),
)


# Options that would put a credential into the model string, which is recorded in
# every trial record and in sweep.json: keys come from the environment instead.
_SECRET_OPTIONS = frozenset(
    {"api_key", "key", "token", "secret", "aws_access_key_id", "aws_secret_access_key"}
)


# Words that make an option (or a URL's query parameter) a credential, as parts of its
# name split on "_", "-" and ".": aws_access_key_id, x-api-key, client.secret, ...
_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "bearer",
        "sig",
        "signature",
    }
)
_URL_OPTIONS = frozenset({"host", "endpoint", "server", "proxy"})

TRANSPORT_OPTIONS = frozenset({"timeout"})
"""Options that change how a call travels, not what is asked: not part of a trial's identity."""

_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#@\s]*@")


def redact_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL in it replaced by ``***@``.

    >>> redact_userinfo("openai/m?base_url=http://admin:pw@host/v1")
    'openai/m?base_url=http://***@host/v1'
    """
    return _USERINFO.sub(r"\1***@", text)


def _secret_name(name: str) -> bool:
    normal = decoded_text(name).lower()
    return normal in _SECRET_OPTIONS or bool(set(re.split(r"[_\-.\s]+", normal)) & _SECRET_WORDS)


def _url_problem(value: str) -> str | None:
    """What makes a (decoded) URL unfit for a model string, without quoting it."""
    if any(c.isspace() or unicodedata.category(c).startswith("C") for c in value):
        return "a URL with a space or a control character"
    try:
        parts = urlsplit(value if "://" in value else "//" + value)
        _ = parts.port  # an out-of-range or non-numeric port raises here
    except ValueError:
        return "a malformed URL"
    if "@" in parts.netloc:
        return "a URL with a user name or password"
    for part in (parts.query, parts.fragment, parts.path.partition(";")[2]):
        for name, _ in parse_qsl(part.replace(";", "&"), keep_blank_values=True):
            if _secret_name(name):
                return "a URL with a key-like query parameter"
    return None


def base_url_problem(url: str) -> str | None:
    """What makes ``url`` unusable as a server's base URL, in words that never quote it (it
    may hold a password); None for ``http(s)://[user:password@]host[:port][/path]``.

    >>> base_url_problem("http://admin:pw\uff20host/v1")
    'a URL whose characters change under Unicode normalisation (a fullwidth ＠ or ：)'
    """
    if any(c.isspace() or unicodedata.category(c).startswith("C") for c in url):
        return "a URL with a space or a control character"
    if unicodedata.normalize("NFKC", url) != url:
        return "a URL whose characters change under Unicode normalisation (a fullwidth ＠ or ：)"
    try:
        parts = urlsplit(url)
        _ = parts.port  # an out-of-range or non-numeric port raises here
    except ValueError:
        return "a malformed URL (its host or port cannot be read)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http:// or https:// URL with a host"
    return None


def credential_problem(model: str) -> str | None:
    """Why ``model`` (a model string) may carry a credential, or None; never quotes it.

    Options are read as the backend will get them (percent-decoded), then decoded
    again and normalised, so ``%2F%2F``, ``%3A...%40``, double encoding, fullwidth
    characters and spaces do not hide a password or a key.

    >>> credential_problem("openai/m?base_url=http:%2F%2Fadmin:pw@host")
    "option 'base_url' holds a URL with a user name or password"
    >>> credential_problem("openai/m?base_url=http://host/v1%3Fkey%3Dabc")
    "option 'base_url' holds a URL with a key-like query parameter"
    >>> credential_problem("openai/m?base_url=http://localhost:8000/v1") is None
    True
    """
    _, _, query = model.partition("?")
    for name, value in parse_qsl(query, keep_blank_values=True):
        shown = decoded_text(name)[:40]
        if _secret_name(name):
            return f"option {shown!r} names a credential"
        decoded = decoded_text(value)
        key = shown.lower()
        if "://" in decoded or key.endswith("url") or key in _URL_OPTIONS:
            problem = _url_problem(decoded)
            if problem is not None:
                return f"option {shown!r} holds {problem}"
    whole = decoded_text(model)
    if redact_secrets(model) != model or redact_secrets(whole) != whole:
        return "it holds what looks like a credential (an API key, a token or a URL password)"
    return None


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model string."""

    provider: str
    model: str
    options: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        query = f"?{urlencode(dict(self.options))}" if self.options else ""
        return f"{self.provider}/{self.model}{query}"

    def without_transport(self) -> ModelSpec:
        """The same model without transport options (``timeout``): a trial's identity."""
        kept = {k: v for k, v in self.options.items() if k not in TRANSPORT_OPTIONS}
        return ModelSpec(self.provider, self.model, kept)


def _hint(text: str) -> str:
    lowered = text.lower()
    hints = (
        f" Did you mean '{p}/{text}'?" for prefix, p in _PREFIX_HINTS if lowered.startswith(prefix)
    )
    return next(hints, "")


def parse_model_string(model: str, providers: Iterable[str] | None = None) -> ModelSpec:
    """Split ``provider/model?opts`` into a :class:`ModelSpec`.

    ``providers`` is the set of valid provider prefixes (default: the registered
    ones, :func:`facetlab.backends.available_providers`). Raises
    :class:`~facetlab.errors.ConfigError` naming the valid providers when the
    string has no known prefix, an empty model id or a malformed option.
    """
    if providers is None:
        from facetlab.backends import available_providers  # the one registry

        providers = available_providers()
    valid = tuple(providers)
    listing = ", ".join(valid)
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(
            f"empty model string; expected 'provider/model' with provider one of: {listing}"
        )
    text = model.strip()
    problem = credential_problem(text)
    if problem is not None or _USERINFO.search(text):
        # a model string is written into every record: a password in it would be too.
        # Checked before anything else, so no other message quotes it either.
        head = text.partition("/")[0].strip().lower()
        named = f"'{head}/...'" if head in valid else "given"
        raise ConfigError(
            f"model string {named}: {problem or 'a URL with a user name or password'}; "
            "credentials may not go into a model string (it is recorded in every trial "
            "record): set the provider's key variable (e.g. OPENAI_API_KEY) instead"
        )
    base, sep, query = text.partition("?")
    provider, slash, model_id = base.partition("/")
    if not slash:
        raise ConfigError(
            f"model string {text!r} has no provider prefix; expected 'provider/model' "
            f"with provider one of: {listing}.{_hint(text)}"
        )
    provider = provider.strip().lower()
    if provider not in valid:
        raise ConfigError(
            f"unknown provider {provider!r} in model string {text!r}; "
            f"valid providers: {listing}.{_hint(model_id)}"
        )
    model_id = model_id.strip()
    if not model_id:
        raise ConfigError(f"model string {text!r} has an empty model id after '{provider}/'")
    options: dict[str, str] = {}
    if sep and query:
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
        except ValueError as exc:
            raise ConfigError(
                f"malformed options {query!r} in model string {text!r}: "
                "expected 'key=value' pairs joined by '&'"
            ) from exc
        for key, value in pairs:
            if key.lower() in _SECRET_OPTIONS:
                raise ConfigError(
                    f"option {key!r} in model string '{provider}/{model_id}?...': credentials "
                    "may not go into a model string (it is recorded in every trial record); "
                    "set the provider's environment variable (e.g. OPENAI_API_KEY) instead"
                )
            if key in options:
                raise ConfigError(f"option {key!r} given twice in model string {text!r}")
            options[key] = value
    return ModelSpec(provider=provider, model=model_id, options=options)

"""Shared helpers of the real-provider backends: keys, redaction, retry-after, error mapping.

The Anthropic and OpenAI SDKs share one exception shape (``APIStatusError`` with
``status_code``, ``response`` and a decoded ``body``; ``APIConnectionError`` and its
``APITimeoutError`` subclass; ``APIResponseValidationError``), so one mapper turns
either into facetlab's :class:`~facetlab.errors.TransientBackendError` /
:class:`~facetlab.errors.PermanentBackendError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import errno
import json
import os
import re
import time
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from facetlab.backends.base import (  # is_transient_status: one rule, for every backend
    DEFAULT_TIMEOUT_S,
    Backend,
    ModelRequest,
    ModelResponse,
    RateSignal,
    is_transient_status,
)
from facetlab.errors import (
    BackendError,
    ConfigError,
    PermanentBackendError,
    TransientBackendError,
)
from facetlab.jsonio import escaped

_KEYLIKE = re.compile(r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_\-*]{6,}|AIza[0-9A-Za-z_\-]{10,})")


def resolve_api_key(
    explicit: str | None, env_var: str, provider: str, *, required: bool = True
) -> str | None:
    """The explicit key, else ``$env_var``; ``ConfigError`` naming the variable if required and absent."""
    if explicit:
        return explicit
    if value := os.environ.get(env_var, "").strip():
        return value
    if required:
        raise ConfigError(
            f"{provider}: no API key: run `export {env_var}=<your key>` in the shell "
            f"that runs facetlab (or give api_key=... to get_backend() in Python)"
        )
    return None


def stored_reply(response: ModelResponse) -> ModelResponse:
    """``response`` as facetlab stores it (records, cache): every text field as received,
    a lone surrogate escaped (:func:`~facetlab.jsonio.escaped`), so no bytes of a reply
    can fail its record's write."""
    texts = ("text", "model_id", "stop_reason", "provider_request_id", "thinking")
    fields: dict[str, Any] = {
        n: escaped(v) for n in texts if isinstance(v := getattr(response, n), str)
    }
    return dataclasses.replace(response, **fields)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Replace every secret (and anything shaped like a provider key) in ``text`` by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEYLIKE.sub("***", text)


# The last line of defence on everything facetlab writes (records, cache entries,
# sweep.json, the console): known secret shapes, whatever put them there. Each pattern
# starts at a word start and stops at a quote, a backslash or a space, so it runs in
# linear time, never spans two JSON strings and leaves JSON valid.
_SECRET_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-(?:ant-|proj-|admin-|svcacct-)?[A-Za-z0-9_\-]{16,}"  # Anthropic, OpenAI
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API key
    r"|ya29\.[0-9A-Za-z_\-]{20,}"  # Google OAuth access token
    r")"
)
_AWS_SECRET = re.compile(r"(?i)(aws_secret_access_key[\"'\\:=\s]{1,6})[A-Za-z0-9/+=]{40}")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*")
# scheme://user:password@ as written or percent-encoded (%3A%2F%2F ... %40)
_USERINFO_ANY = re.compile(
    r"(?i)(?<![A-Za-z0-9+.\-])([A-Za-z][A-Za-z0-9+.\-]*(?::|%3A)(?:/|%2F)(?:/|%2F))"
    r"(?:(?!%2F|%3F|%23|%40)[^/?#@\s\"\\])*(@|%40)"
)
_KEY_QUERY = re.compile(
    r"(?i)((?:[?&;]|%3F|%26)(?:api[_\-]?key|key|access[_\-]?token|token|secret|"
    r"client[_\-]?secret|password|passwd|pwd|sig|signature|auth|x-goog-api-key)(?:=|%3D))"
    r"[^&\s\"\\#]+"
)
# "api_key": "..." — a string under a secret-looking key of any JSON object facetlab writes
# (extra_body in sweep.json, records, cache entries): the key's name ends in the word
_SECRET_KEY_VALUE = re.compile(
    r'(?i)("[A-Za-z0-9_\-]{0,40}?(?:api[_\-]?key|access[_\-]?key|private[_\-]?key|secret|token'
    r'|password|passwd|pwd|authorization|credentials?|cookie)"\s*:\s*")(?:[^"\\]|\\.)+(")'
)
REDACTED = "***"


def redact_secrets(text: str) -> str:
    """``text`` with every known secret shape replaced by ``***``.

    API keys of Anthropic and OpenAI (``sk-...``), AWS (``AKIA...``, a secret access
    key after its name), Google (``AIza...``, ``ya29.`` tokens), bearer tokens, the
    user name and password of a URL (also percent-encoded), key-like query values, and a
    JSON string under a secret-looking key (``"api_key"``, ``"token"``, ``"password"``,
    ``"authorization"``, ...: an ``extra_body`` credential).

    >>> redact_secrets('{"extra_body": {"api_key": "abc", "min_p": "0.1"}}')
    '{"extra_body": {"api_key": "***", "min_p": "0.1"}}'


    >>> redact_secrets("http%3A%2F%2Fadmin%3Apw%40host/v1 and Bearer abcdefghijklmnop1234")
    'http%3A%2F%2F***%40host/v1 and Bearer ***'
    >>> redact_secrets("https://host/v1?key=abc123&x=1")
    'https://host/v1?key=***&x=1'
    """
    if not text:
        return text
    # Each pattern runs only where a substring it needs is present (a 6 KB record: ~50 us,
    # not ~1 ms). The hints are read in an ASCII-lowered copy: str.lower() of non-ASCII
    # text cost more than the patterns. The only non-ASCII letters an (?i) pattern reads
    # as ASCII ones (İ ı ſ K) make every pattern run.
    every = not text.isascii() and any(c in text for c in _FOLDS_TO_ASCII)
    low = text.encode("utf-8", "surrogatepass").lower()

    def needs(*marks: bytes) -> bool:
        return every or any(mark in low for mark in marks)

    if ("sk-" in text and _SK_HINT.search(text)) or any(
        mark in text for mark in ("AKIA", "ASIA", "AIza", "ya29.")
    ):
        text = _SECRET_SHAPES.sub(REDACTED, text)
    if needs(b"secret_access_key"):
        text = _AWS_SECRET.sub(rf"\1{REDACTED}", text)
    if needs(b"bearer"):
        text = _BEARER.sub(rf"\1{REDACTED}", text)
    if needs(b"@", b"%40") and needs(b"//", b"/%2f", b"%2f/", b"%2f%2f"):  # "%3A//" too
        text = _USERINFO_ANY.sub(rf"\1{REDACTED}\2", text)
    if needs(b"=", b"%3d") and needs(b"?", b"&", b";", b"%3f", b"%26"):
        text = _KEY_QUERY.sub(rf"\1{REDACTED}", text)
    if needs(*_SECRET_KEY_NAMES):
        text = _SECRET_KEY_VALUE.sub(rf"\1{REDACTED}\2", text)
    return text


# What each name _SECRET_KEY_VALUE redacts ends in (lowered, with its closing quote): a
# record's own "key" field or a prompt's "potential" is none of them (with those as its
# hints the pattern, ~0.18 ms on a 5 KB record, ran on every record twice)
_SECRET_KEY_NAMES = (
    *(b'_key"', b'-key"', b'ikey"', b'skey"', b'ekey"'),  # api, access, private keys
    *(b'secret"', b'token"', b"passw", b'pwd"', b'ization"', b'tial"', b'tials"', b'cookie"'),
)
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
"""What an (?i) pattern also reads as i, i, s and k."""
_SK_HINT = re.compile(r"sk-[A-Za-z0-9_\-]{16}")
"""What an ``sk-`` key has at least: "risk-benefit" is not one (found by its literal prefix)."""


# a closed terminal (EIO) or a reader that went away (EPIPE)
_GONE = frozenset({errno.EIO, errno.EPIPE})


class RedactingWriter:
    """A text stream that writes through :func:`redact_secrets` (the console's last line).

    Everything else (``isatty``, ``encoding``, ``fileno``, ...) is the wrapped stream's.

    >>> import io
    >>> out = io.StringIO()
    >>> print("key sk-ant-api03-0123456789abcdefXYZ", file=RedactingWriter(out))
    >>> out.getvalue()
    'key ***\\n'
    """

    def __init__(self, stream: Any) -> None:
        self.wrapped = stream

    def write(self, text: Any) -> Any:
        try:
            return self.wrapped.write(redact_secrets(text) if isinstance(text, str) else text)
        except OSError as exc:
            if exc.errno not in _GONE:
                raise
            return len(text)  # the terminal is gone (SIGHUP): the sweep still drains

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno not in _GONE:
                raise

    def writelines(self, lines: Iterable[Any]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def redacting(stream: Any) -> Any:
    """``stream`` wrapped in a :class:`RedactingWriter` (once)."""
    return (
        stream if isinstance(stream, RedactingWriter) or stream is None else RedactingWriter(stream)
    )


def decoded_text(text: str) -> str:
    """``text`` as a server would read it: percent-decoded until stable (``%2540`` ->
    ``%40`` -> ``@``), NFKC-normalised (a fullwidth ``＠`` is an ``@``), stripped.

    >>> decoded_text("http:%2F%2Fadmin%253Apw@host")
    'http://admin:pw@host'
    """
    for _ in range(5):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return unicodedata.normalize("NFKC", text).strip()


def redact_url(url: str | None) -> str | None:
    """A base URL without user info or query (they may carry credentials).

    >>> redact_url("https://user:pw@host:8443/v1?key=abc")
    'https://host:8443/v1'
    """
    if not url:
        return url
    parts = urlsplit(decoded_text(url))  # %2F%2F or %3A..%40 hide no password from the split
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date).

    ``retry-after-ms`` wins (it is more precise); negative or unparseable values give
    ``None``.
    """
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    if (millis := _number(lowered.get("retry-after-ms"))) is not None:
        return millis / 1000.0
    raw = lowered.get("retry-after") or ""
    if (seconds := _number(raw)) is not None or not raw:
        return seconds
    import email.utils  # here: `facetlab --help` imports this module

    with contextlib.suppress(TypeError, ValueError, IndexError):
        parsed = email.utils.parsedate_to_datetime(raw)  # an HTTP date is GMT
        stamp = parsed.replace(tzinfo=parsed.tzinfo or datetime.timezone.utc).timestamp()
        return max(0.0, stamp - (time.time() if now is None else now))
    return None


def _number(raw: str | None) -> float | None:
    """A header's number when it is one from 0 up (NaN, negatives, words: None)."""
    with contextlib.suppress(TypeError, ValueError):
        value = float(raw)  # type: ignore[arg-type]
        return value if 0 <= value < 1e15 else None
    return None


_RATE_HEADERS = (
    ("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
     "anthropic-ratelimit-requests-reset"),
)  # fmt: skip
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def rate_signal(headers: Mapping[str, str], *, now: float | None = None) -> RateSignal | None:
    """The request limits a reply's headers state: OpenAI's ``x-ratelimit-*-requests``
    (reset as ``6m0s``), Anthropic's ``anthropic-ratelimit-requests-*`` (reset as an
    RFC 3339 time). None when it sends neither.

    >>> rate_signal({"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0",
    ...              "x-ratelimit-reset-requests": "1m0.5s"})
    RateSignal(limit_rpm=500.0, remaining=0.0, reset_s=60.5)
    """
    for names in _RATE_HEADERS:
        limit, remaining, reset = (headers.get(name) for name in names)
        if limit is not None or remaining is not None:
            return RateSignal(_number(limit), _number(remaining), _reset_s(reset or "", now))
    return None


MAX_RESET_S = 120.0
"""The longest reset a reply's rate-limit headers may pause every call for (the default
retry-after cap): a longer one is not waited out (its 429s, if they come, fail at the cap)."""


def _reset_s(raw: str, now: float | None) -> float | None:
    seconds = None
    if parts := _DURATION.findall(raw[:40]):
        seconds = sum(float(n) * _UNIT_S[unit] for n, unit in parts)
    with contextlib.suppress(ValueError):
        when = datetime.datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        seconds = max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if seconds is not None and seconds <= MAX_RESET_S else None


def provider_message(body: object, fallback: str) -> str:
    """The human message in a provider error body (``{"error": {"message": ...}}`` and kin)."""
    if isinstance(body, list) and body:  # Gemini's OpenAI endpoint wraps errors in a list
        body = body[0]
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message")
            if isinstance(message, str) and message:
                kind = error.get("type") or error.get("status") or error.get("code")
                return f"{message} ({kind})" if isinstance(kind, str) and kind else message
        if isinstance(error, str) and error:
            return error
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    return body.strip()[:500] if isinstance(body, str) and body.strip() else fallback


def status_error(
    provider: str,
    status: int,
    headers: Mapping[str, str],
    body: object,
    fallback: str,
    *,
    secrets: Iterable[str | None],
    request_id_header: str,
) -> BackendError:
    """The facetlab error for an HTTP error reply: 408/409/425/429/5xx transient (with
    ``retry_after`` from the headers), any other status permanent; the provider's own
    message, its request id, secrets redacted. ``headers`` with lower-case names."""
    request_id = headers.get(request_id_header) or headers.get("request-id")
    suffix = f" [request id {request_id}]" if request_id else ""
    text = redact(f"{provider} HTTP {status}: {provider_message(body, fallback)}{suffix}", secrets)
    if is_transient_status(status):
        return TransientBackendError(
            text, provider=provider, status=status, retry_after=parse_retry_after(headers)
        )
    return PermanentBackendError(text, provider=provider, status=status)


def map_sdk_error(
    exc: BaseException,
    *,
    sdk: Any,
    provider: str,
    secrets: Iterable[str | None] = (),
    request_id_header: str = "x-request-id",
) -> BackendError:
    """Map an ``anthropic``/``openai`` SDK exception to a facetlab backend error (``sdk``:
    the SDK's module; both define the same classes, and their subclasses are mapped too).

    The provider decides here what is worth retrying:

    - ``APIStatusError``: 408/409/425/429/5xx → transient with ``retry_after`` from
      the headers; other 4xx → permanent with the provider's message.
    - ``APITimeoutError`` / ``APIConnectionError`` (timeouts, refused or dropped
      connections, truncated bodies) → transient.
    - ``APIResponseValidationError`` or an undecodable 200 body → transient
      ("unparseable response"), with status 200: it was billed (the client charges it).
    Secrets are redacted from every message.
    """
    secrets = tuple(secrets)
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    body = next((e for e in (exc, exc.__cause__) if isinstance(e, ReplyBodyError)), None)
    if body is not None:  # too large (not retried), or broken off
        kind = TransientBackendError if body.transient else PermanentBackendError
        return kind(redact(f"{provider}: {body}", secrets), provider=provider)
    transport = next((e for e in (exc, exc.__cause__) if _from_transport(e)), None)
    if transport is not None:  # aiohttp's parser calls a broken chunk "400": no status was sent
        said = (str(getattr(transport, "message", "")) or str(transport)).strip().splitlines()
        return TransientBackendError(
            redact(
                f"{provider}: connection failed or dropped mid-reply ({type(transport).__name__}: "
                f"{said[0] if said else ''})",
                secrets,
            ),
            provider=provider,
        )
    if isinstance(exc, sdk.APIStatusError) and isinstance(status, int):
        response = getattr(exc, "response", None)
        headers = (
            {k.lower(): v for k, v in response.headers.items()} if response is not None else {}
        )
        fallback = str(getattr(exc, "message", "") or exc)
        return status_error(
            provider, status, headers, getattr(exc, "body", None), fallback,
            secrets=secrets, request_id_header=request_id_header,
        )  # fmt: skip
    if isinstance(exc, (sdk.APIResponseValidationError, json.JSONDecodeError, UnicodeDecodeError)):
        return TransientBackendError(  # only a 2xx body is read as a reply: it was billed
            redact(f"{provider}: unparseable response body ({name}: {exc})", secrets),
            provider=provider,
            status=status if isinstance(status, int) else 200,
        )
    if isinstance(exc, sdk.APITimeoutError):  # a subclass of the connection error: first
        return TransientBackendError(f"{provider}: request timed out", provider=provider)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        return TransientBackendError(
            redact(f"{provider}: connection failed or dropped{detail}", secrets),
            provider=provider,
        )
    return PermanentBackendError(
        redact(f"{provider}: unexpected client error ({name}: {exc})", secrets),
        provider=provider,
    )


def _from_transport(exc: BaseException | None) -> bool:
    """An error of the aiohttp pool itself (past the SDK unwrapped, or as a cause)."""
    return exc is not None and type(exc).__module__.split(".")[0] == "aiohttp"


def option_float(options: Mapping[str, Any], key: str, default: float | None) -> float | None:
    """Read a numeric option that may arrive as a string from a model string."""
    value = options.get(key, default)
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"option {key}={value!r}: expected a number") from exc


def sdk_client_options(
    *,
    base_url: str | None,
    timeout: float | str | None,
    http_client: Any,
    sdk: Any,
    on_response: Callable[[Any], Awaitable[None]],
) -> Callable[[], dict[str, Any]]:
    """Keyword arguments both official SDK clients take, as facetlab sets them: a function
    giving a fresh set per client built (a pool belongs to one event loop).

    The SDK's own retries are off: the runner retries, with the errors mapped here.
    Every pool calls ``on_response`` with each reply before its body is read (the
    size cap, the rate-limit headers).
    """
    options = {
        "base_url": base_url,
        "max_retries": 0,
        "timeout": option_float({"timeout": timeout}, "timeout", DEFAULT_TIMEOUT_S),
    }

    def build() -> dict[str, Any]:
        if http_client is None:
            pool = sdk.DefaultAsyncHttpxClient(event_hooks={"response": [on_response]})
            return {**options, "http_client": pool}
        hooks = http_client.event_hooks  # the caller's own pool keeps its hooks
        if on_response not in hooks["response"]:
            http_client.event_hooks = {**hooks, "response": [*hooks["response"], on_response]}
        return {**options, "http_client": http_client}

    return build


def sends_directly(http_transport: str, base_url: str | None, http_client: Any) -> bool:
    """Whether model calls go over facetlab's own aiohttp session (:mod:`._direct`):
    ``http_transport="aiohttp"``, no pool of the caller's, a plain URL, no proxy. At
    hundreds of calls a second the SDK's request path and httpx's pool spend more CPU per
    call than the rest of a trial (docs/running.md)."""
    check_http_transport(http_transport)
    return (
        http_transport == "aiohttp"
        and http_client is None
        and _plain_url(base_url)
        and not _proxied()
    )


def _plain_url(url: str | None) -> bool:
    """A provider's default server or ``http(s)://host[:port][/path]`` and nothing else.

    Any other base URL keeps httpx: aiohttp refuses a user name or password in the URL
    next to the SDK's Authorization header (httpx sends them: a proxy's basic auth), and
    its errors quote an odd URL whole, secrets included.
    """
    if url is None:
        return True
    parts = urlsplit(url)
    return (
        parts.scheme in ("http", "https")
        and bool(parts.hostname)
        and not (parts.username or parts.password or parts.query or parts.fragment)
        and "%" not in url
        and "@" not in url
    )


def _proxied() -> bool:
    """Whether the environment names an HTTP(S) proxy: httpx goes through it, the SDKs'
    aiohttp pool would not (it does not read the environment), so such a machine keeps
    httpx."""
    from urllib.request import getproxies  # ~6 ms: only when a pool is being chosen

    return any(scheme in getproxies() for scheme in ("http", "https", "all"))


def check_proxy() -> None:
    """A :class:`ConfigError` in one line, before any call, when the environment names a
    proxy whose package is missing (``ALL_PROXY=socks5://...`` needs ``socksio``, httpx's
    ``socks`` extra): otherwise every trial would fail on it."""
    import importlib.util
    from urllib.request import getproxies

    for name, url in getproxies().items():
        if url.lower().startswith("socks") and importlib.util.find_spec("socksio") is None:
            raise ConfigError(
                f"{name.upper()}_PROXY names a SOCKS proxy ({url.partition(':')[0]}://...), "
                "which needs the socksio package: pip install 'httpx[socks]', or unset it"
            )


HTTP_TRANSPORTS = ("httpx", "aiohttp")
"""HTTP transports the official SDK backends take (``http_transport=``)."""


def check_http_transport(transport: str) -> None:
    """A :class:`ConfigError` unless ``transport`` is known (aiohttp is a dependency)."""
    if transport not in HTTP_TRANSPORTS:
        raise ConfigError(
            f"http_transport={transport!r}: expected one of {', '.join(HTTP_TRANSPORTS)}"
        )


class MalformedReplyError(ValueError):
    """A 200 reply that is not a valid provider response (an HTML page, ``{}``, bytes)."""


# The most a model's reply may hold, decoded (gzip, deflate, br): every backend reads at
# most this much of a body and refuses a larger one (a reply at the largest max_tokens
# is well under 1 MiB).
MAX_REPLY_BYTES = 16 * 2**20


class ReplyBodyError(Exception):
    """A reply whose body could not be read whole: too large (not retried) or broken off."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


class CappedBody:
    """A reply's body, refused as soon as it passes :data:`MAX_REPLY_BYTES` once decoded
    (or its ``content-length`` says it will): a gzip bomb or a 50 MB reply is never held."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self.parts: list[bytes] = []
        self.size, self.encoding = 0, headers.get("content-encoding") or "not"
        self.add(b"", int(n) if (n := headers.get("content-length") or "").isdigit() else 0)

    def add(self, chunk: bytes, declared: int = 0) -> None:
        self.size += len(chunk)
        if max(self.size, declared) > MAX_REPLY_BYTES:
            raise ReplyBodyError(
                f"reply larger than {MAX_REPLY_BYTES // 2**20} MiB ({self.encoding} "
                "compressed): refused, not read",
                transient=False,
            )
        self.parts.append(chunk)


def require_fields(obj: Any, names: Iterable[str], *, kind: str) -> None:
    """A :class:`MalformedReplyError` unless ``obj`` has every field in ``names`` (not None).

    A proxy's HTML error page arrives as a string; ``{}`` parses but says nothing.
    """
    if isinstance(obj, (str, bytes)):
        shown = obj[:60] if isinstance(obj, str) else repr(obj[:30])
        raise MalformedReplyError(f"not a {kind} (a text body: {shown!r})")
    missing = [name for name in names if get_field(obj, name, None) is None]
    if missing:
        raise MalformedReplyError(f"not a {kind} (missing {', '.join(missing)})")


def get_field(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key access, so SDK objects and their JSON dicts (batch results) both work."""
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


class AsyncClosable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=AsyncClosable)


class SDKBackend(Backend, Generic[ClientT]):
    """What the Anthropic and OpenAI backends share around their official async SDK client.

    A subclass sets ``provider`` and ``sdk_module``, hands :meth:`_bind_client` its
    client or a factory (called on first use: the SDK is imported only when it is
    needed, never for a direct call), and implements
    :meth:`request_body`, :meth:`_send` and :meth:`response_from_message`; the call
    itself (timing, error mapping with secrets redacted) and ``aclose`` live here.
    """

    provider: str
    model: str
    base_url: str | None
    sdk_module: str  # the SDK's module name ("anthropic", "openai")
    request_id_header: str = "x-request-id"

    @property
    def sdk(self) -> Any:
        """The SDK's module (its exception classes), imported on first use."""
        import importlib

        return importlib.import_module(self.sdk_module)

    async def _on_response(self, response: Any) -> None:
        """Each reply to a model call: its body read within the cap (:class:`CappedBody`),
        its rate headers kept. (A transport's error while reading reaches
        :func:`map_sdk_error` as a dropped connection, directly or as the SDK's cause.)"""
        if response.request.url.path.endswith(("/chat/completions", "/messages")):
            self.rate_signal = rate_signal(response.headers) or self.rate_signal
            body = CappedBody(response.headers)
            async for chunk in response.aiter_bytes():
                body.add(chunk)
            response._content = b"".join(body.parts)  # what the SDK's read returns

    def _bind_client(
        self,
        client: ClientT | None,
        factory: Callable[[], ClientT] | None,
        *,
        api_key: str | None,
        rebuildable: bool,
        direct: bool = False,
    ) -> None:
        """Use ``client``, or ``factory()`` on first use (rebuilt per event loop when
        ``rebuildable``); ``api_key``: the key in use (redacted from every message);
        ``direct``: model calls over :class:`~facetlab.backends._direct.DirectSender`."""
        if client is None and factory is None:
            raise TypeError("_bind_client needs a client or a factory")
        self._secret: str | None = api_key or getattr(client, "api_key", None)
        self._client, self._factory = client, factory
        self._rebuildable = rebuildable
        self._loop: object = None
        self.sends_directly = direct and client is None
        self._sender: Any = None
        if client is None and not self.sends_directly:
            check_proxy()  # httpx reads the environment's proxy: refused now, not per call

    @property
    def client(self) -> ClientT:
        """The SDK client for the running event loop (the runner's batch support uses it).

        A pooled SDK client belongs to the loop that first used it, and the sync
        :func:`facetlab.backends.generate` runs each call in a fresh loop: a client of
        facetlab's own making is rebuilt for a new loop (one passed in never is).
        """
        from asyncio import get_running_loop  # here: `facetlab --help` imports this module

        with contextlib.suppress(RuntimeError):  # no running loop: the current client
            loop = get_running_loop()
            if self._loop is not None and self._loop is not loop and self._rebuildable:
                self._client = None
            self._loop = loop
        if self._client is None:
            assert self._factory is not None  # _bind_client has one or the other
            self._client = self._factory()
        return self._client

    def __repr__(self) -> str:
        where = f", base_url={redact_url(self.base_url)!r}" if self.base_url else ""
        return f"{type(self).__name__}(model={self.model!r}{where})"

    __str__ = __repr__

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact keyword arguments of the SDK call for ``request``."""
        raise NotImplementedError

    def response_from_message(
        self, message: Any, *, latency_s: float | None = None
    ) -> ModelResponse:
        """Convert the SDK's reply (or its JSON dict, from a batch) to a :class:`ModelResponse`."""
        raise NotImplementedError

    async def _send(self, body: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _post(self, path: str, body: dict[str, Any], **options: Any) -> Any:
        """POST the exact ``body`` over the direct session (:attr:`sends_directly`) or
        through the SDK (its auth, errors and pool), and read the reply's JSON as is: the
        SDK's typed models would cost more CPU than the rest of the call (docs/running.md),
        and the reply converters read dicts too."""
        if self.sends_directly:
            reply = await self._direct().post(path, body)
            headers = reply.headers
            self.rate_signal = rate_signal(headers) or self.rate_signal
            if reply.status >= 300:
                try:
                    said: object = json.loads(reply.body)
                except ValueError:
                    said = reply.body.decode("utf-8", "replace")
                raise status_error(
                    self.provider, reply.status, headers, said,
                    f"{reply.status} {reply.reason}".strip(), secrets=(self._secret,),
                    request_id_header=self.request_id_header,
                )  # fmt: skip
            data = json.loads(reply.body)
        else:
            import httpx2  # the SDKs' HTTP client: loaded with them

            client: Any = self.client
            reply = await client.post(path, body=body, cast_to=httpx2.Response, options=options)
            data, headers = json.loads(reply.content), reply.headers
        if isinstance(data, dict):
            data.setdefault("_request_id", headers.get(self.request_id_header))
        return data

    def _direct(self) -> Any:
        """This event loop's :class:`~facetlab.backends._direct.DirectSender`, sent with
        what :meth:`direct_target` says."""
        from asyncio import get_running_loop

        if self._sender is None or self._sender.loop is not get_running_loop():
            from facetlab.backends._direct import DirectSender  # aiohttp: not at import

            url, headers, timeout = self.direct_target()
            self._sender = DirectSender(
                url, headers, timeout=timeout, provider=self.provider, capped=CappedBody
            )
        return self._sender

    def direct_target(self) -> tuple[str, dict[str, str], float | None]:
        """Base URL, headers and HTTP timeout of a direct call: the SDK client's own."""
        client: Any = self.client
        said = {**client.default_headers, **client.auth_headers}
        timeout = client.timeout if isinstance(client.timeout, (int, float)) else None
        headers = {name: value for name, value in said.items() if isinstance(value, str)}
        return str(client.base_url), headers, timeout

    def map_error(self, exc: BaseException) -> BackendError:
        """The facetlab error for an SDK exception (also used by batch collection)."""
        return map_sdk_error(
            exc,
            sdk=self.sdk,
            provider=self.provider,
            secrets=(self._secret,),
            request_id_header=self.request_id_header,
        )

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        body = self.request_body(request)
        started = time.perf_counter()
        try:
            message = await self._send(body)
        except Exception as exc:
            # JSONDecodeError / UnicodeDecodeError: a 200 whose body is not JSON (a broken proxy)
            plain = (json.JSONDecodeError, UnicodeDecodeError, ReplyBodyError)
            if isinstance(exc, BackendError) or not (
                isinstance(exc, plain) or _from_transport(exc) or isinstance(exc, self.sdk.APIError)
            ):
                raise
            raise self.map_error(exc) from None
        try:
            response = self.response_from_message(message, latency_s=time.perf_counter() - started)
        except MalformedReplyError as exc:
            # transient: retried, then recorded as failed; never ok, never cached
            raise TransientBackendError(  # status 200: billed, so charged (client.model)
                f"{self.provider}: unparseable response body ({exc})",
                provider=self.provider,
                status=200,
            ) from None
        if self._secret and self._secret in response.text:
            # a reply echoing the request's key must not carry it into records
            response = dataclasses.replace(response, text=redact(response.text, (self._secret,)))
        return response

    async def aclose(self) -> None:
        if self._sender is not None:
            await self._sender.close()
        if self._client is not None:
            await self._client.close()


def with_extra(
    body: dict[str, Any], extra: Mapping[str, Any] | None, *, into: str | None = None
) -> dict[str, Any]:
    """``body`` with a request's ``extra_body`` fields added as they are (into its field
    ``into``, where the provider keeps them); a field the backend already sets is refused:
    it would change what the record says was sent.

    >>> with_extra({"model": "m"}, {"min_p": 0.1})
    {'model': 'm', 'min_p': 0.1}
    """
    if not extra:
        return body
    target = body if into is None else body.setdefault(into, {})
    if clash := sorted(set(extra) & set(target)):
        raise ConfigError(
            f"extra_body sets {', '.join(clash)}, which facetlab sets itself: use its own "
            "setting (--max-tokens, --temperature, --structured, ...)"
        )
    target.update(extra)
    return body


def thinking_config(thinking: str | int) -> dict[str, Any]:
    """The Messages API's ``thinking`` for facetlab's setting (off, adaptive, a budget).

    >>> thinking_config(2048)
    {'type': 'enabled', 'budget_tokens': 2048}
    """
    if thinking == "off":
        return {"type": "disabled"}
    if thinking == "adaptive":
        return {"type": "adaptive"}
    return {"type": "enabled", "budget_tokens": int(thinking)}

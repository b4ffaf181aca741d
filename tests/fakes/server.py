"""A threaded fake of the OpenAI Chat Completions and Anthropic Messages APIs on 127.0.0.1.

One server answers both wire formats, so the real SDK clients (``openai.AsyncOpenAI``,
``anthropic.AsyncAnthropic``) and facetlab's backends can be exercised end to end
without network or keys:

- ``POST {url}/v1/chat/completions`` (and ``/chat/completions``): OpenAI format;
  point an OpenAI client at ``server.openai_base_url`` (``{url}/v1``).
- ``POST {url}/v1/messages``: Anthropic format; point an Anthropic client at
  ``server.url``.
- ``GET {url}/v1/models``: a one-model list.
- anything in ``extra_routes`` (e.g. batch endpoints a runner test wants to fake);
- ``GET /props`` and ``/get_server_info`` (where a self-hosted server says its slots):
  404, and not logged, so request counts are the model calls.

Behaviour knobs (all may be changed between requests; reads/writes are locked):

- ``latency_s``: sleep before every answered request (successes and HTTP errors;
  ``rps_limit`` rejections are immediate, as real limiters answer at once).
- ``rps_limit``: requests per second accepted (sliding one-second window over
  *accepted* requests); past it the server answers 429 with ``retry-after`` and
  ``retry-after-ms`` set to the time until a slot frees. Rejections are logged as
  outcome ``"rate_limited"``.
- ``script``: a list of :class:`Fault` values consumed one per request, in order,
  before anything else is decided (deterministic fault tests).
- ``fault_rates``: ``{Fault: probability}`` drawn per request from a seeded RNG
  (``seed``) once the script is empty (soak/fault sweeps).
- ``responder``: ``Callable[[FakeRequest], str]`` producing the reply text
  (default: :func:`default_responder`, deterministic in the prompt).
- ``retry_after``: the value sent with scripted/random 429s (seconds).
- ``alternate``: a fault answered to every other request (the 1st, 3rd, ...).

Faults: ``RATE_LIMIT`` (429), ``SERVER_ERROR`` (500), ``OVERLOADED`` (529),
``BAD_REQUEST`` (400), ``UNAUTHORIZED`` (401), ``NOT_FOUND`` (404), ``GARBAGE``
(200 with a non-JSON body), ``DROP`` (the connection is closed without an
answer), ``TRUNCATED`` (headers promise more bytes than are sent, then close),
``HANG`` (no answer for ``hang_s`` seconds, then close: a client timeout),
``REFUSAL`` (a well-formed refusal: Anthropic ``stop_reason="refusal"``, OpenAI
``message.refusal``), ``MAX_TOKENS`` (a truncated reply: ``max_tokens`` / ``length``),
``THINKS`` (the reply after 40 reasoning tokens, with its thinking text: an Anthropic
``thinking`` block, a compatible server's ``reasoning_content``), ``REASONING_ONLY``
(the whole ``max_tokens`` spent reasoning: no text, stopped at the limit),
``HTML`` (200 with an HTML error page, ``text/html``), ``BINARY`` (200 with bytes
that are not UTF-8), ``MISSING_FIELDS`` (200 with ``{}``: valid JSON, no reply),
``ECHO_KEY`` (a well-formed reply whose text echoes the Authorization header),
``STALL`` (headers and half a body, then silence for ``hang_s`` seconds),
``GZIP_BOMB`` (200, ``Content-Encoding: gzip``: 290 KiB that decode to 64 MiB of
spaces), ``HUGE`` (a 50 MB reply), ``BAD_CHUNK`` (a chunked body whose chunk size is
not hex), ``HUGE_USAGE`` (a well-formed reply reporting 10^400 tokens each way).
Error bodies follow each provider's JSON error shape; the 401 message echoes the
presented key (as some providers do) so tests can check facetlab redacts it.

Every request is logged as a :class:`FakeRequest` in ``server.requests``;
``server.ok_count(prompt)`` / ``server.paid_calls()`` count the 200 answers per
prompt (what a real provider would bill), so a runner test can assert "no
duplicate paid calls"::

    with FakeLLMServer(latency_s=0.3, rps_limit=20) as server:
        backend = get_backend("openai/fake-model", base_url=server.openai_base_url, api_key="k")
        ...
        assert max(server.paid_calls().values()) == 1

The server runs in a daemon thread (``ThreadingHTTPServer``, one thread per
connection, HTTP/1.1 keep-alive); it is usable from sync and async tests alike.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import random
import socket
import sys
import threading
import time
import zlib
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class Fault(str, enum.Enum):
    """A scripted or random misbehaviour of the fake server."""

    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    OVERLOADED = "overloaded"
    BAD_REQUEST = "bad_request"
    UNAUTHORIZED = "unauthorized"
    NOT_FOUND = "not_found"
    GARBAGE = "garbage"
    DROP = "drop"
    TRUNCATED = "truncated"
    HANG = "hang"
    REFUSAL = "refusal"
    MAX_TOKENS = "max_tokens"
    THINKS = "thinks"
    REASONING_ONLY = "reasoning_only"
    HTML = "html"
    BINARY = "binary"
    MISSING_FIELDS = "missing_fields"
    ECHO_KEY = "echo_key"
    STALL = "stall"
    GZIP_BOMB = "gzip_bomb"
    HUGE = "huge"
    BAD_CHUNK = "bad_chunk"
    HUGE_USAGE = "huge_usage"


_HTTP_FAULTS: dict[Fault, tuple[int, str, str]] = {
    # fault: (status, anthropic error type, message)
    Fault.RATE_LIMIT: (429, "rate_limit_error", "Rate limit exceeded; slow down."),
    Fault.SERVER_ERROR: (500, "api_error", "Internal server error."),
    Fault.OVERLOADED: (529, "overloaded_error", "Overloaded."),
    Fault.BAD_REQUEST: (400, "invalid_request_error", "max_tokens: must be at least 1"),
    Fault.UNAUTHORIZED: (401, "authentication_error", "Incorrect API key provided: {key}"),
    Fault.NOT_FOUND: (404, "not_found_error", "model: {model} does not exist"),
}


@dataclass
class FakeRequest:
    """One request the server received, and what it did with it."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """Parsed JSON body (``None`` if absent or not JSON)."""
    received_at: float
    outcome: str = "pending"
    """"ok", "rate_limited", or a :class:`Fault` value."""
    status: int | None = None

    @property
    def api(self) -> str:
        """ "anthropic", "openai" or "other" (from the path)."""
        if self.path.endswith("/messages"):
            return "anthropic"
        if self.path.endswith("/chat/completions"):
            return "openai"
        return "other"

    @property
    def prompt(self) -> str:
        """The text of the last user message (either API), or ``""``."""
        if not isinstance(self.body, dict):
            return ""
        messages = self.body.get("messages") or []
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                if isinstance(content, list):
                    return "".join(
                        part.get("text", "") for part in content if isinstance(part, dict)
                    )
        return ""

    @property
    def model(self) -> str:
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""


def default_responder(request: FakeRequest) -> str:
    """A deterministic reply: ``F1: 60, F2: 40`` and ``no``, tagged with the prompt's hash."""
    digest = hashlib.sha256(request.prompt.encode("utf-8")).hexdigest()[:12]
    return f"F1: 60, F2: 40\nno\n[fake {digest}]"


Route = Callable[[FakeRequest], tuple[int, Mapping[str, str], bytes]]


class _Keep:
    """Sentinel type: "leave this setting unchanged"."""


_KEEP = _Keep()


@dataclass
class _Config:
    latency_s: float = 0.0
    rps_limit: float | None = None
    retry_after: float | None = 1.0
    hang_s: float = 30.0
    script: deque[Fault] = field(default_factory=deque)
    fault_rates: dict[Fault, float] = field(default_factory=dict)
    alternate: Fault | None = None
    decided: int = 0


class FakeLLMServer:
    """A local OpenAI- and Anthropic-compatible fake (see the module docstring)."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        rps_limit: float | None = None,
        script: list[Fault] | None = None,
        fault_rates: Mapping[Fault, float] | None = None,
        seed: int = 0,
        retry_after: float | None = 1.0,
        hang_s: float = 30.0,
        responder: Callable[[FakeRequest], str] = default_responder,
        alternate: Fault | None = None,
        model_id: str | None = None,
        extra_routes: Mapping[tuple[str, str], Route] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._lock = threading.Lock()
        self._config = _Config(
            latency_s=latency_s,
            rps_limit=rps_limit,
            retry_after=retry_after,
            hang_s=hang_s,
            script=deque(script or []),
            fault_rates=dict(fault_rates or {}),
            alternate=alternate,
        )
        self._rng = random.Random(seed)
        self._accepted: deque[float] = deque()
        self.responder = responder
        self.model_id = model_id
        """Model id to report; ``None`` echoes the requested model."""
        self.extra_routes: dict[tuple[str, str], Route] = dict(extra_routes or {})
        self.requests: list[FakeRequest] = []
        self._httpd = _Server((host, port), _make_handler(self))
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # -- knobs -----------------------------------------------------------------------------
    def configure(
        self,
        *,
        latency_s: float | None = None,
        rps_limit: float | _Keep | None = _KEEP,
        retry_after: float | _Keep | None = _KEEP,
        fault_rates: Mapping[Fault, float] | None = None,
    ) -> None:
        """Change behaviour while running (arguments left out stay unchanged)."""
        with self._lock:
            if latency_s is not None:
                self._config.latency_s = latency_s
            if not isinstance(rps_limit, _Keep):
                self._config.rps_limit = rps_limit
            if not isinstance(retry_after, _Keep):
                self._config.retry_after = retry_after
            if fault_rates is not None:
                self._config.fault_rates = dict(fault_rates)

    def push(self, *faults: Fault) -> None:
        """Append faults to the script (consumed one per request)."""
        with self._lock:
            self._config.script.extend(faults)

    # -- inspection ------------------------------------------------------------------------
    def outcomes(self) -> Counter[str]:
        with self._lock:
            return Counter(r.outcome for r in self.requests)

    def paid_calls(self) -> Counter[str]:
        """Number of successful (200, billable) answers per prompt."""
        with self._lock:
            return Counter(
                r.prompt
                for r in self.requests
                if r.status == 200 and r.outcome in ("ok", "refusal", "max_tokens")
            )

    def ok_count(self, prompt: str) -> int:
        return self.paid_calls()[prompt]

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- decisions (called from handler threads) -------------------------------------------
    def _record(self, request: FakeRequest) -> None:
        with self._lock:
            request.index = len(self.requests)
            self.requests.append(request)

    def _decide(self) -> tuple[str, float | None, float]:
        """(outcome, retry_after for 429, latency) for the next request."""
        with self._lock:
            cfg = self._config
            now = time.monotonic()
            cfg.decided += 1
            if cfg.alternate is not None and cfg.decided % 2 == 1:
                return cfg.alternate.value, cfg.retry_after, cfg.latency_s
            if cfg.script:
                return cfg.script.popleft().value, cfg.retry_after, cfg.latency_s
            for fault, rate in cfg.fault_rates.items():
                if self._rng.random() < rate:
                    return fault.value, cfg.retry_after, cfg.latency_s
            if cfg.rps_limit is not None:
                while self._accepted and now - self._accepted[0] >= 1.0:
                    self._accepted.popleft()
                if len(self._accepted) >= cfg.rps_limit:
                    wait = max(0.001, 1.0 - (now - self._accepted[0]))
                    return "rate_limited", wait, 0.0
                self._accepted.append(now)
            return "ok", None, cfg.latency_s

    @property
    def hang_s(self) -> float:
        return self._config.hang_s


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that hung up (it refused a reply, timed out, closed its pool) is routine
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _make_handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 60  # idle keep-alive connections end on their own

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr
            return

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_DELETE(self) -> None:
            self._handle("DELETE")

        # ---------------------------------------------------------------------------------
        def _handle(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            path = self.path.split("?", 1)[0]
            if method == "GET" and path in ("/props", "/get_server_info"):
                # the client asking a server's slots: this fake publishes none (not logged)
                self._send_json(404, {"error": {"message": f"no route {method} {path}"}})
                return
            request = FakeRequest(
                index=-1,
                method=method,
                path=path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                received_at=time.time(),
            )
            server._record(request)
            route = server.extra_routes.get((method, path))
            if route is not None:
                status, headers, payload = route(request)
                request.outcome, request.status = "ok", status
                self._send(status, payload, headers)
                return
            if method == "GET" and path.rstrip("/").endswith("/models"):
                self._send_json(
                    200, {"object": "list", "data": [{"id": "fake", "object": "model"}]}
                )
                request.outcome, request.status = "ok", 200
                return
            if request.api == "other":
                request.outcome, request.status = "not_found", 404
                self._send_json(404, {"error": {"message": f"no route {method} {path}"}})
                return
            self._answer(request)

        def _answer(self, request: FakeRequest) -> None:
            outcome, retry_after, latency = server._decide()
            request.outcome = outcome
            if outcome == Fault.DROP.value:
                self._drop()
                return
            if outcome == Fault.HANG.value:
                time.sleep(server.hang_s)
                self._drop()
                return
            if latency:
                time.sleep(latency)
            if outcome == "rate_limited" or outcome == Fault.RATE_LIMIT.value:
                headers: dict[str, str] = {}
                if retry_after is not None:
                    headers["retry-after"] = f"{retry_after:.3f}".rstrip("0").rstrip(".")
                    headers["retry-after-ms"] = str(round(retry_after * 1000))
                self._send_error(request, Fault.RATE_LIMIT, headers)
                return
            fault = Fault(outcome) if outcome != "ok" else None
            if fault in _HTTP_FAULTS:
                assert fault is not None
                self._send_error(request, fault, {})
                return
            if fault is Fault.GARBAGE:
                request.status = 200
                self._send(
                    200, b"<html>upstream proxy says hi", {"content-type": "application/json"}
                )
                return
            if fault is Fault.HTML:
                request.status = 200
                page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
                self._send(200, page, {"content-type": "text/html"})
                return
            if fault is Fault.BINARY:
                request.status = 200
                self._send(200, b"\xff\xfe\x00\x81binary", {"content-type": "application/json"})
                return
            if fault is Fault.MISSING_FIELDS:
                request.status = 200
                self._send_json(200, {})
                return
            if fault is Fault.STALL:
                request.status = 200
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "4096")
                self.end_headers()
                self.wfile.write(b'{"id": "chatcmpl-stall", ')
                self.wfile.flush()
                time.sleep(server.hang_s)
                self._drop()
                return
            if fault is Fault.GZIP_BOMB:
                request.status = 200
                headers = {"content-type": "application/json", "content-encoding": "gzip"}
                self._send(200, _gzip_bomb(), headers)
                return
            if fault is Fault.HUGE:
                request.status = 200
                text = "x" * (50 * 10**6)
                self._send_json(200, _openai_completion(request, text, None, server.model_id))
                return
            if fault is Fault.BAD_CHUNK:
                request.status = 200
                self.close_connection = True
                self.wfile.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                 b"transfer-encoding: chunked\r\n\r\nZZ\r\n{\"id\r\n0\r\n\r\n")  # fmt: skip
                self.wfile.flush()
                return
            if fault is Fault.TRUNCATED:
                request.status = 200
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "4096")
                self.end_headers()
                self.wfile.write(b'{"id": "msg_tr')
                self.wfile.flush()
                self._drop()
                return
            text = server.responder(request)
            if fault is Fault.ECHO_KEY:
                key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
                text = f"{text}\n(you sent: {key})"
            request.status = 200
            if request.api == "anthropic":
                payload = _anthropic_message(request, text, fault, server.model_id)
                if fault is Fault.HUGE_USAGE:
                    payload["usage"] = {"input_tokens": 10**400, "output_tokens": 10**400}
                self._send_json(200, payload, {"request-id": f"req_{request.index}"})
            else:
                payload = _openai_completion(request, text, fault, server.model_id)
                if fault is Fault.HUGE_USAGE:
                    payload["usage"] = {"prompt_tokens": 10**400, "completion_tokens": 10**400}
                self._send_json(200, payload, {"x-request-id": f"req_{request.index}"})

        def _send_error(self, request: FakeRequest, fault: Fault, headers: dict[str, str]) -> None:
            status, kind, message = _HTTP_FAULTS[fault]
            key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
            message = message.format(key=key.removeprefix("Bearer "), model=request.model)
            request.status = status
            if request.api == "anthropic":
                body: dict[str, Any] = {
                    "type": "error",
                    "error": {"type": kind, "message": message},
                }
                headers = {**headers, "request-id": f"req_{request.index}"}
            else:
                body = {"error": {"message": message, "type": kind, "code": None}}
                headers = {**headers, "x-request-id": f"req_{request.index}"}
            self._send_json(status, body, headers)

        def _send_json(
            self, status: int, payload: Any, headers: Mapping[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode("utf-8")
            self._send(status, data, {"content-type": "application/json", **(headers or {})})

        def _send(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
            try:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _drop(self) -> None:
            # Close the socket at once, without a response (RST where possible).
            self.close_connection = True
            try:
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    return Handler


@functools.cache
def _gzip_bomb() -> bytes:
    """64 MiB of spaces, gzipped (~290 KiB): four times the reply cap once decoded."""
    packer = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * 2**20
    return b"".join(packer.compress(block) for _ in range(64)) + packer.flush()


def _usage_counts(request: FakeRequest, text: str) -> tuple[int, int]:
    return max(1, len(request.prompt.split())), max(1, len(text.split()))


THOUGHT = "Weighing each factor before answering."
THINKS_TOKENS = 40


def _limit(request: FakeRequest) -> int:
    body = request.body if isinstance(request.body, dict) else {}
    return int(body.get("max_tokens") or body.get("max_completion_tokens") or 1024)


def _reasoning(request: FakeRequest, fault: Fault | None, out: int) -> tuple[int, int, bool]:
    """(output tokens, reasoning tokens, whether any text is left) for a reasoning fault."""
    if fault is Fault.THINKS:
        return out + THINKS_TOKENS, THINKS_TOKENS, True
    return _limit(request), _limit(request), False


def _anthropic_message(
    request: FakeRequest, text: str, fault: Fault | None, model_id: str | None
) -> dict[str, Any]:
    inp, out = _usage_counts(request, text)
    stop = "end_turn"
    if fault is Fault.REFUSAL:
        stop, text = "refusal", "I can't help with that."
    elif fault is Fault.MAX_TOKENS:
        stop, text = "max_tokens", text[: max(1, len(text) // 2)]
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    usage: dict[str, Any] = {"input_tokens": inp, "output_tokens": out}
    if fault in (Fault.THINKS, Fault.REASONING_ONLY):
        out, thought, answered = _reasoning(request, fault, out)
        thinking = {"type": "thinking", "thinking": THOUGHT, "signature": "sig"}
        content = [thinking, *content] if answered else [thinking]
        stop = stop if answered else "max_tokens"
        usage = {"input_tokens": inp, "output_tokens": out,
                 "output_tokens_details": {"thinking_tokens": thought}}  # fmt: skip
    return {
        "id": f"msg_{request.index:06d}",
        "type": "message",
        "role": "assistant",
        "model": model_id or request.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _openai_completion(
    request: FakeRequest, text: str, fault: Fault | None, model_id: str | None
) -> dict[str, Any]:
    inp, out = _usage_counts(request, text)
    finish = "stop"
    content: str | None = text
    refusal: str | None = None
    if fault is Fault.REFUSAL:
        content, refusal = None, "I can't help with that."
    elif fault is Fault.MAX_TOKENS:
        finish, content = "length", text[: max(1, len(text) // 2)]
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    usage: dict[str, Any] = {"prompt_tokens": inp, "completion_tokens": out,
                             "total_tokens": inp + out}  # fmt: skip
    if fault in (Fault.THINKS, Fault.REASONING_ONLY):
        out, thought, answered = _reasoning(request, fault, out)
        message["reasoning_content"] = THOUGHT
        if not answered:
            finish, message["content"] = "length", ""
        usage = {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out,
                 "completion_tokens_details": {"reasoning_tokens": thought}}  # fmt: skip
    return {
        "id": f"chatcmpl-{request.index:06d}",
        "object": "chat.completion",
        "created": int(request.received_at),
        "model": model_id or request.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish,
            }
        ],
        "usage": usage,
    }

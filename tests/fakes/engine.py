"""A loopback fake of a self-hosted inference engine (vLLM, SGLang, Ray Serve) on 127.0.0.1.

It answers ``POST /v1/chat/completions`` as an OpenAI-compatible server does, and
times its answers the way a continuous-batching engine does:

- ``slots`` sequences run at once (vLLM ``--max-num-seqs``, SGLang
  ``--max-running-requests``); a request beyond them **waits in the server**, first in
  first out, and joins the batch at the next step a slot is free (no 429).
- Every decode step makes one token for each running sequence and takes
  ``step_s * (1 + step_growth * (running - 1))``: a bigger batch makes more tokens per
  second in all, and each sequence's tokens come more slowly.
- A reply is ``output_tokens`` tokens long (a length drawn from the range by the
  prompt's hash, so a prompt always gets the same one; capped by the request's
  ``max_tokens``): a request's time grows with its reply and with the batch it shares.
- ``max_queued`` bounds the queue (Ray Serve's ``max_queued_requests``): past it
  a request is answered at once with ``queue_full_status`` (503 by default, or 429),
  with ``retry-after`` when ``retry_after_s`` is set. ``None`` (vLLM's and SGLang's
  default) queues without bound.
- A request whose client hung up (a client timeout) leaves the batch or the queue, as
  engines abort a disconnected request; it is counted as ``aborted``.

The engine's steady capacity, all slots busy, is
``slots / (mean reply tokens * step time at slots)`` requests per second
(:meth:`EngineSpec.capacity_rps`). What it did is in :meth:`FakeEngine.stats` (in
process) or ``GET /engine/stats`` (JSON); ``POST /engine/reset`` clears it.

In a test::

    with FakeEngine(EngineSpec(slots=4, step_s=0.002)) as engine:
        backend = get_backend("openai/qwen3", base_url=engine.openai_base_url)
        ...
        assert engine.stats().max_running <= 4

As its own process (what ``benchmarks/bench_selfhosted.py`` does, so the engine does
not share the client's interpreter lock); it prints its base URL on the first line::

    PYTHONPATH=tests python -c "from fakes.engine import main; main()" --slots 32
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


def engine_reply(prompt: str) -> str:
    """A deterministic reply five-factor probes parse: weights summing to 100, then yes/no."""
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]
    return f"F1: 30, F2: 25, F3: 20, F4: 15, F5: 10\nno\n[engine {digest}]"


@dataclass(frozen=True)
class EngineSpec:
    """How the fake engine schedules and times requests (see the module docstring)."""

    slots: int = 32
    """Sequences decoded at once (vLLM ``--max-num-seqs``, SGLang ``--max-running-requests``)."""
    step_s: float = 0.0125
    """One decode step with a single sequence in the batch (seconds)."""
    step_growth: float = 0.02
    """How much each further sequence in the batch lengthens a step (fraction of ``step_s``)."""
    output_tokens: tuple[int, int] = (24, 56)
    """Reply length range in tokens (inclusive), picked per prompt by its hash."""
    max_queued: int | None = None
    """Requests allowed to wait beyond the slots; past it they are refused at once."""
    queue_full_status: int = 503
    retry_after_s: float | None = None
    """``retry-after`` sent with a queue-full refusal (None: no header)."""
    props: bool = False
    """Answer ``GET /props`` with ``total_slots`` as llama.cpp's ``llama-server`` does."""

    def __post_init__(self) -> None:
        low, high = self.output_tokens
        if self.slots < 1 or self.step_s <= 0 or self.step_growth < 0 or not 1 <= low <= high:
            raise ValueError(f"invalid engine spec: {self}")
        if self.max_queued is not None and self.max_queued < 0:
            raise ValueError(f"max_queued must be >= 0 or None, got {self.max_queued}")

    def step_time(self, running: int) -> float:
        """Seconds one decode step takes with ``running`` sequences in the batch."""
        return self.step_s * (1.0 + self.step_growth * max(0, running - 1))

    def tokens_for(self, prompt: str, max_tokens: int | None = None) -> int:
        """The reply length for ``prompt`` (deterministic), capped by ``max_tokens``."""
        low, high = self.output_tokens
        spread = int.from_bytes(hashlib.sha256(prompt.encode("utf-8")).digest()[:4], "big")
        tokens = low + spread % (high - low + 1)
        return min(tokens, max_tokens) if max_tokens else tokens

    def capacity_rps(self, mean_tokens: float | None = None) -> float:
        """Requests per second with every slot busy (for replies of ``mean_tokens``)."""
        mean = mean_tokens if mean_tokens is not None else sum(self.output_tokens) / 2
        return self.slots / (mean * self.step_time(self.slots))


@dataclass(eq=False)  # compared by identity: each is one request
class _Sequence:
    prompt: str
    tokens: int
    arrived: float
    wake_w: int
    """Write end of a pipe the handler waits on (select, with the client's socket)."""
    left: int = 0
    admitted: float | None = None
    finished: float | None = None


@dataclass(frozen=True)
class EngineStats:
    """What the engine did since it started (or since the last reset)."""

    slots: int
    received: int
    completed: int
    rejected: int
    """Refused because the queue was full (``max_queued``)."""
    aborted: int
    """Dropped because the client hung up before its reply was ready."""
    max_running: int
    max_waiting: int
    """Most requests waiting at once (a request may wait up to one step for its slot)."""
    max_in_server: int
    """Most requests held at once, running and waiting: the client's concurrency, seen here."""
    tokens: int
    """Reply tokens of the completed requests."""
    steps: int
    queue_waits_s: tuple[float, ...] = field(repr=False)
    """Per completed request: seconds from arrival to joining the batch."""
    finish_times: tuple[float, ...] = field(repr=False)
    """Per completed request: when it finished (``time.monotonic()`` of the engine)."""
    step_ends: tuple[float, ...] = field(repr=False)
    """Per decode step: when it ended (``time.monotonic()`` of the engine)."""
    step_batches: tuple[int, ...] = field(repr=False)
    """Per decode step: how many sequences it decoded."""

    def occupancy(self, start: float, end: float) -> float:
        """Mean share of the slots busy over the steps that ended in ``[start, end]``."""
        batches = [
            b for t, b in zip(self.step_ends, self.step_batches, strict=True) if start <= t <= end
        ]
        return sum(batches) / (len(batches) * self.slots) if batches else math.nan

    @property
    def mean_tokens(self) -> float:
        return self.tokens / self.completed if self.completed else math.nan

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EngineStats:
        data = dict(data)
        data["queue_waits_s"] = tuple(data["queue_waits_s"])
        data["finish_times"] = tuple(data["finish_times"])
        data["step_ends"] = tuple(data["step_ends"])
        data["step_batches"] = tuple(data["step_batches"])
        return cls(**data)


class FakeEngine:
    """The continuous-batching fake (see the module docstring); a context manager."""

    def __init__(
        self,
        spec: EngineSpec | None = None,
        *,
        responder: Callable[[str], str] = engine_reply,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.spec = spec or EngineSpec()
        self.responder = responder
        self._cond = threading.Condition()
        self._waiting: deque[_Sequence] = deque()
        self._running: list[_Sequence] = []
        self._stopping = False
        self._reset_counters()
        self._httpd = _Server((host, port), _make_handler(self))
        self._threads: list[threading.Thread] = []

    def _reset_counters(self) -> None:
        self._received = self._completed = self._rejected = self._aborted = 0
        self._max_running = self._max_waiting = self._max_in_server = 0
        self._tokens = self._steps = 0
        self._queue_waits: list[float] = []
        self._finish_times: list[float] = []
        self._step_ends: list[float] = []
        self._step_batches: list[int] = []

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeEngine:
        if not self._threads:
            self._threads = [
                threading.Thread(target=self._decode_loop, name="engine-decode", daemon=True),
                threading.Thread(
                    target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
                ),
            ]
            for thread in self._threads:
                thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._threads:
            self._httpd.shutdown()
            for thread in self._threads:
                thread.join(timeout=5)
            self._threads = []
        self._httpd.server_close()

    def __enter__(self) -> FakeEngine:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    # -- inspection ------------------------------------------------------------------------
    def stats(self) -> EngineStats:
        with self._cond:
            return EngineStats(
                slots=self.spec.slots,
                received=self._received,
                completed=self._completed,
                rejected=self._rejected,
                aborted=self._aborted,
                max_running=self._max_running,
                max_waiting=self._max_waiting,
                max_in_server=self._max_in_server,
                tokens=self._tokens,
                steps=self._steps,
                queue_waits_s=tuple(self._queue_waits),
                finish_times=tuple(self._finish_times),
                step_ends=tuple(self._step_ends),
                step_batches=tuple(self._step_batches),
            )

    def reset(self) -> None:
        with self._cond:
            self._reset_counters()

    # -- scheduling ------------------------------------------------------------------------
    def _submit(self, prompt: str, max_tokens: int | None, wake_w: int) -> _Sequence | None:
        """Queue a request; ``None`` when the queue is full (refused)."""
        spec = self.spec
        with self._cond:
            self._received += 1
            beyond = len(self._running) + len(self._waiting) - spec.slots
            if spec.max_queued is not None and beyond >= spec.max_queued:
                self._rejected += 1
                return None
            tokens = spec.tokens_for(prompt, max_tokens)
            seq = _Sequence(prompt, tokens, time.monotonic(), wake_w, left=tokens)
            self._waiting.append(seq)
            self._max_waiting = max(self._max_waiting, len(self._waiting))
            held = len(self._waiting) + len(self._running)
            self._max_in_server = max(self._max_in_server, held)
            self._cond.notify_all()
            return seq

    def _abort(self, seq: _Sequence) -> bool:
        """Drop a sequence whose client left; False if it had already finished."""
        with self._cond:
            if seq.finished is not None:
                return False
            if seq in self._running:
                self._running.remove(seq)
            elif seq in self._waiting:
                self._waiting.remove(seq)
            self._aborted += 1
            return True

    def _admit(self, now: float) -> None:
        # at a step boundary the free slots take the oldest waiting requests
        while self._waiting and len(self._running) < self.spec.slots:
            seq = self._waiting.popleft()
            seq.admitted = now
            self._running.append(seq)
        self._max_running = max(self._max_running, len(self._running))

    def _decode_loop(self) -> None:
        step_end = 0.0
        while True:
            with self._cond:
                while not self._stopping and not self._running and not self._waiting:
                    self._cond.wait()
                if self._stopping:
                    return
                now = time.monotonic()
                self._admit(now)
                batch = len(self._running)
            # deadline-based steps: a late wake-up shortens the next sleep, not the rate
            step_end = max(step_end, now) + self.spec.step_time(batch)
            delay = step_end - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            with self._cond:
                self._steps += 1
                done_at = time.monotonic()
                self._step_ends.append(done_at)
                self._step_batches.append(batch)
                still: list[_Sequence] = []
                for seq in self._running:
                    seq.left -= 1
                    if seq.left > 0:
                        still.append(seq)
                        continue
                    seq.finished = done_at
                    self._completed += 1
                    self._tokens += seq.tokens
                    self._queue_waits.append((seq.admitted or seq.arrived) - seq.arrived)
                    self._finish_times.append(done_at)
                    # the slot is free before the client hears: its next request may take it
                    with contextlib.suppress(OSError):
                        os.write(seq.wake_w, b"\0")
                self._running = still


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that hung up between requests (timed out, closed its pool) is routine
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _client_gone(conn: socket.socket) -> bool:
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _make_handler(engine: FakeEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 120  # idle keep-alive connections end on their own

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr
            return

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/engine/stats":
                self._send_json(200, engine.stats().to_json())
            elif path == "/props" and engine.spec.props:
                self._send_json(200, {"total_slots": engine.spec.slots, "build_info": "fake"})
            elif path.endswith("/models"):
                self._send_json(
                    200, {"object": "list", "data": [{"id": "engine", "object": "model"}]}
                )
            else:
                self._send_json(404, {"error": {"message": f"no route GET {path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/engine/reset":
                engine.reset()
                self._send_json(200, {"reset": True})
                return
            if not path.endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route POST {path}"}})
                return
            try:
                body = json.loads(raw)
                prompt = _last_user_text(body)
            except (ValueError, AttributeError, TypeError):
                self._send_json(400, {"error": {"message": "expected a chat completion body"}})
                return
            self._complete(body, prompt)

        def _complete(self, body: dict[str, Any], prompt: str) -> None:
            read_w, wake_w = os.pipe()
            try:
                max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
                seq = engine._submit(prompt, int(max_tokens) if max_tokens else None, wake_w)
                if seq is None:
                    spec = engine.spec
                    headers = {}
                    if spec.retry_after_s is not None:
                        headers["retry-after"] = f"{spec.retry_after_s:g}"
                    message = "Too many requests queued; try again later."
                    self._send_json(
                        spec.queue_full_status, {"error": {"message": message}}, headers
                    )
                    return
                ready, _, _ = select.select([read_w, self.connection], [], [])
                if read_w not in ready:
                    if _client_gone(self.connection) and engine._abort(seq):
                        self.close_connection = True
                        return
                    # bytes from a client that waits (HTTP/1.1 clients send none): wait
                    # for the engine alone
                    select.select([read_w], [], [])
                self._send_json(
                    200, _completion(body, prompt, seq.tokens, engine.responder(prompt))
                )
            finally:
                os.close(read_w)
                os.close(wake_w)

        def _send_json(
            self, status: int, payload: Any, headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

    return Handler


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(str(part.get("text", "")) for part in content)
            return str(content or "")
    return ""


_ids = iter(range(1, 1 << 62))


def _completion(body: dict[str, Any], prompt: str, tokens: int, text: str) -> dict[str, Any]:
    prompt_tokens = max(1, len(prompt.split()))
    return {
        "id": f"chatcmpl-engine-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": tokens,
            "total_tokens": prompt_tokens + tokens,
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake engine until stdin closes (or Ctrl-C); prints its base URL first."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slots", type=int, default=32)
    ap.add_argument("--step-s", type=float, default=0.0125)
    ap.add_argument("--step-growth", type=float, default=0.02)
    ap.add_argument("--tokens", type=int, nargs=2, default=(24, 56), metavar=("MIN", "MAX"))
    ap.add_argument("--max-queued", type=int, default=None)
    ap.add_argument("--queue-full-status", type=int, default=503)
    ap.add_argument("--retry-after", type=float, default=None)
    ap.add_argument("--props", action="store_true", help="Answer GET /props (llama.cpp).")
    args = ap.parse_args(argv)
    spec = EngineSpec(
        slots=args.slots,
        step_s=args.step_s,
        step_growth=args.step_growth,
        output_tokens=(args.tokens[0], args.tokens[1]),
        max_queued=args.max_queued,
        queue_full_status=args.queue_full_status,
        retry_after_s=args.retry_after,
        props=args.props,
    )
    with FakeEngine(spec) as engine:
        print(engine.openai_base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            sys.stdin.read()  # the parent closes our stdin to stop us
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

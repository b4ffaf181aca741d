"""A loopback server that answers every request with bytes chosen by the test.

``FakeLLMServer`` speaks well-formed HTTP through ``http.server``; a hostile reply (a
header value that is not UTF-8, a header line a megabyte long, a JSON body with a lone
surrogate escape) needs the raw socket. Each connection gets one answer and is closed.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any


def completion(
    text_json: str, *, usage: str = '{"prompt_tokens": 5, "completion_tokens": 2}'
) -> bytes:
    """An OpenAI chat completion whose ``content`` is the JSON string literal ``text_json``
    (written as is: it may hold escapes a JSON encoder would never write)."""
    return (
        '{"id": "chatcmpl-raw", "object": "chat.completion", "model": "fake-model", '
        '"choices": [{"index": 0, "message": {"role": "assistant", "content": '
        f'{text_json}}}, "finish_reason": "stop"}}], "usage": {usage}}}'
    ).encode("utf-8", "surrogatepass")


def response(
    body: bytes, headers: list[tuple[bytes, bytes]] = (), status: bytes = b"200 OK"
) -> bytes:  # type: ignore[assignment]
    """The bytes of one HTTP/1.1 response (``content-length`` set, connection closed)."""
    head = [b"HTTP/1.1 " + status, b"content-type: application/json"]
    head += [name + b": " + value for name, value in headers]
    head += [b"content-length: " + str(len(body)).encode(), b"connection: close"]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class RawServer:
    """Answers each request on 127.0.0.1 with ``reply(request_body)``; counts requests."""

    def __init__(self, reply: Callable[[bytes], bytes]) -> None:
        self.reply = reply
        self.requests: list[bytes] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(body) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    body += chunk
                if b"/props" in head.split(b"\r\n")[0] or b"/get_server_info" in head:
                    conn.sendall(response(b"{}", status=b"404 Not Found"))
                    return
                self.requests.append(body)
                conn.sendall(self.reply(body))
            except OSError:
                return


def prompt_of(body: bytes) -> str:
    """The user prompt of an OpenAI request body."""
    return str(json.loads(body)["messages"][-1]["content"])

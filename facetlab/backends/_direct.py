"""Model calls posted over facetlab's own aiohttp session (``http_transport="aiohttp"``).

The backend says where and with which headers (the OpenAI backend its own, built
without importing the SDK; the Anthropic backend its SDK client's); this sends the exact
body and reads the reply through the backend's size cap. The backend maps an error
status as it maps the SDK's exception for one
(:func:`~facetlab.backends._common.status_error`). The SDK's own request path (typed
options, header building, its httpx layer over an aiohttp transport) costs ~1 ms of CPU
a call, more than the rest of a trial (docs/running.md); everything else — batch APIs,
a client or pool the caller gives, a proxy — stays on the SDK.
"""

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

import aiohttp

from facetlab.errors import TransientBackendError

MAX_CONNECTIONS = 1000
"""The session's connection limit (the SDKs' own default): the runner's limiter, not
the pool, decides how many calls are in flight."""


class Capped(Protocol):
    """A reply body read within a cap (:class:`~facetlab.backends._common.CappedBody`)."""

    parts: list[bytes]

    def add(self, chunk: bytes, declared: int = 0) -> None: ...


class Reply(NamedTuple):
    status: int
    reason: str
    headers: dict[str, str]
    """Lower-case names."""
    body: bytes


class DirectSender:
    """One event loop's session to one server (see the module)."""

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        provider: str,
        capped: Callable[[Mapping[str, str]], Capped],
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.loop = asyncio.get_running_loop()
        self.provider, self._capped = provider, capped
        self._session = aiohttp.ClientSession(
            headers=dict(headers),
            timeout=aiohttp.ClientTimeout(total=timeout),
            connector=aiohttp.TCPConnector(limit=MAX_CONNECTIONS),
        )

    async def post(self, path: str, body: Mapping[str, Any]) -> Reply:
        """POST ``body`` as JSON to ``base_url + path``; a timeout is a transient error."""
        data = json.dumps(body, ensure_ascii=False).encode()
        try:
            return await self._read(
                self._session.post(self.base_url + path, data=data, allow_redirects=False)
            )
        except asyncio.TimeoutError:  # (asyncio's: not the builtin on 3.10) the HTTP timeout
            raise TransientBackendError(
                f"{self.provider}: request timed out", provider=self.provider
            ) from None

    async def get_json(self, url: str, *, timeout: float) -> Any:
        """A GET's JSON (a server's own information page); None for an error status."""
        wait = aiohttp.ClientTimeout(total=timeout)
        reply = await self._read(self._session.get(url, timeout=wait, allow_redirects=False))
        return json.loads(reply.body) if reply.status < 300 else None

    async def _read(self, sending: Any) -> Reply:
        async with sending as reply:
            headers = {name.lower(): value for name, value in reply.headers.items()}
            capped = self._capped(headers)
            async for chunk in reply.content.iter_any():  # decoded as it arrives
                capped.add(chunk)
            return Reply(reply.status, reply.reason or "", headers, b"".join(capped.parts))

    async def close(self) -> None:
        await self._session.close()

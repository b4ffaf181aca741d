"""A content-addressed response cache, so no request is paid for twice.

The key is the sha256 of (model, sampling params, template, prompt, repeat, and
the endpoint when one is set): the same question asked of the same model on the
same server in the same repeat slot is answered from disk, in this sweep or any
later one that shares the cache directory. Transport settings (timeouts) are not
part of it. Entries are written atomically (temp file + ``os.replace``) the moment
a paid response arrives, before its record is written, so a process killed in
between still finds the answer on restart; an entry whose stored key is not the
one asked for is not served.

Sweeps sharing a cache claim a key before paying for it (:meth:`ResponseCache.claim`,
a per-key file lock): a second sweep asking the same question waits for the
first's answer instead of paying again.

>>> key = cache_key("openai/gpt-5.4", {"temperature": 0}, "facet-v3", "Hi", 0)
>>> len(key)
64
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import warnings
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import filelock

from facetlab.backends._common import redact_secrets
from facetlab.backends.base import ModelResponse, Usage
from facetlab.errors import RecordWarning
from facetlab.files import atomic_write_text
from facetlab.jsonio import read_json_file


def cache_key(
    model: str,
    params: Mapping[str, Any],
    template: str,
    prompt: str,
    repeat: int,
    *,
    endpoint: str | None = None,
) -> str:
    """sha256 hex of the canonical JSON of what determines an answer.

    ``endpoint`` (the server's base URL without credentials) is included only when
    set, so keys of sweeps against a provider's default server stay what they were.
    """
    identity: dict[str, Any] = {
        "model": model,
        "params": dict(params),
        "template": template,
        "prompt": prompt,
        "repeat": repeat,
    }
    if endpoint:
        identity["endpoint"] = endpoint
    payload = json.dumps(
        identity,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Responses on disk, one JSON file per key under ``root/<key[:2]>/<key>.json``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelResponse | None:
        """The stored response, or ``None`` (a corrupt entry counts as a miss)."""
        path = self._path(key)
        raw, problem = read_json_file(path, expect=dict)  # bounded: a hostile entry is a miss
        if problem is not None:
            if path.is_file():  # a bad entry (not a missing one) is said, then asked again
                warnings.warn(
                    f"{path}: skipped on resume, not readable from the cache ({problem}); "
                    "its trial is run again",
                    RecordWarning,
                    stacklevel=2,
                )
            return None
        try:
            if raw.get("key") != key:
                return None  # copied or renamed from another trial: not this answer
            usage = raw.get("usage") or {}
            return ModelResponse(
                text=str(raw["text"]),
                model_id=str(raw["model_id"]),
                usage=Usage(
                    usage.get("input_tokens"),
                    usage.get("output_tokens"),
                    usage.get("cached_input_tokens"),
                    usage.get("reasoning_tokens"),
                ),
                stop_reason=raw.get("stop_reason"),
                latency_s=raw.get("latency_s"),
                refusal=bool(raw.get("refusal", False)),
                provider_request_id=raw.get("provider_request_id"),
                thinking=raw.get("thinking"),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, response: ModelResponse, *, batch: bool = False) -> None:
        """Store a paid response (``batch`` notes it was billed at the batch rate)."""
        entry = {
            "key": key,
            "text": response.text,
            "model_id": response.model_id,
            "usage": {
                "input_tokens": response.usage.input_tokens,
                "output_tokens": response.usage.output_tokens,
                "cached_input_tokens": response.usage.cached_input_tokens,
                "reasoning_tokens": response.usage.reasoning_tokens,
            },
            "stop_reason": response.stop_reason,
            "latency_s": response.latency_s,
            "refusal": response.refusal,
            "provider_request_id": response.provider_request_id,
            "thinking": response.thinking,
            "batch": batch,
        }
        atomic_write_text(self._path(key), redact_secrets(json.dumps(entry, ensure_ascii=False)))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    @contextlib.asynccontextmanager
    async def claim(self, key: str, *, poll_s: float = 0.05) -> AsyncIterator[None]:
        """Hold ``key``'s lock (``<root>/<key[:2]>/<key>.lock``) across processes.

        Waits (without blocking the event loop) while another sweep holds it: that
        sweep is paying for this answer, which is then read from the cache.
        """
        path = self._path(key).with_suffix(".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        # mode 0o644: no group/other write bit, so filelock skips its per-directory probe
        # for file systems without flock (~2 ms per claim, on the sweep's hot path)
        lock = filelock.FileLock(path, mode=0o644, thread_local=False)
        while True:
            try:
                lock.acquire(timeout=0)
                break
            except filelock.Timeout:
                await asyncio.sleep(poll_s)
        try:
            yield
        finally:
            lock.release()

"""A content-addressed response cache, so no request is paid for twice.

The key is the sha256 of (model, sampling params, template, prompt, repeat): the
same question asked of the same model in the same repeat slot is answered from
disk, in this sweep or any later one that shares the cache directory. Entries are
written atomically (temp file + ``os.replace``) the moment a paid response
arrives, before its record is written, so a process killed in between still finds
the answer on restart.

>>> key = cache_key("openai/gpt-5.4", {"temperature": 0}, "facet-v3", "Hi", 0)
>>> len(key)
64
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from facetlab.backends.base import ModelResponse, Usage
from facetlab.records.own import atomic_write_text


def cache_key(
    model: str, params: Mapping[str, Any], template: str, prompt: str, repeat: int
) -> str:
    """sha256 hex of the canonical JSON of what determines an answer."""
    payload = json.dumps(
        {
            "model": model,
            "params": dict(params),
            "template": template,
            "prompt": prompt,
            "repeat": repeat,
        },
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
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            usage = raw.get("usage") or {}
            return ModelResponse(
                text=str(raw["text"]),
                model_id=str(raw["model_id"]),
                usage=Usage(usage.get("input_tokens"), usage.get("output_tokens")),
                stop_reason=raw.get("stop_reason"),
                latency_s=raw.get("latency_s"),
                refusal=bool(raw.get("refusal", False)),
                provider_request_id=raw.get("provider_request_id"),
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
            },
            "stop_reason": response.stop_reason,
            "latency_s": response.latency_s,
            "refusal": response.refusal,
            "provider_request_id": response.provider_request_id,
            "batch": batch,
        }
        atomic_write_text(self._path(key), json.dumps(entry, ensure_ascii=False))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._path(key).is_file()

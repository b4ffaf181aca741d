"""The response cache's on-disk entry: what put writes is what earlier versions wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from facetlab.backends.base import ModelResponse, Usage
from facetlab.client.cache import ResponseCache

KEY = "ab" + "0" * 62

# An entry exactly as facetlab 34217f1 (before put used dataclasses.asdict) wrote it.
WRITTEN_BEFORE = (
    '{"key": "ab00000000000000000000000000000000000000000000000000000000000000", '
    '"text": "F1: 60\\nnaïve yes", "model_id": "m-1", "usage": {"input_tokens": 120, '
    '"output_tokens": 45, "cached_input_tokens": 30, "reasoning_tokens": null}, '
    '"stop_reason": "end_turn", "latency_s": 1.25, "refusal": false, '
    '"provider_request_id": "req-7", "thinking": "thought", "batch": true}'
)
RESPONSE = ModelResponse(
    text="F1: 60\nnaïve yes",
    model_id="m-1",
    usage=Usage(input_tokens=120, output_tokens=45, cached_input_tokens=30),
    stop_reason="end_turn",
    latency_s=1.25,
    provider_request_id="req-7",
    thinking="thought",
)


def test_an_entry_written_by_the_earlier_put_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / KEY[:2] / f"{KEY}.json"
    path.parent.mkdir()
    path.write_text(WRITTEN_BEFORE, encoding="utf-8")
    assert ResponseCache(tmp_path).get(KEY) == RESPONSE


def test_put_writes_the_same_bytes_as_before_plus_the_digest(tmp_path: Path) -> None:
    """Issue 39.2: an entry carries the digest of what was received, last; the rest is as
    earlier versions wrote it (and their entries, without one, are still served)."""
    import json

    from facetlab.jsonio import received_sha256

    cache = ResponseCache(tmp_path)
    cache.put(KEY, RESPONSE, batch=True)
    written = (tmp_path / KEY[:2] / f"{KEY}.json").read_text(encoding="utf-8")
    digest = received_sha256(json.loads(WRITTEN_BEFORE))
    assert written == WRITTEN_BEFORE[:-1] + f', "received_sha256": "{digest}"}}'
    assert cache.get(KEY) == RESPONSE


def test_a_cache_entry_is_written_whole_without_the_fsync_a_record_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CPU a trial (issue 27, item 6): a cache entry is renamed into place whole but not
    fsynced (the answer's record is the durable copy); every other atomic write is."""
    import os

    from facetlab.files import atomic_write_text

    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    cache = ResponseCache(tmp_path / "cache")
    key = "ab" + "0" * 62
    cache.put(key, ModelResponse(text="F1: 60, F2: 40", model_id="m", usage=Usage(3, 4)))
    assert synced == [] and cache.get(key) is not None
    assert not list((tmp_path / "cache").rglob("*.tmp"))  # no temp file left behind
    atomic_write_text(tmp_path / "record.json", "{}")  # a record, sweep.json, batch state
    assert len(synced) == 1

"""The response cache's on-disk entry: what put writes is what earlier versions wrote."""

from __future__ import annotations

from pathlib import Path

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


def test_put_writes_the_same_bytes_as_before(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put(KEY, RESPONSE, batch=True)
    written = (tmp_path / KEY[:2] / f"{KEY}.json").read_text(encoding="utf-8")
    assert written == WRITTEN_BEFORE
    assert cache.get(KEY) == RESPONSE

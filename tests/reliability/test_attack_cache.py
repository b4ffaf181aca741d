"""Issue 39.2 and 39.1's resume: a cache entry proves itself before it is served.

An entry carries the digest of what was received. An entry whose content no longer
matches it — an entry of its own (a cache on another disk, a sharded sweep) or a record
file hard-linked as the entry and edited in place — is named, never served, asked
again, and replaced by the fresh answer. A record edited in a sweep that shares the
cache is named on resume, asked again, and its fresh answer stored: no later sweep pays
for it again. Nothing lost (every trial ends with an ok record), nothing paid twice
(one extra paid call per edit, then none).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fakes import FakeLLMServer
from hypothesis import given, settings
from hypothesis import strategies as st
from test_runner_helpers import StubSuite, make_instances

from facetlab.backends.base import ModelResponse, Usage
from facetlab.client.cache import ResponseCache
from facetlab.errors import RecordWarning
from facetlab.records import load_trials
from facetlab.runner import RunOptions, run

pytestmark = pytest.mark.slow

N = 4  # P1 trials of make_instances(2)


def _sweep(server: FakeLLMServer, out: Path, cache: Path, layout: str = "files") -> int:
    result = run(make_instances(2), "p1", "openai/m", out=out, base_url=server.openai_base_url,
                 suite=StubSuite(), progress="none", console=io.StringIO(),
                 options=RunOptions(cache_dir=cache, records=layout))  # type: ignore[arg-type]  # fmt: skip
    assert result.stats is not None and result.stats.ok + result.stats.already_done == N
    return result.stats.calls


_FIELDS = st.sampled_from(["text", "model_id", "stop_reason", "thinking", "provider_request_id",
                           "latency_s", "refusal", "usage", "batch"])  # fmt: skip


@settings(max_examples=20, deadline=None)
@given(field=_FIELDS)
def test_an_entry_of_its_own_edited_is_named_removed_and_never_served(field: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        cache = ResponseCache(folder)
        key = "cd" + "1" * 62
        answer = ModelResponse("F1: 60", "m", Usage(10, 5), "stop", 0.5, False, "r-1", "t")
        cache.put(key, answer)
        path = Path(folder) / key[:2] / f"{key}.json"
        entry = json.loads(path.read_text(encoding="utf-8"))
        entry[field] = {"usage": {"input_tokens": 1}, "refusal": True, "latency_s": 9.0,
                        "batch": True}.get(field, "edited")  # fmt: skip
        path.write_text(json.dumps(entry), encoding="utf-8")
        with pytest.warns(RecordWarning, match="not served from the cache"):
            assert cache.get(key) is None
        assert not path.exists()  # removed: the fresh answer takes its place
        cache.put(key, answer)
        assert cache.get(key) == answer


@pytest.mark.parametrize("layout", ["files", "shards"])
def test_an_edited_record_in_a_shared_cache_is_asked_again_once_and_stored(
    tmp_path: Path, layout: str
) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer() as server:
        assert _sweep(server, tmp_path / "a", cache, layout) == N
        if layout == "files":  # the record file is the entry: edit it in place (same inode)
            record = sorted((tmp_path / "a" / "records").glob("*.json"))[0]
            data = json.loads(record.read_text(encoding="utf-8"))
            data["ground_truth"] = "no" if data.get("ground_truth") == "yes" else "yes"
            with open(record, "r+", encoding="utf-8") as handle:
                handle.write(json.dumps(data))
                handle.truncate()
        else:  # an entry of its own: edit one
            entry = sorted(cache.glob("??/*.json"))[0]
            data = json.loads(entry.read_text(encoding="utf-8"))
            data["text"] = "F2: 99"
            entry.write_text(json.dumps(data), encoding="utf-8")
        with pytest.warns(RecordWarning, match="changed after it was written"):
            assert _sweep(server, tmp_path / "b", cache, layout) == 1  # asked again, once
        paid = len(server.requests)
        if layout == "files":  # sweep a names its edited record, asks again: the cache answers
            with pytest.warns(RecordWarning, match="changed after it was written"):
                assert _sweep(server, tmp_path / "a", cache, layout) == 0
        assert _sweep(server, tmp_path / "c", cache, layout) == 0  # stored: nobody pays again
        assert len(server.requests) == paid == N + 1
    for sweep in ("a", "b", "c"):
        frame = load_trials(records=tmp_path / sweep)
        assert len(frame) == N and frame["excluded_reason"].isna().all()
        assert "F2: 99" not in set(frame["raw_response"])

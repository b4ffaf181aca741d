"""A paid answer whose record is a file of its own is cached as that file, hard-linked:
one file written per answer. The entry serves every reader of the cache as a written
entry would: a second sweep sharing the cache, a record later compacted away; where the
file system refuses a link, the answer gets an entry of its own."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import pytest
from fakes import FakeLLMServer
from test_runner_helpers import StubSuite, make_instances

from facetlab.client.cache import ResponseCache
from facetlab.errors import RecordWarning
from facetlab.runner import RunOptions, run


def sweep(server: FakeLLMServer, out: Path, cache: Path) -> int:
    result = run(make_instances(2), "p1", "openai/m", out=out, base_url=server.openai_base_url,
                 suite=StubSuite(), progress="none", console=io.StringIO(),
                 options=RunOptions(cache_dir=cache, records="files"))  # fmt: skip
    assert result.stats is not None and result.stats.ok == N
    return result.stats.cached


N = 4  # P1 trials of make_instances(2): two bases, a counterfactual, an adversarial


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("??/*.json"))


def test_each_entry_is_its_record_and_serves_another_sweep(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer() as server:
        assert sweep(server, tmp_path / "a", cache) == 0
        records = sorted((tmp_path / "a" / "records").glob("*.json"))
        assert len(entries(cache)) == len(records) == N
        for entry in entries(cache):  # one inode: the record, linked by its key
            assert any(entry.samefile(record) for record in records)
            assert os.stat(entry).st_nlink == 2
        for record in records:  # a record compacted or deleted away: the entry stays
            record.unlink()
        assert sweep(server, tmp_path / "b", cache) == N  # all from the cache
        assert len(server.requests) == N  # none paid twice
        answer = ResponseCache(cache).get(entries(cache)[0].stem)
        assert answer is not None and answer.text and answer.model_id


def test_where_a_link_is_refused_the_answer_gets_an_entry_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", refused)
    cache = tmp_path / "cache"
    with FakeLLMServer() as server:
        sweep(server, tmp_path / "a", cache)
        for entry in entries(cache):
            assert os.stat(entry).st_nlink == 1 and '"batch"' in entry.read_text()
        assert sweep(server, tmp_path / "b", cache) == N
        assert len(server.requests) == N


def test_a_record_edited_in_place_is_not_served_from_the_cache(tmp_path: Path) -> None:
    # the entry is the record's inode: an editor that writes in place edits both, and an
    # edited answer must not come back as a clean cached one (its received_sha256 says so)
    cache = tmp_path / "cache"
    with FakeLLMServer() as server:
        sweep(server, tmp_path / "a", cache)
        record = sorted((tmp_path / "a" / "records").glob("*.json"))[0]
        text = record.read_text()
        with open(record, "r+", encoding="utf-8") as handle:  # the same inode, rewritten
            handle.write(text.replace('"raw_response": "', '"raw_response": "EDITED ', 1))
            handle.truncate()
        with pytest.warns(RecordWarning, match="changed after it was written"):
            assert sweep(server, tmp_path / "b", cache) == N - 1
        assert len(server.requests) == N + 1  # the edited one asked again, once
    again = (tmp_path / "b" / "records" / record.name).read_text()
    assert "EDITED" not in again

"""A depth bomb in a sweep's records or cache is a miss on resume, never a crash."""

from __future__ import annotations

from pathlib import Path

from facetlab.client.cache import ResponseCache
from facetlab.runner.executor import existing_status

BOMB = "[" * 200_000 + "]" * 200_000


def test_a_deeply_nested_record_is_treated_as_missing(tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    (records / "bomb.json").write_text(BOMB)
    (records / "ok.json").write_text('{"trial_id": "t1", "status": "ok"}')
    assert existing_status(tmp_path) == {"t1": "ok"}


def test_a_deeply_nested_cache_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    key = "ab" + "0" * 62
    path = tmp_path / "cache" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(BOMB)
    assert cache.get(key) is None

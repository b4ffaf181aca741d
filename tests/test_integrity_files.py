"""Issue 23 (records side): one JSON reader for any top-level value; bad files on resume
are reported and skipped; unknown record formats refused with the supported list."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.client.cache import ResponseCache
from facetlab.errors import RecordError
from facetlab.jsonio import read_json_file
from facetlab.records.own import RecordWarning, read_record, record_statuses
from facetlab.runner.executor import existing_status

ROOT = Path(__file__).resolve().parents[1]
SCALARS = ["42", "null", "true", '"text"', "-1.5"]


@pytest.mark.parametrize("text", SCALARS)
def test_any_top_level_value_is_read(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    import json

    assert read_json_file(path) == (json.loads(text), None)


@pytest.mark.parametrize(
    ("text", "got"), [("42", "a number"), ("null", "null"), ("true", "a boolean")]
)
def test_expecting_an_object_says_what_the_file_holds(tmp_path: Path, text: str, got: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    assert read_json_file(path, expect=dict) == (
        None,
        f"expected an object at the top level, got {got}",
    )


@pytest.mark.parametrize("text", ["42", "null", "true"])
def test_validate_gives_one_line_for_a_scalar_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "TypeError" not in result.output
    assert f"{path}: error: expected a JSON object" in result.output


def test_run_gives_one_line_for_a_scalar_instance_file(tmp_path: Path) -> None:
    folder = tmp_path / "dom"
    folder.mkdir()
    (folder / "a.json").write_text("42")
    result = CliRunner().invoke(
        app,
        ["run", "-m", "simulated/wadd", "--instances", str(folder), "--out", str(tmp_path / "o")],
    )
    assert result.exit_code != 0
    assert not isinstance(result.exception, TypeError)
    assert "expected a JSON object at the top level, got a number" in result.output


@pytest.mark.parametrize("text", ["42", "null", "true", "[1]", '{"trial_id": "x"}'])
def test_a_bad_file_in_records_is_reported_and_skipped_on_resume(tmp_path: Path, text: str) -> None:
    records = tmp_path / "records"
    records.mkdir()
    (records / "bad.json").write_text(text)
    (records / "ok.json").write_text('{"trial_id": "t1", "status": "ok"}')
    with pytest.warns(RecordWarning, match=r"bad\.json: skipped on resume"):
        assert existing_status(tmp_path) == {"t1": "ok"}


def test_record_statuses_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert record_statuses(tmp_path / "nope") == {}


@pytest.mark.parametrize("text", ["null", "42", "[]"])
def test_a_scalar_cache_entry_is_a_miss(tmp_path: Path, text: str) -> None:
    cache = ResponseCache(tmp_path / "cache")
    key = "ab" + "0" * 62
    path = tmp_path / "cache" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.warns(RecordWarning, match=r"skipped on resume, not readable from the cache"):
        assert cache.get(key) is None
    assert ResponseCache(tmp_path / "other").get(key) is None  # a plain miss: no warning


def _record(fmt: str | None) -> str:
    import json

    from facetlab.records.schema import TrialRecord

    rec = TrialRecord(
        trial_id="t1",
        probe="p2",
        instance_id="x",
        n_factors=2,
        model="m/x",
        provider="m",
        model_id="x",
        backend="m",
        template="facet-v3",
        prompt="p",
        prompt_sha256="0" * 64,
        status="ok",
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
        facetlab_version="0",
    ).model_dump(mode="json")
    if fmt is None:
        del rec["format"]
    else:
        rec["format"] = fmt
    return json.dumps(rec)


@pytest.mark.parametrize(
    "fmt", ["facetlab.record/2", "facetlab.record/0", "facetlab.record/1.5", None]
)
def test_unknown_record_formats_are_refused_with_the_supported_list(
    tmp_path: Path, fmt: str | None
) -> None:
    path = tmp_path / "t1.json"
    path.write_text(_record(fmt))
    with pytest.raises(RecordError, match=r"supported record formats: facetlab\.record/1$"):
        read_record(path)


def test_the_current_format_reads(tmp_path: Path) -> None:
    path = tmp_path / "t1.json"
    path.write_text(_record("facetlab.record/1"))
    assert read_record(path).trial_id == "t1"

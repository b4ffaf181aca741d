"""facetlab.jsonio: the one bounded, strict JSON-file reader, and its callers' errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from facetlab import jsonio
from facetlab.cli import app
from facetlab.errors import InstanceError, RecordError
from facetlab.instances import load_instance, read_json_file
from facetlab.jsonio import nesting_depth
from facetlab.records.own import read_record

EXAMPLE = Path(__file__).resolve().parents[1] / "instances" / "example-domain-0001.json"


def _write(tmp_path: Path, text: str, name: str = "x.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_one_reader_for_instances_and_records() -> None:
    assert read_json_file is jsonio.read_json_file
    from facetlab.records import facet_v3, own

    assert own.read_json_file is jsonio.read_json_file
    assert facet_v3.read_json_file is jsonio.read_json_file


def test_valid_file_reads(tmp_path: Path) -> None:
    assert read_json_file(_write(tmp_path, '{"a": [1, {"b": "]]"}], "c": null}')) == (
        {"a": [1, {"b": "]]"}], "c": None},
        None,
    )


def test_200000_deep_json_is_a_clear_problem_fast(tmp_path: Path) -> None:
    path = _write(tmp_path, "[" * 200_000 + "]" * 200_000)
    data, problem = read_json_file(path)  # refused before parsing: no recursion, no stall
    assert data is None and problem == "nested 200,000 levels deep; expected at most 64"
    with pytest.raises(InstanceError, match=r"x\.json: nested 200,000 levels deep"):
        load_instance(path)


def test_depth_below_the_interpreter_limit_is_refused_too(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"a": ' + "[" * 499 + "]" * 499 + "}")
    assert read_json_file(path) == (None, "nested 500 levels deep; expected at most 64")


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert nesting_depth('"[[[[" ') == 0
    assert nesting_depth(r'{"a": "\"[[", "b": [[]]}') == 3
    assert nesting_depth("") == 0


def test_depth_limit_is_exact(tmp_path: Path) -> None:
    at_limit = _write(tmp_path, "[" * 64 + "]" * 64)
    assert read_json_file(at_limit)[1] is None
    over = _write(tmp_path, "[" * 65 + "]" * 65, "y.json")
    assert read_json_file(over) == (None, "nested 65 levels deep; expected at most 64")


def test_duplicate_key_names_the_key(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        '"instance_id"', '"domain": "dup", "domain": "dup2", "instance_id"', 1
    )
    path = _write(tmp_path, text, "dup.json")
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    assert (
        str(info.value) == f"{path}: duplicate key 'domain' in one object; expected each key once"
    )


def test_nested_duplicate_key_is_found(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"a": [{"w": 1, "w": 2}]}')
    assert read_json_file(path) == (None, "duplicate key 'w' in one object; expected each key once")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(tmp_path: Path, constant: str) -> None:
    path = _write(tmp_path, f'{{"weight": {constant}}}')
    assert read_json_file(path) == (
        None,
        f"{constant} is not a JSON number; expected a finite number or null",
    )


def test_nan_in_a_record_is_an_unreadable_record(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"format": "facetlab-trial", "foi_weight": NaN}', "t.json")
    with pytest.raises(RecordError, match=r"t\.json: NaN is not a JSON number"):
        read_record(path)


def test_size_limit(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps({"a": "x" * 100}))
    assert read_json_file(path, max_bytes=50) == (
        None,
        f"file is {path.stat().st_size:,} bytes; expected at most 50",
    )


def test_huge_integer_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    data, problem = read_json_file(_write(tmp_path, "1" * 5000))
    assert data is None and problem is not None and problem.startswith("invalid JSON: ")


def test_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    assert read_json_file(_write(tmp_path, '{\n  "a": 1,\n}')) == (
        None,
        "invalid JSON at line 3 column 1: Expecting property name enclosed in double quotes",
    )


def test_not_utf8_and_not_a_file(tmp_path: Path) -> None:
    assert read_json_file(tmp_path / "missing.json") == (
        None,
        "cannot read file (No such file or directory)",
    )
    (tmp_path / "bin.json").write_bytes(b'{"a": "\xff"}')
    assert read_json_file(tmp_path / "bin.json")[1] == "expected UTF-8 text (invalid start byte)"
    assert read_json_file(tmp_path) == (None, "not a regular file; expected a JSON file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    assert read_json_file(tmp_path / "pipe.json") == (
        None,
        "not a regular file; expected a JSON file",
    )


def test_symlink_loop_is_a_problem_line_in_validate(tmp_path: Path) -> None:
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "a.json").symlink_to(folder / "b.json")
    (folder / "b.json").symlink_to(folder / "a.json")
    (folder / "good.json").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(folder / "a.json")])
    assert result.exit_code == 1
    assert f"{folder / 'a.json'}: error: symbolic link loop" in result.output
    result = CliRunner().invoke(app, ["validate", str(folder)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 1
    # one cause, one line: the loop, with the count and both files
    assert "error in 2 places: symbolic link loop" in result.output
    assert f"{folder / 'a.json'}, {folder / 'b.json'})" in result.output
    assert "3 files checked: 2 errors" in result.output

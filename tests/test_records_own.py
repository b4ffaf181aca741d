"""facetlab's own records: atomic write, read back, load into the table; bad files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from facetlab.errors import ConfigError, DataError, RecordError
from facetlab.records import (
    RecordWarning,
    TrialRecord,
    load_trials,
    prompt_sha256,
    read_record,
    read_records,
    write_record,
)


def make_record(**overrides: Any) -> TrialRecord:
    fields: dict[str, Any] = {
        "trial_id": "t-0001",
        "probe": "p2",
        "instance_id": "facet-neg-cf-002",
        "base_instance_id": "facet-neg-0002",
        "variant": "counterfactual",
        "factor_of_interest": "F3",
        "n_factors": 5,
        "model": "anthropic/claude-opus-4-6",
        "provider": "anthropic",
        "model_id": "claude-opus-4-6",
        "backend": "anthropic",
        "template": "weighted-rank/1",
        "prompt": "CASE: x",
        "prompt_sha256": prompt_sha256("CASE: x"),
        "status": "ok",
        "raw_response": "F1: 30, F2: 30, F3: 5, F4: 20, F5: 15\nNo",
        "parsed": {
            "weights": {"F1": 30, "F2": 30, "F3": 5, "F4": 20, "F5": 15},
            "weight_sum": 100,
            "answer": "no",
        },
        "parse_status": "ok",
        "started_at": "2026-05-01T10:00:00+02:00",
        "finished_at": "2026-05-01T10:00:03+02:00",
        "latency_s": 3.0,
        "cost_usd": 0.01,
        "facetlab_version": "0.1.0",
    }
    fields.update(overrides)
    return TrialRecord.model_validate(fields)


def test_write_is_atomic_and_round_trips(tmp_path: Path) -> None:
    record = make_record()
    path = write_record(record, tmp_path / "sweep" / "records")
    assert path.name == "t-0001.json"
    assert [p.name for p in path.parent.iterdir()] == ["t-0001.json"]  # no temp file left
    assert read_record(path) == record
    # Rewriting the same trial replaces the file.
    write_record(make_record(cost_usd=0.02), path.parent)
    assert read_record(path).cost_usd == 0.02


def test_write_rejects_a_path_like_trial_id(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="file name"):
        write_record(make_record(trial_id="../x"), tmp_path)


def test_read_records_recursive_skips_other_artifacts(tmp_path: Path) -> None:
    write_record(make_record(trial_id="a"), tmp_path / "s1" / "records")
    write_record(make_record(trial_id="b"), tmp_path / "s2" / "records")
    (tmp_path / "s1" / "manifest.json").write_text(json.dumps({"format": "facetlab.sweep/1"}))
    # The runner's response cache inside a sweep folder holds other JSON: not records.
    cache = tmp_path / "s1" / "cache" / "ab"
    cache.mkdir(parents=True)
    (cache / "abcd.json").write_text(json.dumps({"key": "abcd", "text": "F1: 10"}))
    (tmp_path / "s2" / "records" / ".t.json.123.tmp").write_text("{half")
    assert [r.trial_id for r in read_records(tmp_path)] == ["a", "b"]
    df = load_trials(records=tmp_path, sources=["facetlab"])
    assert len(df) == 2 and df.attrs["unreadable"] == []


def test_read_record_errors_name_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"trial_id": "x",')
    with pytest.raises(RecordError, match=r"bad\.json: invalid JSON at line 1 column"):
        read_record(bad)
    data = json.loads(make_record().model_dump_json())
    data["n_factors"] = "five"
    bad.write_text(json.dumps(data))
    with pytest.raises(RecordError, match=r"bad\.json: not a valid facetlab record: /n_factors"):
        read_record(bad)
    data["format"] = "something/2"
    bad.write_text(json.dumps(data))
    with pytest.raises(RecordError, match="/format"):
        read_record(bad)
    with pytest.raises(RecordError, match="no such record"):
        read_records(tmp_path / "missing")


def test_own_records_in_the_table(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    write_record(make_record(), folder)
    write_record(
        make_record(
            trial_id="t-0002",
            probe="c2",
            instance_id="facet-neg-0002-c2-f4",
            base_instance_id="facet-neg-0002",
            variant="c2",
            factor_of_interest="f4",
            started_at="2026-05-01T08:00:05Z",
        ),
        folder,
    )
    write_record(
        make_record(
            trial_id="t-0003",
            status="failed",
            error="HTTP 500",
            raw_response=None,
            parsed={},
            parse_status="not_parsed",
            started_at="2026-05-01T08:00:09Z",
        ),
        folder,
    )
    write_record(make_record(trial_id="t-0004", model="openai/gpt-4o", model_id="gpt-4o"), folder)
    df = load_trials(records=folder, sources=["facetlab"])
    assert len(df) == 4
    assert set(df.source) == {"facetlab"}
    assert df.source_file.map(lambda s: Path(s).is_absolute()).all()
    by_id = df.set_index(df.source_file.map(lambda s: Path(s).stem))

    p2 = by_id.loc["t-0001"]
    assert (p2.probe, p2.canonical_model, p2.lab, p2.weights_access) == (
        "P2",
        "Claude Opus 4.6",
        "Anthropic",
        "closed",
    )
    assert p2.excluded_reason is None
    assert p2.foi_weight == 5.0 and p2.weight_sum == 100.0
    assert p2.case.startswith("Barker v. Lull Engineering")  # what the instance file names
    assert p2.timestamp == pd.Timestamp("2026-05-01 08:00:00")  # +02:00 → UTC-naive
    assert p2.answer == "no" and p2.elapsed_sec == 3.0

    c2 = by_id.loc["t-0002"]
    assert (c2.probe, c2.instance_id, c2.raw_instance_id) == (
        "C2",
        "facet-neg-0002",
        "facet-neg-0002-c2-f4",
    )
    assert c2.factor_of_interest == "F4" and c2.foi_weight == 20.0

    failed = by_id.loc["t-0003"]
    assert bool(failed.failed)
    assert failed.excluded_reason == "failed run: HTTP 500"
    assert failed.trial == 1  # same cell as t-0001, later timestamp

    # a model outside the paper's table is still a usable trial, named by its model string
    other = by_id.loc["t-0004"]
    assert other.canonical_model == "openai/gpt-4o"
    assert other.excluded_reason is None


def test_own_records_use_instance_ground_truth(tmp_path: Path, facet_data: Path) -> None:
    write_record(make_record(), tmp_path / "r")
    df = load_trials(facet_data, records=tmp_path / "r", sources=["facetlab"])
    row = df.iloc[0]
    assert row.ground_truth == "no"
    assert row.correct is True or bool(row.correct)


def test_record_may_carry_its_own_ground_truth(tmp_path: Path) -> None:
    write_record(make_record(instance_id="new-domain-1", ground_truth="yes"), tmp_path)
    row = load_trials(records=tmp_path, sources=["facetlab"]).iloc[0]
    assert (row.ground_truth, row.answer, bool(row.correct)) == ("yes", "no", False)


def _mini_mirror(facet_data: Path, root: Path) -> Path:
    """A small data tree: the instances plus a few weighted files (tests only)."""
    shutil.copytree(facet_data / "instances", root / "instances")
    target = root / "results" / "weighted-probe"
    target.mkdir(parents=True)
    for path in sorted((facet_data / "results" / "weighted-probe").glob("facet-neg-cf-002-*.json"))[
        :3
    ]:
        shutil.copy(path, target / path.name)
    return target


@pytest.mark.data
def test_corrupt_file_is_a_flagged_row_and_a_warning(tmp_path: Path, facet_data: Path) -> None:
    target = _mini_mirror(facet_data, tmp_path)
    (target / "zz-broken.json").write_text('{"instance_id": "facet-neg-cf-002", "model": ')
    wrong_type = json.loads(next(iter(sorted(target.glob("facet-neg-*.json")))).read_text())
    wrong_type["n_factors"] = "five"
    (target / "zz-wrong-type.json").write_text(json.dumps(wrong_type))

    with pytest.warns(RecordWarning) as caught:
        df = load_trials(tmp_path)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "zz-broken.json: invalid JSON at line" in messages[0]
    assert "zz-wrong-type.json:/n_factors: expected an integer, got 'five'" in messages[1]
    assert len(df) == 5
    bad = df[df.parse_status == "unreadable"]
    assert sorted(bad.source_file) == [
        "results/weighted-probe/zz-broken.json",
        "results/weighted-probe/zz-wrong-type.json",
    ]
    assert bad.failed.all()
    assert bad.excluded_reason.str.startswith("unreadable file: ").all()
    assert "at line 1 column" in bad.excluded_reason.iloc[0]
    assert ":/n_factors: expected an integer" in bad.excluded_reason.iloc[1]
    assert [f for f, _ in df.attrs["unreadable"]] == sorted(bad.source_file)
    good = df[df.parse_status != "unreadable"]
    assert len(good) == 3
    # The file-name glob also caught cf-002-adv files: the probe follows the field.
    assert (good.probe == good.instance_id.map(lambda i: "P3" if "-adv" in i else "P2")).all()

    with pytest.raises(RecordError, match=r"zz-broken\.json: invalid JSON at line"):
        load_trials(tmp_path, on_error="raise")


@pytest.mark.data
def test_corrupt_own_record_in_a_sweep(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    write_record(make_record(), folder)
    (folder / "t-0002.json").write_text("{not json")
    with pytest.warns(RecordWarning, match="t-0002.json"):
        df = load_trials(records=folder, sources=["facetlab"])
    assert df.parse_status.tolist().count("unreadable") == 1
    assert len(df) == 2


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no results/ folder"):
        load_trials(tmp_path)
    with pytest.raises(ConfigError, match="on_error"):
        load_trials(tmp_path, on_error="ignore")  # type: ignore[arg-type]


def test_empty_records_folder_gives_an_empty_table(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    df = load_trials(records=tmp_path / "r", sources=["facetlab"])
    assert df.empty
    assert "trial" in df.columns


@pytest.mark.slow
@pytest.mark.data
def test_default_data_dir_comes_from_facetlab_datasets(
    tmp_path: Path, facet_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACETLAB_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    df = load_trials(sources=["c2"])
    assert len(df) == 144

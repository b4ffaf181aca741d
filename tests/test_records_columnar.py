"""Record shards (crash-safe tail, index), Parquet compaction, and loading either."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from reliability_helpers import cli

from facetlab.errors import ConfigError, RecordError, RecordWarning
from facetlab.probes.base import Parsed
from facetlab.records import COLUMNS, load_trials, write_record
from facetlab.records.compaction import compact
from facetlab.records.schema import TrialRecord
from facetlab.records.shards import ShardWriter, shard_files, shard_statuses
from facetlab.records.store import part_files, read_sweep_records, sweep_statuses


def _record(i: int, *, status: str = "ok", model: str = "simulated/wadd") -> TrialRecord:
    return TrialRecord(
        trial_id=f"p2.case-{i:04d}.r0.{i:012x}",
        probe="p2",
        instance_id=f"case-{i:04d}",
        factor_of_interest="F1",
        n_factors=3,
        model=model,
        provider="simulated",
        model_id="wadd",
        backend="simulated",
        template="facet-v3",
        prompt=f"prompt {i}",
        prompt_sha256="0" * 64,
        status=status,  # type: ignore[arg-type]
        error=None if status == "ok" else "boom",
        raw_response=f"F1: {i % 90}\nF2: 5\nF3: {95 - i % 90}\nyes" if status == "ok" else None,
        parsed=Parsed(weights={"F1": float(i % 90), "F2": 5.0, "F3": float(95 - i % 90)},
                      weight_sum=100.0, answer="yes")
        if status == "ok" else Parsed(),
        parse_status="ok" if status == "ok" else "not_parsed",
        ground_truth="yes",
        started_at=f"2026-01-01T00:00:{i % 60:02d}Z",
        finished_at="2026-01-01T00:01:00Z",
        latency_s=0.5,
        facetlab_version="0.1.0",
    )  # fmt: skip


def _shard(folder: Path, records: list[TrialRecord], groups: int = 2) -> Path:
    writer = ShardWriter(folder)
    step = max(1, len(records) // groups)
    for start in range(0, len(records), step):
        writer.append(records[start : start + step])
    writer.close()
    return writer.path


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["source_file"]).sort_values("trial_id").reset_index(drop=True)


def test_torn_tail_is_ignored_with_a_warning(tmp_path: Path) -> None:
    shard = _shard(tmp_path, [_record(i) for i in range(6)])
    # the shard ends with half a record (killed mid-write)
    with open(shard, "ab") as handle:
        handle.write(b'{"format": "facetlab.record/1", "trial_id": "p2.case-9')
    with pytest.warns(RecordWarning, match="torn last line"):
        found = shard_statuses(shard)
    assert sorted(found) == sorted(_record(i).trial_id for i in range(6))
    with pytest.warns(RecordWarning, match="torn last line"):
        assert len(read_sweep_records(tmp_path)) == 6


def test_an_edited_shard_line_leaves_its_trial_to_be_asked_again(tmp_path: Path) -> None:
    from facetlab.records.received import received_digest

    records = [_record(i) for i in range(4)]
    for record in records:  # as from_trial sets it
        record.received_sha256 = received_digest(record)
    shard = _shard(tmp_path, records)
    lines = shard.read_bytes().splitlines(keepends=True)
    edited = json.loads(lines[2])
    edited["ground_truth"] = "no" if edited["ground_truth"] == "yes" else "yes"
    shard.write_bytes(b"".join([*lines[:2], json.dumps(edited).encode() + b"\n", *lines[3:]]))
    with pytest.warns(RecordWarning, match="received_sha256 differs"):
        found = shard_statuses(shard)
    assert sorted(found) == sorted(_record(i).trial_id for i in (0, 1, 3))


def test_later_records_win_files_then_parts_then_shards(tmp_path: Path) -> None:
    write_record(_record(1, status="failed"), tmp_path)
    assert sweep_statuses(tmp_path) == {_record(1).trial_id: "failed"}
    _shard(tmp_path, [_record(1), _record(2, status="failed")])
    statuses = sweep_statuses(tmp_path)
    assert statuses[_record(1).trial_id] == "ok"
    _shard(tmp_path, [_record(2)])  # a second shard, later: the retry
    assert set(sweep_statuses(tmp_path).values()) == {"ok"}
    records = read_sweep_records(tmp_path)
    assert [r.status for r in records] == ["ok", "ok"]


def test_compaction_keeps_every_record_and_the_table_is_the_same(tmp_path: Path) -> None:
    records = tmp_path / "sweep" / "records"
    for i in range(5):  # an old one-file-per-trial sweep ...
        write_record(_record(i), records)
    _shard(records, [_record(i) for i in range(5, 40)] + [_record(41, status="failed")])
    (records / "notes.json").write_text('{"format": "facetlab.summary/1"}')  # another artifact
    (records / "broken.json").write_text('{"format": "facetlab.record/1", "trial_id": 3')
    with pytest.warns(RecordWarning):
        before = load_trials(records=tmp_path / "sweep")
    done = compact(tmp_path / "sweep")
    assert done.records == 41 and done.part is not None and len(done.problems) == 1
    assert not shard_files(records) and (records / "notes.json").exists()
    assert (records / "broken.json").exists()  # not a record: left where it is, reported
    assert sorted(p.name for p in records.glob("*.json")) == ["broken.json", "notes.json"]
    with pytest.warns(RecordWarning):
        after = load_trials(records=tmp_path / "sweep")
    pd.testing.assert_frame_equal(_comparable(before), _comparable(after))
    assert len(after) == 42  # 41 records and the unreadable file's row
    (records / "broken.json").unlink()  # read_records refuses it, as it always did
    full = {r.trial_id: r for r in read_sweep_records(records)}
    assert full[_record(7).trial_id] == _record(7)  # the part keeps the whole record


def test_compaction_reads_shards_with_the_store_reader_bad_lines_reported_tail_ignored(
    tmp_path: Path,
) -> None:
    from facetlab.records.own import serialize_record
    from facetlab.records.store import iter_shard_records

    shard = _shard(tmp_path, [_record(i) for i in range(3)])
    with open(shard, "ab") as handle:
        bad_json = handle.tell()
        handle.write(b"not json\n")
        not_record = handle.tell()
        handle.write(b'{"format": "facetlab.summary/1"}\n')
        handle.write(serialize_record(_record(3)).encode() + b"\n")  # good after bad
        handle.write(b'{"format": "facetlab.record/1", "trial_id": "p2.case-9')  # torn tail
    with pytest.raises(RecordError, match=f":{bad_json}: not a JSON record line"):
        list(iter_shard_records(shard))  # without on_problem, the first bad line raises
    with pytest.warns(RecordWarning, match="torn last line"):
        done = compact(tmp_path)
    assert done.records == 4 and not shard_files(tmp_path)
    assert [where for where, _ in done.problems] == [
        f"{shard}:{bad_json}",
        f"{shard}:{not_record}",
    ]
    assert "not a JSON record line" in done.problems[0][1]
    assert "not a record format" in done.problems[1][1]
    assert sorted(r.trial_id for r in read_sweep_records(tmp_path)) == sorted(
        _record(i).trial_id for i in range(4)
    )


def test_columns_are_selectable_and_text_is_read_only_when_asked(tmp_path: Path) -> None:
    _shard(tmp_path, [_record(i) for i in range(10)])
    compact(tmp_path)
    light = load_trials(records=tmp_path, columns=["trial_id", "foi_weight", "correct"])
    assert list(light.columns) == ["trial_id", "foi_weight", "correct"]
    assert light["foi_weight"].tolist() == [float(i) for i in range(10)]
    assert light["correct"].tolist() == [True] * 10
    text = load_trials(records=tmp_path, columns=["trial_id", "prompt"])
    assert sorted(text["prompt"]) == sorted(f"prompt {i}" for i in range(10))
    with pytest.raises(ConfigError, match="unknown column"):
        load_trials(records=tmp_path, columns=["nope"])


@pytest.mark.slow
def test_any_selection_gives_the_full_tables_values(tmp_path: Path, facet_data: Path) -> None:
    # FACET instances, no ground truth nor base instance in the records: the instance
    # files complete them (case, base_instance_id, ground_truth, correct)
    ids = ["facet-neg-cf-001", "facet-neg-cf-001-adv", "facet-neg-0002"]
    records = [
        _record(i).model_copy(
            update={
                "instance_id": ids[i % 3],
                "ground_truth": "no" if i % 4 == 1 else None,  # a record's own wins
                "base_instance_id": "facet-neg-0009" if i % 4 == 2 else None,
            }
        )
        for i in range(12)
    ]
    _shard(tmp_path, records[:9])
    compact(tmp_path)
    _shard(tmp_path, records[9:])  # a part and a shard
    full = load_trials(facet_data, records=tmp_path)
    assert full["case"].notna().all() and full["ground_truth"].notna().all()
    assert full["base_instance_id"].value_counts()["facet-neg-0009"] == 3
    assert (full["base_instance_id"] != full["instance_id"]).sum() == 9
    assert full["ground_truth"].value_counts()["no"] >= 3
    for column in COLUMNS:
        one = load_trials(facet_data, records=tmp_path, columns=["trial_id", column])
        assert list(one.columns) == ["trial_id", *([column] if column != "trial_id" else [])]
        pd.testing.assert_series_equal(one[column], full[column], obj=column)


def test_a_part_of_another_format_is_refused_naming_it(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"trial_id": ["t"]}).replace_schema_metadata({"format": "facetlab.trials/2"})
    pq.write_table(table, tmp_path / "trials-x.parquet")
    with pytest.raises(RecordError, match=r"'facetlab\.trials/2', not a trials table"):
        load_trials(records=tmp_path, on_error="raise")
    with pytest.warns(RecordWarning):
        df = load_trials(records=tmp_path)
    assert df["parse_status"].tolist() == ["unreadable"]


def test_duplicates_across_folders_are_read_once_with_a_warning(tmp_path: Path) -> None:
    for name in ("a", "b"):
        _shard(tmp_path / name, [_record(i) for i in range(3)])
    compact(tmp_path / "a")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = load_trials(records=[tmp_path / "a", tmp_path / "b"])
    assert len(df) == 3 and len(df.attrs["duplicates"]) == 3
    assert any("duplicate" in str(w.message) for w in caught)


def test_design_checks_hold_for_parts(tmp_path: Path) -> None:
    other = _record(5).model_copy(update={"template": "facetlab-v1", "trial_id": "other"})
    _shard(tmp_path, [_record(1), other])
    compact(tmp_path)
    with pytest.raises(RecordError, match="2 designs"):
        load_trials(records=tmp_path)


def test_cli_compacts_and_says_so(tmp_path: Path) -> None:
    for i in range(3):
        write_record(_record(i), tmp_path / "s" / "records")
    result = cli("records", "compact", str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    assert "3 record(s) compacted" in result.output
    assert len(part_files(tmp_path / "s" / "records")) == 1
    again = cli("records", "compact", str(tmp_path / "s"))
    assert "nothing to compact" in again.output
    missing = cli("records", "compact", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "no such sweep" in missing.output
    assert json.loads(json.dumps(sweep_statuses(tmp_path / "s" / "records")))  # readable


def test_a_trial_run_again_is_its_later_record_after_compaction(tmp_path: Path) -> None:
    write_record(_record(1, status="failed"), tmp_path)
    _shard(tmp_path, [_record(2, status="failed"), _record(3)])
    _shard(tmp_path, [_record(2)])  # the retry, later
    compact(tmp_path)
    assert sweep_statuses(tmp_path) == {
        _record(1).trial_id: "failed",
        _record(2).trial_id: "ok",
        _record(3).trial_id: "ok",
    }
    df = load_trials(records=tmp_path)
    assert sorted(df["failed"].tolist()) == [False, False, True]
    assert df.attrs["duplicates"] == []  # a retry is a replacement, not a duplicate
    assert [r.status for r in read_sweep_records(tmp_path)] == ["failed", "ok", "ok"]


def test_a_missing_weight_is_a_null_in_the_part_not_nan(tmp_path: Path) -> None:
    """P1 names a factor and reports no weight: its foi_weight is null in Parquet (a NaN
    would read as a number in every tool that takes Parquet), and loads back as NaN."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    p1 = _record(1).model_copy(
        update={"probe": "p1", "parsed": Parsed(label="F2"), "raw_response": "F2"}
    )
    records = tmp_path / "sweep" / "records"
    for record in (p1, _record(2), _record(3, status="failed")):
        write_record(record, records)
    done = compact(tmp_path / "sweep")
    assert done.part is not None
    weight = pq.read_table(done.part, columns=["probe", "foi_weight"]).column("foi_weight")
    assert weight.null_count == 2  # the P1 reply and the failed trial
    assert not pc.any(pc.is_nan(weight.drop_null())).as_py()
    loaded = load_trials(records=tmp_path / "sweep").set_index("probe")
    assert pd.isna(loaded.at["P1", "foi_weight"])


def test_a_part_compacted_before_the_structured_column_still_loads(tmp_path: Path) -> None:
    """A column added to the table (``structured``, issue 27) is absent from parts compacted
    before it: they load, the column missing (None), every other column as it was."""
    import pyarrow.parquet as pq

    records = tmp_path / "sweep" / "records"
    for i in range(3):
        write_record(_record(i), records)
    done = compact(tmp_path / "sweep")
    assert done.part is not None
    now = load_trials(records=tmp_path / "sweep")
    assert now["structured"].tolist() == [False] * 3
    table = pq.read_table(done.part)
    # as an older version wrote it: no structured column and no row digest
    pq.write_table(table.drop_columns(["structured", "row_sha256"]), done.part)
    before = load_trials(records=tmp_path / "sweep")
    assert before["structured"].isna().all()
    pd.testing.assert_frame_equal(before.drop(columns="structured"), now.drop(columns="structured"))


def test_a_compacted_part_proves_its_rows_by_its_data_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    from facetlab.records import compaction, store

    monkeypatch.setattr(compaction, "ROWS_PER_GROUP", 7)  # several row groups
    _shard(tmp_path, [_record(i) for i in range(40)], groups=3)
    done = compact(tmp_path)
    assert done.part is not None and pq.ParquetFile(done.part).metadata.num_row_groups == 6
    stored = pq.ParquetFile(done.part).metadata.metadata[store.DATA_DIGEST].decode()
    assert stored == store.data_sha256(done.part)  # the digest of its rows' bytes
    checked: list[Any] = []
    monkeypatch.setattr(store, "_row_problem", lambda values: checked.append(values))
    assert store.edited_part_rows(done.part) == {} and checked == []  # no row read one by one
    assert len(sweep_statuses(tmp_path)) == 40


_RESUME = """
import io, sys
from facetlab.runner import run
from facetlab.runner.options import RunOptions
result = run(None, "p1", "simulated/wadd", out=sys.argv[1], repeats=2, progress="none",
             console=io.StringIO(), options=RunOptions(records="shards"))
print(result.stats.ok, result.stats.already_done, "pandas" in sys.modules)
"""


def test_a_sharded_sweep_is_compacted_and_its_resume_has_nothing_to_compact(
    tmp_path: Path, facet_data: Path
) -> None:
    import subprocess
    import sys

    def run_once() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", _RESUME, str(tmp_path / "sweep")],
            capture_output=True, text=True, check=True, timeout=300,
        )  # fmt: skip
        return done.stdout.split()

    first = run_once()
    records = tmp_path / "sweep" / "records"
    assert first[0] != "0" and first[1] == "0"  # trials run, in shards, then compacted
    assert not shard_files(records) and len(part_files(records)) == 1
    again = run_once()
    assert again == ["0", first[0], "False"]  # all recorded: no compaction, pandas unread
    assert len(part_files(records)) == 1

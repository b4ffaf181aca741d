"""Issue 39.1: the digest covers the whole record. Any field edited by hand in any record
of an offline sweep (P3, C2 and H1 with thinking) is named on loading and excluded; a
resume names it too, asks its trial again and stores the fresh answer. Nothing is lost
(every trial stays a row) and nothing is paid (simulated reasoners are free)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_helpers import cli

from facetlab.errors import RecordWarning
from facetlab.jsonio import DIGEST_EXCLUDED
from facetlab.records import load_trials
from facetlab.records.compaction import compact

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODEL = "simulated/wadd+canonical+hint-thinks+trace"
RUN = ("run", "-i", str(ROOT / "instances"), "-p", "p3,c2,h1", "-m", MODEL, "-k", "1", "--quiet")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("digest") / "s"
    result = cli(*RUN, "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def _copy(sweep: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(sweep, target)
    return target


def _load(folder: Path) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = load_trials(records=folder)
    return frame, [str(w.message) for w in caught if issubclass(w.category, RecordWarning)]


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path]


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return {"yes": "no", "no": "yes"}.get(value, value + "x")
    return "x"  # None


def _edit(path: Path, where: tuple[Any, ...]) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    holder = data
    for step in where[:-1]:
        holder = holder[step]
    holder[where[-1]] = _changed(holder[where[-1]])
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(data["trial_id"])


def test_the_four_fields_the_tables_read_are_named_excluded_and_asked_again(
    sweep: Path, tmp_path: Path
) -> None:
    folder = _copy(sweep, tmp_path / "copy")
    files = sorted((folder / "records").glob("*.json"))
    c2 = [p for p in files if p.name.startswith("c2.")]
    edits = {
        ("ground_truth",): c2[0],
        ("factor_of_interest",): next(p for p in files if p.name.startswith("p3.")),
        ("model",): c2[1],
        ("thinking",): next(
            p for p in files if p.name.startswith("h1.") and json.loads(p.read_text())["thinking"]
        ),
    }
    edited = {_edit(path, where) for where, path in edits.items()}
    assert len(edited) == 4
    frame, said = _load(folder)
    assert len(frame) == len(files)  # nothing lost: every trial is a row
    excluded = set(frame.loc[frame["excluded_reason"].notna(), "trial_id"])
    assert excluded == edited
    (line,) = [s for s in said if "do not match" in s]
    assert all(tid in line for tid in edited) and "\n" not in line

    again = cli(*RUN, "--out", str(folder))
    assert again.exit_code == 0, again.output
    assert f"{len(files) - 4} already recorded" in again.output
    assert sum("skipped on resume" in str(w) for w in again.output.splitlines()) <= 4
    frame, said = _load(folder)
    assert frame["excluded_reason"].isna().all() and len(frame) == len(files)
    assert not [s for s in said if "do not match" in s]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_any_field_edited_anywhere_is_named_and_excluded(
    sweep: Path, tmp_path: Path, data: st.DataObject
) -> None:
    folder = _copy(sweep, tmp_path / "any")
    files = sorted((folder / "records").glob("*.json"))
    path = data.draw(st.sampled_from(files))
    record = json.loads(path.read_text(encoding="utf-8"))
    leaves = [p for p in _leaves(record) if p[0] not in (*DIGEST_EXCLUDED, "trial_id", "format")]
    where = data.draw(st.sampled_from(leaves))
    tid = _edit(path, where)
    frame, said = _load(folder)
    assert len(frame) == len(files)  # an edited record stays a row: excluded, never used
    row = frame[frame["source_file"] == str(path.resolve())].iloc[0]
    assert row["excluded_reason"] is not None
    assert any(tid in s or str(path.resolve()) in s for s in said), (where, said)


def test_a_record_edited_inside_a_compacted_part_is_named_and_excluded(
    sweep: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = _copy(sweep, tmp_path / "part")
    n = len(list((folder / "records").glob("*.json")))  # P3 + C2 + H1 (one per hint kind)
    done = compact(folder)
    assert done.part is not None and done.records == n
    table = pq.read_table(done.part)
    rows = table.to_pylist()
    target = next(i for i, r in enumerate(rows) if r["probe"] == "P3")
    weights = json.loads(rows[target]["weights"])
    weights[rows[target]["factor_of_interest"]] = 99.0
    column = table.column("weights").to_pylist()
    column[target] = json.dumps(weights)
    index = table.schema.get_field_index("weights")
    pq.write_table(table.set_column(index, "weights", pa.array(column, pa.string())), done.part)

    frame, said = _load(folder)
    assert len(frame) == n
    bad = frame[frame["excluded_reason"].notna()]
    assert list(bad["trial_id"]) == [rows[target]["trial_id"]]
    assert any(rows[target]["trial_id"] in s for s in said)
    assert 99.0 not in set(frame.loc[frame["excluded_reason"].isna(), "foi_weight"])

    again = cli(*RUN, "--out", str(folder))  # resume: the edited trial is asked again
    assert again.exit_code == 0, again.output
    assert f"{n - 1} already recorded" in again.output


def test_a_record_edited_in_the_record_column_of_a_part_is_named(
    sweep: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = _copy(sweep, tmp_path / "partrec")
    done = compact(folder)
    assert done.part is not None
    table = pq.read_table(done.part)
    records = table.column("record").to_pylist()
    record = json.loads(records[0])
    record["ground_truth"] = "no" if record["ground_truth"] == "yes" else "yes"
    records[0] = json.dumps(record)
    index = table.schema.get_field_index("record")
    pq.write_table(table.set_column(index, "record", pa.array(records, pa.string())), done.part)
    frame, said = _load(folder)
    assert frame.loc[frame["trial_id"] == record["trial_id"], "excluded_reason"].notna().all()
    assert any(record["trial_id"] in s for s in said)

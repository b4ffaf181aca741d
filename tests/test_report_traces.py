"""The traces and hint sections read the records' texts one at a time, from where the study read
each trial (record files, shards, Parquet parts), and nothing at all when no record has any."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import facetlab.report.hints as report_hints
from facetlab.analysis.rules import usable
from facetlab.analysis.traces import trace_table, trace_trials
from facetlab.records import read_sweep_records
from facetlab.records.compaction import compact
from facetlab.records.shards import ShardWriter
from facetlab.report import Study
from facetlab.report.hints import hint_section, trace_section
from facetlab.runner import run
from facetlab.runner.options import RunOptions

EXAMPLE = Path(__file__).resolve().parents[1] / "instances"
MODELS = ["simulated/wadd+trace", "simulated/wadd+trace?trace_focus=3"]


def _sweep(out: Path, instances: Path, probes: str, models: list[str]) -> Path:
    run(instances, probes, models, out=out, progress="none", console=io.StringIO(),
        options=RunOptions(records="files"))  # fmt: skip
    return out


def _as_shards(files: Path, out: Path) -> Path:
    """The records of a sweep of record files, written again as two shards of ``out``."""
    records = read_sweep_records(files / "records")
    (out / "records").mkdir(parents=True)
    for half in (records[::2], records[1::2]):
        writer = ShardWriter(out / "records")
        writer.append(half)
        writer.close()
    return out


def _reference(study: Study, folder: Path) -> pd.DataFrame:
    """The traces table from every full record held at once (the old way)."""
    thinking = [(r.trial_id, r.thinking) for r in read_sweep_records(folder / "records")]
    return trace_table(trace_trials(usable(study.trials), thinking))


@pytest.mark.slow
def test_the_traces_table_is_the_same_from_files_shards_and_parts(
    facet_data: Path, tmp_path: Path
) -> None:
    instances = facet_data / "instances"
    files = _sweep(tmp_path / "files", instances, "anchor,c2", MODELS)
    shards = _as_shards(files, tmp_path / "shards")
    tables = {}
    for name, folder in (("files", files), ("shards", shards)):
        study = Study.load(instances, [folder])
        section = trace_section(study)
        assert section.table is not None, section.reason
        tables[name] = section.table
        pd.testing.assert_frame_equal(section.table, _reference(study, folder))
    compact(shards / "records")
    assert list((shards / "records").glob("trials-*.parquet"))
    assert not list((shards / "records").glob("shard-*"))
    section = trace_section(Study.load(instances, [shards]))
    assert section.table is not None, section.reason
    tables["parts"] = section.table
    pd.testing.assert_frame_equal(tables["files"], tables["shards"])
    pd.testing.assert_frame_equal(tables["files"], tables["parts"])
    assert set(tables["files"]["model"]) == set(MODELS)


@pytest.mark.slow
def test_no_record_is_parsed_when_none_has_thinking_text(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instances = facet_data / "instances"
    files = _sweep(tmp_path / "files", instances, "anchor,c2", ["simulated/wadd"])
    shards = _as_shards(files, tmp_path / "shards")
    parts = tmp_path / "parts"
    shutil.copytree(shards, parts)
    compact(parts / "records")
    studies = [Study.load(instances, [f]) for f in (files, shards, parts)]

    def parsed(text: Any, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a record without thinking text was parsed")

    monkeypatch.setattr(report_hints.json, "loads", parsed)
    for study in studies:
        section = trace_section(study)
        assert section.table is None
        assert section.reason == "no weighted trial (P2, P3, anchor, C2) returned thinking text"
    monkeypatch.setattr(report_hints.json, "loads", json.loads)


@pytest.mark.slow
def test_the_hint_section_reads_h1_records_as_a_stream_from_shards(tmp_path: Path) -> None:
    files = _sweep(tmp_path / "files", EXAMPLE, "h1,p1", ["simulated/hint-thinks"])
    shards = _as_shards(files, tmp_path / "shards")
    read: list[str] = []
    real = report_hints.record_from_object

    def counted(data: Any, shown: str) -> Any:
        read.append(data["probe"])
        return real(data, shown)

    tables = []
    for folder in (files, shards):
        study = Study.load(EXAMPLE, [folder])
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(report_hints, "record_from_object", counted)
            section = hint_section(study)
        assert section.table is not None, section.reason
        tables.append(section.table)
        n_h1 = int((usable(study.trials)["probe"] == "H1").sum())
        assert read == ["h1"] * n_h1  # every kept H1 record once, no P1 record built
        read.clear()
    pd.testing.assert_frame_equal(tables[0], tables[1])

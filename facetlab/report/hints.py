"""The hint and trace sections of a study: ``tables/hint.csv`` and ``traces.csv``.

Both read the study's own records (their reply and thinking texts; the study table
keeps no text), only the trials the study kept (usable, not stale, the models asked
for), and name models as the study does.

>>> section = hint_section(Study.load("instances", ["results/h1"]))  # doctest: +SKIP
>>> section.table[["model", "hint_kind", "excess_switch_rate"]]      # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from facetlab.analysis.hints import hint_table, hint_trials
from facetlab.analysis.rules import usable
from facetlab.analysis.traces import trace_table, trace_trials
from facetlab.errors import DataError, RecordError
from facetlab.probes.hint import load_hints
from facetlab.records import TrialRecord
from facetlab.records.own import record_from_object
from facetlab.records.shards import SHARD_SUFFIX, iter_shard_lines
from facetlab.report.study import Section, Study

__all__ = ["JUDGE_CACHE", "hint_section", "trace_section"]

JUDGE_CACHE = "judge-cache"
"""The folder of a report's ``--out`` where the judge's answers are kept (a rerun is free)."""


def _kept(study: Study, probes: tuple[str, ...]) -> pd.DataFrame:
    """The study's kept trials of ``probes``: usable, of the models asked for."""
    kept = usable(study.trials)
    kept = kept[kept["probe"].isin(probes)]
    if study.models is not None:
        kept = kept[kept["model"].isin(study.models)]
    if kept.empty:
        raise DataError(f"no {'/'.join(probes)} trials in these records")
    return kept


def _lines(source: Path, wanted: set[str]) -> Iterator[str]:
    """The record texts of one place a study read: a part's ``record`` column (rows of
    ``wanted`` trials only, a thousand at a time), a shard's lines, or a record file."""
    if source.suffix == ".parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(source).iter_batches(1000, columns=["trial_id", "record"]):
            rows = zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True)
            yield from (text for tid, text in rows if tid in wanted)
    elif source.suffix == SHARD_SUFFIX:
        yield from (line.decode() for _, line in iter_shard_lines(source))
    else:
        yield source.read_text(encoding="utf-8")


def _stored(kept: pd.DataFrame, field: str) -> Iterator[dict[str, Any]]:
    """The stored record (its JSON object) of each ``kept`` trial, one at a time, from the
    place the study read it (its ``source_file``); never a list of them.

    A record whose ``field`` is null is skipped unparsed: JSON with ``"field": null`` and no
    other ``"field"`` key (a quote inside a string is escaped) has none, so a section
    whose text no record holds costs a scan, not a parse. A trial is given once, its ``ok``
    record (an earlier failed run of it in the same shard is not the one the study kept)."""
    key = f'"{field}"'
    null = re.compile(rf"{key}\s*:\s*null\b")
    seen: set[str] = set()
    for source, ids in kept.groupby("source_file", sort=True)["trial_id"]:
        wanted = set(ids)
        for text in _lines(Path(str(source)), wanted):
            if text.count(key) == 1 and null.search(text):
                continue
            try:
                data = json.loads(text)
            except ValueError as exc:  # changed since the study read it
                raise RecordError(f"{source}: a record is no longer JSON ({exc})") from exc
            tid = data.get("trial_id")
            if tid in wanted and tid not in seen and data.get("status") == "ok":
                seen.add(tid)
                yield data


def _records(study: Study, probes: tuple[str, ...]) -> tuple[Iterator[TrialRecord], dict[str, str]]:
    """The study's kept records of ``probes``, read one at a time as the iterator is used,
    and each record's model as the study names it (filled in as they are read)."""
    kept = _kept(study, probes)
    names = dict(zip(kept["trial_id"], kept["model"].astype(str), strict=True))
    models: dict[str, str] = {}

    def read() -> Iterator[TrialRecord]:
        for data in _stored(kept, "hint_kind"):  # an H1 record always names its hint kind
            record = record_from_object(data, f"record {data['trial_id']}")
            models[record.model] = names[record.trial_id]
            yield record

    return read(), models


def hint_section(
    study: Study, *, judge: str | None = None, judge_cache: Path | str | None = None
) -> Section:
    """The ``hint`` table (:func:`facetlab.analysis.hints.hint_table`), or why there is none;
    ``judge`` (a model string) judges the switched replies instead of the rule."""
    try:
        records, models = _records(study, ("H1",))
        hints = load_hints(study.instances_dir)
        trials = hint_trials(records, study.instances, hints, judge=judge, judge_cache=judge_cache)
        return Section("hint", hint_table(trials.assign(model=trials["model"].map(models))))
    except (DataError, RecordError) as exc:
        return Section("hint", None, str(exc))


def trace_section(study: Study) -> Section:
    """The ``traces`` table (:func:`facetlab.analysis.traces.trace_table`), or why there is
    none; of the records only their thinking text is read, one at a time."""
    try:
        kept = _kept(study, ("P2", "P3", "anchor", "C2"))
        thinking = ((d["trial_id"], d.get("thinking")) for d in _stored(kept, "thinking"))
        return Section("traces", trace_table(trace_trials(kept, thinking)))
    except (DataError, RecordError) as exc:
        return Section("traces", None, str(exc))

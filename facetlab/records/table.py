"""``load_trials``: every trial, FACET v3 raw files and facetlab records, in one table.

One row is one trial (one model reply to one prompt). Failed and unparseable
runs are rows too, flagged by ``failed``, ``parse_status`` and
``excluded_reason``; nothing is dropped. An analysis of the paper's runs keeps
``excluded_reason.isna()`` rows. See ``docs/records.md`` for every column.

>>> df = load_trials("../shared/facet-data")                      # doctest: +SKIP
>>> df.query("probe == 'P2' and not failed").groupby("canonical_model").foi_weight.mean()
...                                                                # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from facetlab.datasets.conventions import exclusion_reason
from facetlab.errors import ConfigError, DataError, RecordError
from facetlab.models import ModelInfo, canonical_model, model_by_name
from facetlab.probes.parsing import SUM_TOLERANCE
from facetlab.records.facet_v3 import (
    InstanceInfo,
    load_instance_index,
    read_c2_file,
    read_json_object,
    read_pilot_file,
    read_weighted_file,
    truth_columns,
    utc_naive,
)
from facetlab.records.own import (
    RecordWarning,
    is_other_artifact,
    iter_record_files,
    record_from_object,
)
from facetlab.records.received import EDITED, check_received
from facetlab.records.schema import TrialRecord
from facetlab.records.shards import SHARD_SUFFIX, shard_files
from facetlab.records.store import (
    PART_FORMAT,
    edited_part_rows,
    iter_shard_records,
    part_files,
    settled,
)

if TYPE_CHECKING:
    from facetlab.instances import Instance

__all__ = ["COLUMNS", "SOURCES", "TEXT_COLUMNS", "RecordWarning", "load_trials"]

SOURCES: tuple[str, ...] = ("pilot", "weighted", "c2", "facetlab")

COLUMNS: tuple[str, ...] = (
    "source",
    "source_file",
    "trial_id",
    "probe",
    "instance_id",
    "raw_instance_id",
    "base_instance_id",
    "variant",
    "case",
    "model_id",
    "model",
    "canonical_model",
    "lab",
    "weights_access",
    "excluded_reason",
    "trial",
    "factor_of_interest",
    "foi_weight",
    "foi_weight_raw",
    "weights",
    "weight_sum",
    "off_scale",
    "n_factors",
    "p1_label",
    "answer",
    "ground_truth",
    "truth_source",
    "correct",
    "parse_status",
    "parse_problems",
    "failed",
    "timestamp",
    "cost_usd",
    "elapsed_sec",
    "input_tokens",
    "output_tokens",
    "stop_reason",
    "refusal",
    "backend",
    "design",
    "structured",
    "instance_sha256",
    "perturbation_sha256",
    "prompt",
    "raw_response",
    "direct_probe_response",
    "compliance",
)
"""The table's columns, in order (documented in ``docs/records.md``)."""

TEXT_COLUMNS: tuple[str, ...] = ("prompt", "raw_response", "direct_probe_response")
"""The raw text columns: stored in a compacted part, read from it only when asked for."""

DERIVED_COLUMNS = ("trial", "source_file", "foi_weight_raw", "off_scale")
"""Columns made as the table is loaded, never stored in a part."""

PART_COLUMNS: tuple[str, ...] = (
    *(c for c in COLUMNS if c not in DERIVED_COLUMNS),
    "status",
    "record_base_instance_id",
    "record_ground_truth",
    "record",
)
"""The columns of a compacted Parquet part: the table's (but the derived ones), what the
instance files may complete (``record_*``), and the full record as JSON (``record``)."""


def probe_display(key: str) -> str:
    """The table's name of a probe key: upper case (``"p1"`` -> ``"P1"``), ``anchor`` kept.

    >>> probe_display("c2"), probe_display("anchor")
    ('C2', 'anchor')
    """
    return key if key == "anchor" else key.upper()


_FLOAT_COLUMNS = ("foi_weight", "weight_sum", "cost_usd", "elapsed_sec")
_COUNT_COLUMNS = ("n_factors", "input_tokens", "output_tokens")

WEIGHT_RANGE = (0.0, 100.0)
"""A reported weight outside this range (or not finite) makes the reply malformed."""


def part_schema() -> Any:
    """The ``pyarrow`` schema of a compacted part (:data:`PART_COLUMNS`)."""
    import pyarrow as pa

    def kind(name: str) -> Any:
        if name in _FLOAT_COLUMNS:
            return pa.float64()
        if name in _COUNT_COLUMNS:
            return pa.int64()
        if name in ("correct", "failed", "refusal", "structured"):
            return pa.bool_()
        if name == "timestamp":
            return pa.timestamp("us")
        return pa.string()  # parse_problems, weights and compliance as JSON text

    return pa.schema([pa.field(name, kind(name)) for name in PART_COLUMNS])


def load_trials(
    data_dir: Path | str | None = None,
    *,
    records: Path | str | Iterable[Path | str] | None = None,
    columns: Iterable[str] | None = None,
    sources: Iterable[str] | None = None,
    on_error: Literal["record", "raise"] = "record",
    instances: Path | str | Mapping[str, Instance] | None = None,
    exclude_stale: bool = False,
    mixed_designs: bool = False,
) -> pd.DataFrame:
    """Load FACET v3 raw results and/or facetlab records into one tidy DataFrame.

    Args:
        data_dir: FACET v3 data root (holds ``instances/`` and ``results/``).
            ``None`` uses :func:`facetlab.datasets.data_dir` (fetched and
            verified on first use; honours ``FACETLAB_DATA_MIRROR``) when the FACET
            results are wanted.
        records: facetlab record files or folders (searched recursively). A folder
            given twice, or a record found twice (same ``trial_id``), is read once,
            with a :class:`RecordWarning`.
        sources: some of ``"pilot"``, ``"weighted"``, ``"c2"``, ``"facetlab"``.
            Default: only what is given: ``"facetlab"`` when ``records`` are given,
            else the three FACET families. Ask for both with ``sources=SOURCES``.
        on_error: a file that cannot be read (bad JSON, wrong structure) becomes
            one row with ``parse_status="unreadable"``, ``failed=True`` and the
            reason in ``excluded_reason``, plus a :class:`RecordWarning`
            (``"record"``, the default: one corrupt file in a sweep never hides
            the rest); ``"raise"`` raises :class:`RecordError` instead.
        instances: the instance folder (or loaded instances) the records are to be
            analysed with. Each record's input fingerprints are compared with it
            (:func:`facetlab.records.inputs.check_inputs`): records of instances not
            in it are refused; a record run on content that has changed since is an
            error naming it, or with ``exclude_stale`` excluded and listed in
            ``df.attrs["stale"]``.
        mixed_designs: records of one model run under different designs (prompt
            template or sampling parameters other than the seed) are refused unless
            this is True, so they are never pooled by accident.
        columns: the columns wanted (default: all of :data:`COLUMNS`). From a compacted
            Parquet part only these and the ones the checks need
            (:data:`CHECKED_COLUMNS`) are read: the raw text columns
            (:data:`TEXT_COLUMNS`) only when asked for; every check runs whatever is
            selected.

    Returns:
        One row per trial with the columns :data:`COLUMNS`. ``df.attrs["unreadable"]``
        lists ``(file, message)`` for every file that could not be read;
        ``df.attrs["duplicates"]`` the record files skipped as duplicates;
        ``df.attrs["unfingerprinted"]`` how many records carry no input fingerprints.

    >>> df = load_trials(sources=["c2"])                               # doctest: +SKIP
    >>> len(df)                                                        # doctest: +SKIP
    144
    >>> mine = load_trials(records="results/example-domain", instances="instances")
    >>> sorted(mine["source"].unique()), mine.attrs["stale"]
    (['facetlab'], [])
    """
    if on_error not in ("record", "raise"):
        raise ConfigError(f"on_error must be 'record' or 'raise', got {on_error!r}")
    selected = list(COLUMNS) if columns is None else list(dict.fromkeys(columns))
    if unknown_columns := [c for c in selected if c not in COLUMNS]:
        raise ConfigError(
            f"unknown column(s) {', '.join(unknown_columns)}; the table's columns are in "
            "facetlab.records.COLUMNS"
        )
    read = _part_columns_read(selected if columns is not None else None)
    record_paths = _record_paths(records)
    wanted = _sources(sources, has_records=records is not None)
    needs_data = bool(wanted & {"pilot", "weighted", "c2"})

    # Without FACET results to read, the data root only adds instance facts (optional).
    root = Path(data_dir) if data_dir is not None else _default_data_dir(required=needs_data)
    if needs_data and root is not None and not (root / "results").is_dir():
        raise DataError(
            f"{root}: no results/ folder. Expected the FACET v3 data root holding "
            "instances/ and results/ (see `facetlab data path`)."
        )
    index: dict[str, InstanceInfo] = (
        load_instance_index(root / "instances") if root is not None else {}
    )

    found = _Found(on_error)
    if needs_data and root is not None:
        results = root / "results"
        families = (
            ("pilot", sorted(results.glob("*-real-*.json")), read_pilot_file),
            ("weighted", sorted((results / "weighted-probe").glob("*.json")), read_weighted_file),
            ("c2", sorted((results / "weighted-probe" / "c2").glob("*.json")), read_c2_file),
        )
        for source, files, reader in (family for family in families if family[0] in wanted):
            for path in files:
                shown = path.relative_to(root).as_posix()
                found.take(source, shown, partial(reader, path, shown, index))

    stored: pd.DataFrame | None = None  # records of compacted parts and shards
    if "facetlab" in wanted:
        marks = found.marks()

        def read_own() -> pd.DataFrame | None:
            found.back_to(marks)  # what an attempt overlapping a compaction added
            return _read_own(record_paths, index, read, found)

        stored = settled(
            read_own,
            lambda: {
                p for base in record_paths for kind, p, _ in _store_files(base) if kind == "part"
            },
        )
        if duplicates := found.duplicates:
            warnings.warn(
                f"{len(duplicates)} duplicate record file(s) read once: "
                f"{duplicates[0][0]} ({duplicates[0][1]})"
                + (f" and {len(duplicates) - 1} more" if len(duplicates) > 1 else ""),
                RecordWarning,
                stacklevel=2,
            )

    frame = _frame(found.rows, stored)
    frame.attrs["unreadable"] = found.unreadable
    frame.attrs["duplicates"] = found.duplicates
    _edited_and_undigested(frame, found.undigested)
    if needs_data and root is not None:
        from facetlab.datasets import data_source

        frame.attrs["data_source"] = str(data_source(data_dir))  # which folder: docs/data.md
    if not mixed_designs:
        _one_design_per_model(frame)
    if instances is not None:
        from facetlab.instances import load_instances
        from facetlab.records.inputs import check_inputs

        folder = None if isinstance(instances, Mapping) else Path(instances)
        loaded = load_instances(folder) if folder is not None else dict(instances)  # type: ignore[arg-type]
        frame = check_inputs(frame, loaded, folder, stale="exclude" if exclude_stale else "raise")
    else:
        frame.attrs["stale"] = []
        own = frame["source"] == "facetlab"
        frame.attrs["unfingerprinted"] = int((own & frame["instance_sha256"].isna()).sum())
    if frame.attrs["unfingerprinted"]:
        warnings.warn(
            f"{frame.attrs['unfingerprinted']} record(s) carry no input fingerprints (written "
            "before facetlab recorded them): they load, but cannot be checked against the "
            "instance files",
            RecordWarning,
            stacklevel=2,
        )
    if columns is not None:
        attrs = dict(frame.attrs)
        frame = frame[selected]
        frame.attrs.update(attrs)
    return frame


def _read_own(
    paths: list[Path], index: Mapping[str, InstanceInfo], read: frozenset[str], found: _Found
) -> pd.DataFrame | None:
    """Every record under ``paths`` once (see :func:`load_trials`): the rows of record files
    go to ``found.rows``, the parts and shards are the frame returned."""
    rows, duplicates = found.rows, found.duplicates
    stored = _stored_frame(paths, index, read, found)
    in_store: dict[str, str] | None = None  # trial_id -> folder, built if files need it
    seen_files: set[Path] = set()
    seen_trials: dict[str, str] = {}
    for base in paths:
        for path in iter_record_files(base):
            resolved = path.resolve()
            if resolved in seen_files:
                duplicates.append((str(resolved), "the same file, reached twice"))
                continue
            seen_files.add(resolved)
            shown = str(resolved)
            before = len(rows)
            found.take("facetlab", shown, partial(_own_rows, path, shown, index, found.undigested))
            tid = rows[-1].get("trial_id") if len(rows) > before else None
            if isinstance(tid, str) and stored is not None and len(stored):
                if in_store is None:
                    in_store = dict(zip(stored["trial_id"], stored["_folder"], strict=True))
                if tid in in_store:
                    del rows[before:]
                    if in_store[tid] != str(resolved.parent):  # same folder: superseded
                        duplicates.append((shown, f"trial {tid} already read from a part or shard"))
                    continue
            if isinstance(tid, str):
                if tid in seen_trials:
                    del rows[before:]
                    duplicates.append((shown, f"trial {tid} already read from {seen_trials[tid]}"))
                else:
                    seen_trials[tid] = shown
    return stored


MAX_NAMED = 100
"""At most this many edited records named one by one in the warning (all in ``attrs``)."""


def _edited_and_undigested(frame: pd.DataFrame, undigested: list[str]) -> None:
    """Name the records that do not match their own reply (excluded by :func:`record_row`)
    and say once how many carry no digest: ``attrs["edited"]``, ``attrs["undigested"]``."""
    reasons = frame["excluded_reason"]
    edited = frame[reasons.where(reasons.notna(), "").astype(str).str.startswith(EDITED)]
    frame.attrs["edited"] = list(zip(edited["source_file"], edited["excluded_reason"], strict=True))
    frame.attrs["undigested"] = len(undigested)
    if len(edited):
        named = [
            f"trial {tid} ({shown}: {why.removeprefix(EDITED)})"
            for tid, shown, why in edited[["trial_id", "source_file", "excluded_reason"]]
            .head(MAX_NAMED)
            .itertuples(index=False)
        ]
        more = f"; and {len(edited) - MAX_NAMED} more" if len(edited) > MAX_NAMED else ""
        warnings.warn(
            f"{len(edited)} record(s) do not match what they recorded (edited?), excluded: "
            + "; ".join(named)
            + more,
            RecordWarning,
            stacklevel=3,
        )
    if undigested:
        warnings.warn(
            f"{len(undigested)} record(s) carry no digest of their reply (written before "
            f"facetlab recorded one, e.g. {undigested[0]}): they load, checked by parsing "
            "their reply again where this version's parser wrote them",
            RecordWarning,
            stacklevel=3,
        )


def _one_design_per_model(frame: pd.DataFrame) -> None:
    """Refuse records of one model run under several designs (they would be pooled)."""
    reasons = frame["excluded_reason"].where(frame["excluded_reason"].notna(), "").astype(str)
    edited = reasons.str.startswith(EDITED)  # an edited record is excluded, not a design
    own = frame[(frame["source"] == "facetlab") & frame["design"].notna() & ~edited]
    for model, designs in own.groupby("model", sort=True)["design"]:
        found = sorted(set(designs))
        if len(found) > 1:
            raise RecordError(
                f"records of {model} were run under {len(found)} designs "
                f"({'; '.join(found[:2])}{'; ...' if len(found) > 2 else ''}): they would be "
                "pooled as one model; load one design's sweeps, or pass mixed_designs=True "
                "(facetlab report --mixed-designs)"
            )


# --------------------------------------------------------------------------- inputs


def _record_paths(records: Path | str | Iterable[Path | str] | None) -> list[Path]:
    if records is None:
        return []
    return [Path(records)] if isinstance(records, str | Path) else [Path(r) for r in records]


def _sources(sources: Iterable[str] | None, *, has_records: bool) -> set[str]:
    if sources is None:  # only what was given: the paper's data only when asked
        return {"facetlab"} if has_records else {"pilot", "weighted", "c2"}
    wanted = set([sources] if isinstance(sources, str) else sources)
    unknown = wanted - set(SOURCES)
    if unknown:
        raise ConfigError(
            f"unknown source(s) {', '.join(sorted(unknown))}; choose from {', '.join(SOURCES)}"
        )
    return wanted


def _default_data_dir(*, required: bool = True) -> Path | None:
    """:func:`facetlab.datasets.data_dir` (fetched and verified); ``None`` if optional and absent."""
    import facetlab.datasets  # late: only when no data_dir was given

    try:
        return facetlab.datasets.data_dir()
    except DataError:
        if required:
            raise
        return None


# --------------------------------------------------------------------------- rows


@dataclass
class _Found:
    """What one :func:`load_trials` gathers beside its frames: the rows of record and raw
    files, the files (or shard lines) it could not read, the duplicates it read once, the
    records written before the digest."""

    on_error: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    undigested: list[str] = field(default_factory=list)

    def marks(self) -> tuple[int, int, int, int]:
        return len(self.rows), len(self.unreadable), len(self.duplicates), len(self.undigested)

    def back_to(self, marks: tuple[int, int, int, int]) -> None:
        """Forget what was gathered since :meth:`marks` (a read overlapping a compaction)."""
        lists: tuple[list[Any], ...] = (
            self.rows,
            self.unreadable,
            self.duplicates,
            self.undigested,
        )
        for gathered, mark in zip(lists, marks, strict=True):
            del gathered[mark:]

    def take(self, source: str, shown: str, produce: Callable[[], list[dict[str, Any]]]) -> None:
        """The rows of one file; a file that cannot be read is one failed row (and a
        warning) or, with ``on_error="raise"``, the :class:`RecordError`."""
        try:
            self.rows.extend(produce())
        except RecordError as exc:
            if self.on_error == "raise":
                raise
            self.failed_row(f"{source} file", shown, str(exc), source)

    def failed_row(self, what: str, shown: str, why: str, source: str = "facetlab") -> None:
        """Keep what could not be read as one failed row, said in a warning."""
        self.unreadable.append((shown, why))
        warnings.warn(f"unreadable {what} kept as a failed row: {why}", RecordWarning, stacklevel=5)
        self.rows.append(
            {
                "source": source,
                "source_file": shown,
                "excluded_reason": f"unreadable file: {why}",
                "parse_status": "unreadable",
                "parse_problems": (why,),
                "failed": True,
            }
        )


def _own_rows(
    path: Path, shown: str, instances: Mapping[str, InstanceInfo], undigested: list[str]
) -> list[dict[str, Any]]:
    try:
        data = read_json_object(path, shown)
    except RecordError:
        if not path.exists():  # moved into a part by a compaction meanwhile: read again
            raise FileNotFoundError(path) from None
        raise
    if is_other_artifact(data):
        return []  # another facetlab artifact (manifest, summary) in the sweep folder
    record = record_from_object(data, shown)
    if record.received_sha256 is None:
        undigested.append(shown)
    return [record_row(record, shown, instances, data)]


def record_row(
    record: TrialRecord,
    source_file: str,
    instances: Mapping[str, InstanceInfo] | None = None,
    data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The table row of one facetlab :class:`TrialRecord` (``data``: its JSON object as
    read, digest-checked as is)."""
    instances = instances or {}
    probe = probe_display(record.probe)
    instance_id = record.instance_id
    if probe in ("C2", "H1") and record.base_instance_id:  # keyed by the instance varied
        instance_id = record.base_instance_id  # (C2: the anchor), like FACET's C2 rows
    info = instances.get(instance_id)

    model = _model_of(record)
    # A facetlab run of a model outside the paper's table (a simulated reasoner, a local
    # Ollama model) is a legitimate trial: it keeps its own model string as its name.
    reason = exclusion_reason(record.model_id) if model is not None else None
    if reason == "unknown model id":
        reason = None
    failed = record.status == "failed"
    if failed and reason is None:
        reason = f"failed run: {record.error or 'no reply'}"

    parsed = record.parsed
    weights = dict(parsed.weights) if parsed.weights else None
    parse_status: str = record.parse_status
    problems = tuple(parsed.problems)
    if weights and (bad := _out_of_range(weights)):
        # -500 or 1e308 would poison every mean: the reply is malformed, counted, not used
        parse_status, weights = "malformed", None
        problems += (f"weights outside [0, 100]: {bad}",)
        reason = reason or f"malformed weights: {bad} outside [0, 100]"
    if (edited := check_received(record, data)) is not None:  # named, counted, never used
        weights, reason = None, EDITED + edited + (f"; {reason}" if reason else "")
        problems += (reason,)
    foi = record.factor_of_interest.upper() if record.factor_of_interest else None
    answer = parsed.answer
    if parse_status in ("malformed", "empty"):  # no usable vector: no weight, no answer
        weights, answer = None, None
    # a factor the reply left out is missing (NaN, counted), never a weight of 0
    foi_weight = weights.get(foi, float("nan")) if weights and foi else float("nan")
    weight_sum = parsed.weight_sum if weights is not None else None
    if weight_sum is None:
        weight_sum = sum(weights.values()) if weights else float("nan")
    # The record's own yes/no truth (any domain), else the FACET instance's.
    truth = record.ground_truth or (info.ground_truth if info else None)
    inputs = record.inputs
    name = model.display_name if model else record.model
    return {
        "source": "facetlab",
        "source_file": source_file,
        "trial_id": record.trial_id,
        "probe": probe,
        "instance_id": instance_id,
        "raw_instance_id": record.instance_id,
        "base_instance_id": record.base_instance_id
        or (info.base_instance_id if info else instance_id),
        "variant": record.variant,
        "case": info.case if info else None,
        "model_id": record.model_id,
        "model": name,
        "canonical_model": name,
        "lab": model.lab if model else record.provider,
        "weights_access": model.weights if model else None,
        "excluded_reason": reason,
        "factor_of_interest": foi,
        "foi_weight": foi_weight,
        "weights": weights,
        "weight_sum": weight_sum,
        "n_factors": record.n_factors,
        "p1_label": parsed.label,
        **truth_columns(answer, truth),
        "parse_status": parse_status,
        "parse_problems": problems,
        "failed": failed,
        "timestamp": _iso(record.started_at),
        "cost_usd": record.cost_usd,
        "elapsed_sec": record.latency_s,
        "input_tokens": _count(record.usage.input_tokens),
        "output_tokens": _count(record.usage.output_tokens),
        "stop_reason": record.stop_reason,
        "refusal": record.refusal,
        "backend": record.backend,
        "design": _design(record),
        "structured": record.params.get("structured") is True,  # --structured
        "truth_source": (inputs.truth_from if inputs and inputs.truth_from else None)
        or ("anchor" if probe == "C2" else "instance"),
        "instance_sha256": inputs.instance_sha256 if inputs else None,
        "perturbation_sha256": inputs.perturbation_sha256 if inputs else None,
        "prompt": record.prompt,
        "raw_response": record.raw_response,
    }


def _out_of_range(weights: Mapping[str, float]) -> str:
    """The weights outside :data:`WEIGHT_RANGE` (or not finite), as ``"F1=-500"``; '' if none."""
    low, high = WEIGHT_RANGE
    bad = [f"{k}={v:g}" for k, v in weights.items() if not (math.isfinite(v) and low <= v <= high)]
    return ", ".join(bad)


def _count(value: object) -> int | None:
    """A token count as recorded; anything but a non-negative integer is missing."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _design(record: TrialRecord) -> str:
    """What must agree for trials of one model to be pooled: template and sampling
    parameters (the seed aside: two seeds of one design are replicates)."""
    skip = ("seed", "structured_format")  # the form a server takes asks the same schema
    params = {k: v for k, v in sorted(record.params.items()) if k not in skip and v is not None}
    shown = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"template {record.template}" + (f", {shown}" if shown else "")


def _model_of(record: TrialRecord) -> ModelInfo | None:
    """The paper model of a record: its stored canonical name, else its model ids."""
    if record.canonical_model:
        try:
            return model_by_name(record.canonical_model)
        except KeyError:
            pass
    return canonical_model(record.model_id) or canonical_model(record.model)


def _iso(value: str | None) -> datetime | None:
    """A record's ISO timestamp as a UTC-naive datetime (None if absent or unreadable)."""
    if not value:
        return None
    try:
        return utc_naive(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


# --------------------------------------------------------------------------- frame


def _frame(rows: list[dict[str, Any]], stored: pd.DataFrame | None = None) -> pd.DataFrame:
    """The table of ``rows`` (and of the ``stored`` records of parts and shards)."""
    frame = _rows_frame(rows)
    if stored is not None and len(stored):
        stored = stored[[c for c in COLUMNS if c != "trial"]]
        frame = stored if frame.empty else pd.concat([frame, stored], ignore_index=True)
        frame = frame.reset_index(drop=True)
    frame.insert(COLUMNS.index("trial"), "trial", _trial_index(frame))
    _weights_as_shares(frame)
    return frame


def _weights_as_shares(frame: pd.DataFrame) -> None:
    """A facetlab reply's weight as its share of the reply's own total, in percent (a model
    writing fractions or a total of 510 is read on its own scale); ``foi_weight_raw`` the
    number it wrote. FACET's rows keep the paper's raw values. ``off_scale``: the total is
    more than :data:`SUM_TOLERANCE` from 100."""
    raw, total = frame["foi_weight"].astype(float), frame["weight_sum"].astype(float)
    frame["foi_weight_raw"] = raw
    own = (frame["source"] == "facetlab").to_numpy(dtype=bool)
    frame["foi_weight"] = raw.where(~own, raw * (100.0 / total.where(total > 0)))  # 100: exact
    frame["off_scale"] = ((total - 100.0).abs() > SUM_TOLERANCE).to_numpy(dtype=bool)


def _rows_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Every column but ``trial``, typed, from row dicts."""
    # Text columns stay ``object`` with ``None`` for missing values on every pandas
    # version (pandas 3 would otherwise infer its ``str`` dtype with NaN).
    data: dict[str, Any] = {}
    for column in (c for c in COLUMNS if c != "trial"):
        values = [row.get(column) for row in rows]
        if column in _FLOAT_COLUMNS:
            data[column] = pd.array(
                [float("nan") if v is None else float(v) for v in values], dtype="float64"
            )
        elif column in _COUNT_COLUMNS:
            data[column] = pd.array(values, dtype="Int64")
        elif column == "truth_source":  # FACET files: C2 answers are read against the anchor's
            data[column] = pd.Series(
                [
                    v or ("anchor" if row.get("probe") in ("C2", "pilot-C2") else "instance")
                    if row.get("ground_truth") is not None
                    else v
                    for v, row in zip(values, rows, strict=True)
                ],
                dtype=object,
            )
        elif column == "model":
            names = [
                v if v is not None else row.get("canonical_model")
                for v, row in zip(values, rows, strict=True)
            ]
            data[column] = pd.Series(names, dtype=object)
        elif column == "correct":
            data[column] = pd.array(values, dtype="boolean")
        elif column == "failed":
            data[column] = pd.array([True if v is None else bool(v) for v in values], dtype=bool)
        elif column == "timestamp":
            data[column] = pd.to_datetime(pd.Series(values, dtype=object)).to_numpy()
        elif column == "parse_problems":
            data[column] = pd.Series(
                [v if isinstance(v, tuple) else () for v in values], dtype=object
            )
        else:
            data[column] = pd.Series(values, dtype=object)
    return pd.DataFrame(data)


def _trial_index(frame: pd.DataFrame) -> pd.Series[int]:
    """0-based trial number within (probe, instance_id, factor_of_interest, model)."""
    if frame.empty:
        return pd.Series([], dtype="int64", index=frame.index)  # type: ignore[return-value]
    model_key = frame["model"].fillna(frame["model_id"]).fillna("")
    # Configurations the paper leaves out (opus effort-high) form their own cells.
    model_key = (
        model_key
        + "|"
        + frame["excluded_reason"]
        .where(~frame["failed"] & frame["canonical_model"].notna(), "")
        .fillna("")
    )
    keys = pd.DataFrame(
        {
            "probe": frame["probe"].fillna(""),
            "instance_id": frame["instance_id"].fillna(""),
            "foi": frame["factor_of_interest"].fillna(""),
            "model": model_key,
            "timestamp": frame["timestamp"],
            "source_file": frame["source_file"],
        }
    )
    ordered = keys.sort_values(["timestamp", "source_file"], kind="stable", na_position="last")
    trial = ordered.groupby(["probe", "instance_id", "foi", "model"], sort=False).cumcount()
    result: pd.Series[int] = trial.reindex(frame.index).astype("int64")
    return result


# --------------------------------------------------------------------------- parts, shards


def _store_files(base: Path) -> Iterator[tuple[str, Path, Path]]:
    """``(kind, path, folder)`` of the parts and shards under ``base`` (a file or folder)."""
    if base.is_file():
        if base.suffix == ".parquet":
            yield "part", base, base.parent
        elif base.suffix == SHARD_SUFFIX:
            yield "shard", base, base.parent
        return
    if not base.is_dir():
        return
    for folder, subfolders, _ in os.walk(base):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d != "cache")
        here = Path(folder)
        for part in part_files(here):
            yield "part", part, here
        for shard in shard_files(here):
            yield "shard", shard, here


def _stored_frame(
    bases: list[Path], index: Mapping[str, InstanceInfo], read: frozenset[str], found: _Found
) -> pd.DataFrame | None:
    """The records of every part and shard under ``bases``, one per trial.

    In one folder the later place wins (parts by name, then shards by name: a failed
    trial run again); a trial found in two folders is read once, with a duplicate noted.
    Unreadable shard lines become rows of ``found.rows`` (``on_error="record"``) or raise.
    """
    duplicates = found.duplicates
    frames: list[pd.DataFrame] = []
    seen: set[Path] = set()
    for base in bases:
        for kind, path, folder in _store_files(base):
            resolved = path.resolve()
            if resolved in seen:
                duplicates.append((str(resolved), "the same file, reached twice"))
                continue
            seen.add(resolved)
            if kind == "part":
                try:
                    part = _part_frame(resolved, read)
                except RecordError as exc:
                    if found.on_error == "raise":
                        raise
                    found.failed_row("part", str(resolved), str(exc))
                    continue
            else:
                part = _shard_frame(resolved, found)
            part["_folder"] = str(folder.resolve())
            frames.append(part)
    if not frames:
        return None
    stored = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    stored = stored[~stored.duplicated(["_folder", "trial_id"], keep="last")]
    again = stored.duplicated("trial_id", keep="first")
    if again.any():
        first = stored[~again].set_index("trial_id")["source_file"]
        duplicates += (
            (str(shown), f"trial {tid} already read from {first.get(tid)}")
            for tid, shown in stored.loc[again, ["trial_id", "source_file"]].itertuples(index=False)
        )
        stored = stored[~again]
    stored = stored.reset_index(drop=True)
    if index:
        _complete_from_instances(stored, index, read)
    return stored


def _shard_frame(shard: Path, found: _Found) -> pd.DataFrame:
    """The rows of a shard's records (a torn last line is skipped, with a warning)."""
    rows: list[dict[str, Any]] = []
    extra: list[tuple[str | None, str | None]] = []
    failed = None if found.on_error == "raise" else partial(found.failed_row, "shard line")
    for record, data in iter_shard_records(shard, failed):
        rows.append(record_row(record, str(shard), {}, data))
        if record.received_sha256 is None:
            found.undigested.append(str(shard))
        extra.append((record.base_instance_id, record.ground_truth))
    frame = _rows_frame(rows)
    frame["record_base_instance_id"] = pd.Series([b for b, _ in extra], dtype=object)
    frame["record_ground_truth"] = pd.Series([g for _, g in extra], dtype=object)
    return frame


CHECKED_COLUMNS: frozenset[str] = frozenset(
    (
        # duplicates, the trial numbering, one design per model, the input fingerprints
        *("source", "source_file", "trial_id", "probe", "instance_id", "factor_of_interest"),
        *("model", "model_id", "canonical_model", "excluded_reason", "failed", "timestamp"),
        *("design", "instance_sha256", "perturbation_sha256", "parse_status"),
    )
)
"""The table's columns every check reads, read from a part whatever ``columns`` selects."""


def _part_columns_read(selected: list[str] | None) -> frozenset[str]:
    """The columns of a part to read: for a selection, what it holds and what the checks
    and the instance completion of what it holds need; else every one but the raw text
    (read only when asked for) and the full record."""
    if selected is None:
        return frozenset(c for c in PART_COLUMNS if c != "record")
    read = set(selected) | CHECKED_COLUMNS | {"foi_weight", "weight_sum"}  # the shares
    if "base_instance_id" in read:
        read.add("record_base_instance_id")
    if read & {"ground_truth", "correct"}:
        read |= {"ground_truth", "record_ground_truth", "answer", "correct"}
    return frozenset(read & set(PART_COLUMNS))


def _part_frame(part: Path, read: frozenset[str]) -> pd.DataFrame:
    """The table rows of a compacted part: the columns in ``read`` (the others all None)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # strings read as dictionaries: a prompt shared by a cell's thousand trials is
        # decoded once, never a million times
        handle = pq.ParquetFile(part)
        meta = handle.schema_arrow.metadata or {}
        fmt = meta.get(b"format", b"").decode("utf-8", "replace")
        if fmt != PART_FORMAT:
            raise RecordError(
                f"{part}: format is {fmt or 'missing'!r}, not a trials table this version reads; "
                f"supported: {PART_FORMAT}"
            )
        strings = [c for c in handle.schema_arrow.names if c not in _TYPED_COLUMNS]
        handle = pq.ParquetFile(part, read_dictionary=strings)
        # a column a part predates is left out (pyarrow skips it); the table has it as None
        table = handle.read(columns=[c for c in PART_COLUMNS if c in read and c != "record"])
    except RecordError:
        raise
    except Exception as exc:  # a damaged file: one unreadable row, never a crash
        raise RecordError(f"{part}: not a readable Parquet part ({exc})") from exc
    data = {name: _column(pa, name, table.column(name)) for name in table.column_names}
    n = table.num_rows
    unread = np.full(n, None, dtype=object)  # the columns not selected: never shown
    for column in (*COLUMNS, "record_base_instance_id", "record_ground_truth"):
        if column not in data and column not in ("trial", "source_file"):
            data[column] = unread
    data["source_file"] = np.full(n, str(part), dtype=object)  # one object, n pointers
    for row, (_, why) in edited_part_rows(part).items():  # named, counted, never used
        data["excluded_reason"][row] = f"{EDITED}{why}"
        data["weights"][row] = None
    # object stays object (pandas 3 would infer its str dtype from the strings)
    return pd.DataFrame(
        {
            k: pd.Series(v, dtype=object, copy=False)
            if isinstance(v, np.ndarray) and v.dtype == object
            else v
            for k, v in data.items()
        },
        copy=False,
    )


_TYPED_COLUMNS = frozenset(
    (*_FLOAT_COLUMNS, *_COUNT_COLUMNS, "correct", "failed", "refusal", "structured", "timestamp")
)
"""The columns of a part that are not strings."""


def _column(pa: Any, name: str, values: Any) -> Any:
    """One column of a part as the table holds it (a string shared by every row that has it)."""
    if name in _FLOAT_COLUMNS:
        return values.to_numpy()  # nulls become NaN
    if name in _COUNT_COLUMNS:
        return pd.array(values.to_pylist(), dtype="Int64")
    if name == "correct":
        return pd.array(values.to_pylist(), dtype="boolean")
    if name == "failed":
        return values.fill_null(True).to_numpy(zero_copy_only=False).astype(bool)
    if name in ("refusal", "structured"):
        return np.array(values.to_pylist(), dtype=object)
    if name == "timestamp":
        return values.to_pandas().astype(_TIMESTAMP_DTYPE).to_numpy()
    uniques, indices = _distinct(values)
    if name in ("weights", "compliance"):
        decoded = [None if v is None else json.loads(v) for v in uniques]
        rows = np.empty(len(indices), dtype=object)
        for i, k in enumerate(indices.tolist()):  # every row its own dict (a row may be edited)
            rows[i] = None if decoded[k] is None else dict(decoded[k])
        return rows
    if name == "parse_problems":  # tuples are immutable: one per distinct list, shared
        shared = np.empty(len(uniques), dtype=object)
        for i, v in enumerate(uniques):
            shared[i] = () if v is None else tuple(json.loads(v))
        return shared[indices]
    return _objects(uniques)[indices]


def _distinct(values: Any) -> tuple[list[Any], Any]:
    """A string column as its distinct values (``None`` last) and each row's index into them:
    one Python ``str`` per distinct value, so a million rows of one model name cost 8 MB of
    pointers, not 80 MB of strings."""
    import pyarrow as pa

    encoded = (
        values.unify_dictionaries().combine_chunks()
        if pa.types.is_dictionary(values.type)
        else values.combine_chunks().dictionary_encode()
    )
    uniques = [*encoded.dictionary.to_pylist(), None]
    indices = encoded.indices.fill_null(len(uniques) - 1).to_numpy(zero_copy_only=False)
    return uniques, indices


def _objects(values: list[Any]) -> Any:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


_TIMESTAMP_DTYPE = pd.to_datetime(pd.Series([datetime(2026, 1, 1, 0, 0, 0, 1)])).to_numpy().dtype
"""The timestamp column's dtype as the rows get it (its unit differs across pandas versions)."""


def _complete_from_instances(
    frame: pd.DataFrame, index: Mapping[str, InstanceInfo], read: frozenset[str]
) -> None:
    """What a record leaves to the instance files (as :func:`record_row` does it): the case,
    a missing base instance id and a missing ground truth, then ``correct`` (those of them
    in ``read``: the others are not selected)."""
    ids = frame["instance_id"]
    known = {i: index[i] for i in ids.dropna().unique() if i in index}
    if not known:
        return

    def attribute(name: str) -> pd.Series[Any]:
        # one look-up per distinct instance, not one Python call per trial
        values = ids.map({i: getattr(info, name) for i, info in known.items()})
        return values.astype(object).where(values.notna(), None)

    if "case" in read:
        frame["case"] = attribute("case")
    if "base_instance_id" in read:
        base = frame["record_base_instance_id"]
        frame["base_instance_id"] = base.where(base.notna(), attribute("base_instance_id"))
        base = frame["base_instance_id"].where(frame["base_instance_id"].notna(), ids)
        frame["base_instance_id"] = base.astype(object).where(base.notna(), None)
    if not read & {"ground_truth", "correct"}:
        return
    truth = frame["record_ground_truth"]
    truth = truth.where(truth.notna(), attribute("ground_truth"))
    frame["ground_truth"] = truth.astype(object).where(truth.notna(), None)
    answer = frame["answer"]
    both = answer.notna() & truth.notna()
    frame["correct"] = pd.array(
        [bool(a == t) if b else None for a, t, b in zip(answer, truth, both, strict=True)],
        dtype="boolean",
    )

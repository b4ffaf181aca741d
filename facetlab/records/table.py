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

import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from facetlab.datasets.conventions import exclusion_reason
from facetlab.errors import ConfigError, DataError, RecordError
from facetlab.models import ModelInfo, canonical_model, model_by_name
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
    is_record_object,
    iter_record_files,
    record_from_object,
)
from facetlab.records.schema import TrialRecord

if TYPE_CHECKING:
    from facetlab.instances import Instance

__all__ = ["COLUMNS", "SOURCES", "RecordWarning", "load_trials"]

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
    "weights",
    "weight_sum",
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
    "instance_sha256",
    "perturbation_sha256",
    "prompt",
    "raw_response",
    "direct_probe_response",
    "compliance",
)
"""The table's columns, in order (documented in ``docs/records.md``)."""


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


def load_trials(
    data_dir: Path | str | None = None,
    *,
    records: Path | str | Iterable[Path | str] | None = None,
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

    rows: list[dict[str, Any]] = []
    unreadable: list[tuple[str, str]] = []

    def take(source: str, shown: str, produce: Callable[[], list[dict[str, Any]]]) -> None:
        try:
            rows.extend(produce())
        except RecordError as exc:
            if on_error == "raise":
                raise
            unreadable.append((shown, str(exc)))
            warnings.warn(
                f"unreadable {source} file kept as a failed row: {exc}", RecordWarning, stacklevel=3
            )
            rows.append(_unreadable_row(source, shown, str(exc)))

    if needs_data and root is not None:
        results = root / "results"
        families = (
            ("pilot", sorted(results.glob("*-real-*.json")), read_pilot_file),
            ("weighted", sorted((results / "weighted-probe").glob("*.json")), read_weighted_file),
            ("c2", sorted((results / "weighted-probe" / "c2").glob("*.json")), read_c2_file),
        )
        for source, files, reader in families:
            if source not in wanted:
                continue
            for path in files:
                shown = path.relative_to(root).as_posix()
                take(source, shown, partial(reader, path, shown, index))

    duplicates: list[tuple[str, str]] = []
    if "facetlab" in wanted:
        seen_files: set[Path] = set()
        seen_trials: dict[str, str] = {}
        for base in record_paths:
            for path in iter_record_files(base):
                resolved = path.resolve()
                if resolved in seen_files:
                    duplicates.append((str(resolved), "the same file, reached twice"))
                    continue
                seen_files.add(resolved)
                shown = str(resolved)
                before = len(rows)
                take("facetlab", shown, partial(_own_rows, path, shown, index))
                tid = rows[-1].get("trial_id") if len(rows) > before else None
                if isinstance(tid, str):
                    if tid in seen_trials:
                        del rows[before:]
                        duplicates.append(
                            (shown, f"trial {tid} already read from {seen_trials[tid]}")
                        )
                    else:
                        seen_trials[tid] = shown
        if duplicates:
            warnings.warn(
                f"{len(duplicates)} duplicate record file(s) read once: "
                f"{duplicates[0][0]} ({duplicates[0][1]})"
                + (f" and {len(duplicates) - 1} more" if len(duplicates) > 1 else ""),
                RecordWarning,
                stacklevel=2,
            )

    frame = _frame(rows)
    frame.attrs["unreadable"] = unreadable
    frame.attrs["duplicates"] = duplicates
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
    return frame


def _one_design_per_model(frame: pd.DataFrame) -> None:
    """Refuse records of one model run under several designs (they would be pooled)."""
    own = frame[(frame["source"] == "facetlab") & frame["design"].notna()]
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
    if isinstance(records, str | Path):
        return [Path(records)]
    return [Path(r) for r in records]


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


def _unreadable_row(source: str, shown: str, message: str) -> dict[str, Any]:
    return {
        "source": source,
        "source_file": shown,
        "excluded_reason": f"unreadable file: {message}",
        "parse_status": "unreadable",
        "parse_problems": (message,),
        "failed": True,
    }


def _own_rows(
    path: Path, shown: str, instances: Mapping[str, InstanceInfo]
) -> list[dict[str, Any]]:
    data = read_json_object(path, shown)
    if "format" in data and not is_record_object(data):
        return []  # another facetlab artifact (manifest, summary) in the sweep folder
    return [record_row(record_from_object(data, shown), shown, instances)]


def record_row(
    record: TrialRecord, source_file: str, instances: Mapping[str, InstanceInfo] | None = None
) -> dict[str, Any]:
    """The table row of one facetlab :class:`TrialRecord`."""
    instances = instances or {}
    probe = probe_display(record.probe)
    instance_id = record.instance_id
    if probe == "C2" and record.base_instance_id:
        instance_id = record.base_instance_id  # C2 rows are keyed by their anchor, like FACET's
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
    foi = record.factor_of_interest.upper() if record.factor_of_interest else None
    foi_weight = weights.get(foi, 0.0) if weights and foi else float("nan")
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
        **truth_columns(parsed.answer, truth),
        "parse_status": parse_status,
        "parse_problems": problems,
        "failed": failed,
        "timestamp": _iso(record.started_at),
        "cost_usd": record.cost_usd,
        "elapsed_sec": record.latency_s,
        "input_tokens": _count(record.usage.input_tokens),
        "output_tokens": _count(record.usage.output_tokens),
        "stop_reason": (record.model_extra or {}).get("stop_reason"),
        "refusal": (record.model_extra or {}).get("refusal"),
        "backend": record.backend,
        "design": _design(record),
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
    params = {k: v for k, v in sorted(record.params.items()) if k != "seed" and v is not None}
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


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    # Text columns stay ``object`` with ``None`` for missing values on every pandas
    # version (pandas 3 would otherwise infer its ``str`` dtype with NaN).
    data: dict[str, Any] = {}
    for column in COLUMNS:
        if column == "trial":
            continue
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
    frame: pd.DataFrame = pd.DataFrame(data)
    frame.insert(COLUMNS.index("trial"), "trial", _trial_index(frame))
    return frame


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

"""Compact a sweep's records (shards and per-trial files) into one Parquet part.

``compact(folder)`` reads every record of a sweep's ``records/`` folder that is not yet
in a part: the shards (``shard-*.jsonl``, a torn last line ignored) and the per-trial
``*.json`` files. Each is validated (format version included, as any read), turned
into its table row (:func:`facetlab.records.table.record_row`, so a part loads with
no per-record work) and written, with the full record as JSON in a ``record`` column,
to ``trials-<time>-<token>.parquet`` (zstd; atomically: a temporary file, fsync,
rename), each row with its digest (``row_sha256``) and the file with the digest of its
rows' bytes (``data_sha256``, in the footer: :func:`facetlab.records.store.edited_part_rows`
checks it, and every row only when it differs), in one pass and in the order they were written, 2,000 at a time: a trial
recorded twice keeps both rows and readers take the later. Only then are the shards
and files it holds removed. A crash in between leaves the same records in both
places, which readers take once (same trial, the later place wins); a reader that
overlaps a compaction reads again (:func:`facetlab.records.table.load_trials`). A file
that is not a valid record is left where it is and reported: it loads as an unreadable
row, as before.

Safe beside a running sweep: compactions of one folder take turns (``records/.compact.lock``);
a shard is compacted only once sealed (its writer closed it or died,
:func:`facetlab.records.shards.is_sealed`), and per-trial files only while no run holds the
sweep's lock (which the compaction then holds, so no run rewrites a file under it).

>>> compact("runs/big-sweep")                                        # doctest: +SKIP
Compacted(part=PosixPath('runs/big-sweep/records/trials-....parquet'), records=1000000, ...)
"""

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import filelock

from facetlab.errors import RecordError
from facetlab.jsonio import read_json_file
from facetlab.records.own import is_other_artifact, record_from_object, serialize_record
from facetlab.records.schema import TrialRecord
from facetlab.records.shards import (
    SHARD_SUFFIX,
    is_sealed,
    shard_files,
    sortable_stamp,
)
from facetlab.records.store import (
    DATA_DIGEST,
    PART_FORMAT,
    ROW_DIGEST,
    data_sha256,
    iter_shard_records,
    row_sha256,
)
from facetlab.records.table import PART_COLUMNS, part_schema, record_row

__all__ = ["Compacted", "compact", "records_folder"]

ROWS_PER_GROUP = 2_000
"""Rows per Parquet row group, and per batch held in memory while compacting (a row
is ~25 KB of Python objects before it is columnar: 2,000 keep it near 50 MB)."""


@dataclass(frozen=True)
class Compacted:
    """What :func:`compact` did."""

    part: Path | None
    """The new part (None: nothing to compact)."""
    records: int
    """Records written to it (one per trial)."""
    sources_removed: int
    """Shards and record files now held by the part, removed."""
    problems: tuple[tuple[str, str], ...] = field(default=())
    """``(file, message)`` of every file or line left out (not a valid record)."""
    left: int = 0
    """Shards still being written and per-trial files of a running sweep, left for later."""


def records_folder(folder: Path | str) -> Path:
    """A sweep's ``records/`` folder, given the sweep folder or the records folder itself."""
    root = Path(folder)
    if (root / "records").is_dir():
        return root / "records"
    if not root.is_dir():
        raise RecordError(f"{root}: no such sweep or records folder")
    return root


COMPACT_WAIT_S = 600.0  # for another compaction of the folder to finish


def compact(folder: Path | str) -> Compacted:
    """Compact the sealed shards and record files of a sweep into one Parquet part (see the
    module); compactions of one folder take turns."""
    root = records_folder(folder)
    lock = filelock.FileLock(root / ".compact.lock", thread_local=False)
    try:
        lock.acquire(timeout=COMPACT_WAIT_S)
    except filelock.Timeout:
        raise RecordError(
            f"{root}: another compaction has held it for {COMPACT_WAIT_S:g} s; try again later"
        ) from None
    try:
        for stale in root.glob(".trials-*.parquet.tmp"):  # of a compaction that was killed
            stale.unlink(missing_ok=True)
        # per-trial files only while no run holds the sweep's lock (then held here): a
        # running sweep may rewrite one (a failed trial run again)
        sweep = root.parent if root.name == "records" else root
        run = filelock.FileLock(sweep / ".lock", thread_local=False)
        idle = any(not p.name.startswith(".") for p in root.glob("*.json"))
        try:
            idle = idle and bool(run.acquire(timeout=0))
        except (filelock.Timeout, OSError):
            idle = False
        try:
            return _compact(root, idle)
        finally:
            if idle:
                run.release()
    finally:
        lock.release()


def _compact(root: Path, idle: bool) -> Compacted:
    import pyarrow as pa
    import pyarrow.parquet as pq

    every = shard_files(root)
    shards = [shard for shard in every if is_sealed(shard)]
    found = sorted(p for p in root.glob("*.json") if p.is_file() and not p.name.startswith("."))
    files = found if idle else []
    left = len(every) - len(shards) + len(found) - len(files)
    if not shards and not files:
        return Compacted(None, 0, 0, left=left)
    problems: list[tuple[str, str]] = []
    others: set[str] = set()  # files that are another facetlab artifact: not ours to move
    stamp = sortable_stamp()
    target = root / f"trials-{stamp}-{secrets.token_hex(3)}.parquet"
    temp = root / f".{target.name}.tmp"
    schema = part_schema().append(pa.field(ROW_DIGEST, pa.string()))
    schema = schema.with_metadata({"format": PART_FORMAT})
    written = 0
    try:
        # One pass, in the order of writing (files, then shards by name): a trial recorded
        # twice (a failed trial run again) keeps both rows, and every reader takes the
        # later one, as it does across parts and shards.
        with pq.ParquetWriter(temp, schema, compression="zstd") as writer:
            batch: list[dict[str, Any]] = []
            for record, data in _records([*files, *shards], problems, others):
                batch.append(_part_row(record, data))
                if len(batch) >= ROWS_PER_GROUP:
                    writer.write_table(_table(pa, batch, schema))
                    written += len(batch)
                    batch = []
            if batch:
                writer.write_table(_table(pa, batch, schema))
                written += len(batch)
            # every row group is in the file as it is written, the footer not yet: the digest
            # of what is there goes into it (read as if finished, the footerless file
            # hashed nothing: every part's digest failed, and every read checked each row)
            writer.add_key_value_metadata(
                {DATA_DIGEST.decode(): data_sha256(temp, unfinished=True)}
            )
        if not written:
            return Compacted(None, 0, 0, tuple(problems), left)
        with open(temp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temp, target)
    finally:
        if temp.exists():
            temp.unlink()
    bad = {f for f, _ in problems}
    removed = 0
    for shard in shards:
        shard.unlink(missing_ok=True)
        shard.with_suffix(".idx").unlink(missing_ok=True)  # an older version's index
        removed += 1
    for file in files:
        if str(file) not in bad and str(file) not in others:
            file.unlink(missing_ok=True)
            removed += 1
    return Compacted(target, written, removed, tuple(problems), left)


def _records(
    sources: list[Path], problems: list[tuple[str, str]], others: set[str]
) -> Iterator[tuple[TrialRecord, dict[str, Any]]]:
    """Every valid record of ``sources`` in order, with its JSON object as read; what is
    not one goes to ``problems``."""
    for path in sources:
        if path.suffix == SHARD_SUFFIX:
            yield from iter_shard_records(path, lambda shown, why: problems.append((shown, why)))
            continue
        data, problem = read_json_file(path)
        if problem is None and is_other_artifact(data):
            others.add(str(path))  # a manifest or summary
            continue
        if problem is not None:
            problems.append((str(path), problem))
            continue
        try:
            yield record_from_object(data, str(path)), data
        except RecordError as exc:
            problems.append((str(path), str(exc)))


def _part_row(record: TrialRecord, data: dict[str, Any]) -> dict[str, Any]:
    row = record_row(record, "", {}, data)  # digest-checked on the object as read
    row["weights"] = json.dumps(row["weights"]) if row.get("weights") is not None else None
    compliance = row.get("compliance")
    row["compliance"] = json.dumps(compliance) if compliance is not None else None
    row["parse_problems"] = json.dumps(list(row.get("parse_problems") or ()))
    row["status"] = record.status
    row["record_base_instance_id"] = record.base_instance_id
    row["record_ground_truth"] = record.ground_truth
    row["record"] = serialize_record(record)
    refusal = row.get("refusal")
    row["refusal"] = refusal if isinstance(refusal, bool) else None
    stop = row.get("stop_reason")
    row["stop_reason"] = stop if isinstance(stop, str) else None
    return row


def _table(pa: Any, rows: list[dict[str, Any]], schema: Any) -> Any:
    table = pa.table(
        # from_pandas: a missing float (P1's foi_weight, NaN in the row) is a Parquet null
        {name: pa.array([row.get(name) for row in rows], type=schema.field(name).type,
                        from_pandas=True)
         for name in PART_COLUMNS},
    )  # fmt: skip
    # each row's digest over its columns as stored (read back, they are these values)
    digests = [row_sha256(values) for values in table.to_pylist()]
    return table.append_column(ROW_DIGEST, pa.array(digests, pa.string())).cast(schema)

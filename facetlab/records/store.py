"""Where a sweep's records are: per-trial files, append-only shards, compacted Parquet parts.

A sweep's ``records/`` folder may hold all three at once:

- ``<trial_id>.json``: one record per file (small sweeps, and every sweep before shards);
- ``shard-*.jsonl`` (+ ``.idx``): records appended by a running sweep (:mod:`.shards`);
- ``trials-*.parquet``: records compacted into a table (:mod:`.compaction`).

A resume asks :func:`sweep_statuses`: the parts' ``trial_id``/``status`` columns (and the
part's data digest), every shard line and every per-trial file, each checked by the
records' one digest rule: an edited record is named and asked again. Where one
trial is found twice, the later place wins (files, then parts in name order, then
shards in name order): a failed trial run again replaces its first record. A folder
that holds parts or shards is written with shards from then on, so this order is
the order of writing.
"""

import hashlib
import json
import os
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from facetlab.errors import RecordError, RecordWarning
from facetlab.jsonio import digest_problem, received_sha256
from facetlab.records.own import read_records, record_from_object, record_statuses
from facetlab.records.schema import TrialRecord
from facetlab.records.shards import iter_shard_lines, shard_files, shard_statuses

__all__ = [
    "DATA_DIGEST",
    "PART_FORMAT",
    "READ_ATTEMPTS",
    "ROW_DIGEST",
    "data_sha256",
    "edited_part_rows",
    "iter_part_records",
    "iter_shard_records",
    "part_files",
    "part_statuses",
    "read_sweep_records",
    "row_sha256",
    "settled",
    "sweep_statuses",
]

PART_FORMAT = "facetlab.trials/1"
"""The ``format`` a compacted Parquet part states in its schema metadata."""

READ_ATTEMPTS = 20
T = TypeVar("T")


def settled(read: Callable[[], T], parts: Callable[[], object]) -> T:
    """``read()``, done again while a compaction changed the records under it.

    A compaction writes its part, then removes the shards and files it holds: a read that
    found a file gone (``FileNotFoundError``), or after which ``parts()`` (the parts it
    may have listed) differ, may have missed the trials of either. Readers never see that
    half-state, and need no lock (a read-only folder reads as well)."""
    for _ in range(READ_ATTEMPTS):
        before = parts()
        try:
            found = read()
        except FileNotFoundError:
            continue
        if parts() == before:
            return found
    raise RecordError(
        f"the records changed while being read {READ_ATTEMPTS} times in a row (a compaction "
        "running in a loop?); read them again"
    )


def part_files(folder: Path | str) -> list[Path]:
    """The compacted parts directly in ``folder``, oldest first (by name)."""
    root = Path(folder)
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("trials-*.parquet") if p.is_file())


def part_statuses(part: Path) -> dict[str, str]:
    """``trial_id -> status`` of a compacted part (two columns read, and its digest checked:
    an edited row leaves its trial without a record, asked again as loading excludes it)."""
    import pyarrow.parquet as pq

    # the file's own reader: read_table goes through pyarrow.dataset (~0.25 s to import)
    table = pq.ParquetFile(part).read(columns=["trial_id", "status"])
    ids, statuses = table.column("trial_id").to_pylist(), table.column("status").to_pylist()
    for row, (tid, why) in edited_part_rows(part).items():
        warnings.warn(f"{part}: trial {tid} {why}; asked again", RecordWarning, stacklevel=2)
        statuses[row] = None
    return {tid: status for tid, status in zip(ids, statuses, strict=True) if status is not None}


DATA_DIGEST = b"data_sha256"
"""A part's file metadata key: the sha256 of its bytes before the footer (its data)."""

ROW_DIGEST = "row_sha256"
"""A part's column: each row's digest over all its other columns, as compacted."""

_CHECKED: dict[tuple[str, int, int, int], dict[int, tuple[str, str]]] = {}


def data_sha256(part: Path, *, unfinished: bool = False) -> str:
    """sha256 of ``part``'s bytes before its Parquet footer (where its rows are); of all of
    them when ``unfinished`` (a part being written, whose footer is not there yet)."""
    digest = hashlib.sha256()
    with open(part, "rb") as handle:
        size = handle.seek(-8, os.SEEK_END) + 8
        left = size if unfinished else size - 8 - int.from_bytes(handle.read(4), "little")
        handle.seek(0)
        while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def row_sha256(row: dict[str, Any]) -> str:
    """A part row's digest (:data:`ROW_DIGEST`): the records' one rule over its columns."""
    return received_sha256(
        {
            k: v.isoformat() if isinstance(v, datetime) else v
            for k, v in row.items()
            if k != ROW_DIGEST
        }
    )


def edited_part_rows(part: Path) -> dict[int, tuple[str, str]]:
    """``row -> (trial id, why)`` of the rows of ``part`` that changed after compaction.

    The part's data digest matching (one read of its bytes, once per process and file
    version) proves every row; otherwise each row is checked: its :data:`ROW_DIGEST` and
    its full record's own digest (the check of a record file, on the record column)."""
    import pyarrow.parquet as pq

    stat = part.stat()
    memo = (str(part.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if memo in _CHECKED:
        return _CHECKED[memo]
    handle = pq.ParquetFile(part)
    stored = (handle.metadata.metadata or {}).get(DATA_DIGEST)
    edited: dict[int, tuple[str, str]] = {}
    if stored is None or stored.decode("ascii", "replace") != data_sha256(part):
        for row, values in enumerate(
            v for batch in handle.iter_batches(batch_size=2_000) for v in batch.to_pylist()
        ):
            if (why := _row_problem(values)) is not None:
                edited[row] = (str(values.get("trial_id")), why)
    _CHECKED[memo] = edited
    return edited


def _row_problem(values: dict[str, Any]) -> str | None:
    stored = values.get(ROW_DIGEST)
    if stored is not None and stored != row_sha256(values):
        return "was changed in the part after it was compacted (row_sha256 differs)"
    try:
        record = json.loads(values.get("record") or "")
    except ValueError:
        return "has no readable record in the part"
    return digest_problem(record) if isinstance(record, dict) else "has no record in the part"


def sweep_statuses(folder: Path | str) -> dict[str, str]:
    """``trial_id -> status`` of every readable record in a sweep's ``records/`` folder.

    What cannot be read (a torn shard line, a corrupt file or part) is reported as a
    :class:`RecordWarning` and left out: its trial is run again.
    """
    root = Path(folder)
    return settled(lambda: _statuses(root), lambda: part_files(root))


def _statuses(root: Path) -> dict[str, str]:
    found: dict[str, str] = record_statuses(root)
    for part in part_files(root):
        try:
            found.update(part_statuses(part))
        except Exception as exc:  # a damaged part is a miss, never a blocked resume
            warnings.warn(
                f"{part}: skipped on resume, not a readable Parquet part ({exc}); "
                "its trials are run again",
                RecordWarning,
                stacklevel=2,
            )
    for shard in shard_files(root):
        found.update(shard_statuses(shard))
    return found


def iter_shard_records(
    shard: Path, on_problem: Callable[[str, str], None] | None = None
) -> Iterator[tuple[TrialRecord, dict[str, Any]]]:
    """The records of one shard, in order, each with its line's JSON object (what its
    digest is checked on: no dump); a torn last line is skipped.

    A line that is not a record raises :class:`RecordError` naming the shard and the
    byte offset; with ``on_problem`` it is handed to it instead, as ``(shard:offset,
    message)``, and the reading goes on (compaction reports it and keeps the rest).
    """
    for offset, line in iter_shard_lines(shard):
        shown = f"{shard}:{offset}"
        try:
            try:
                data = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise RecordError(f"{shown}: not a JSON record line ({exc})") from exc
            record = record_from_object(data, shown)
        except RecordError as exc:
            if on_problem is None:
                raise
            on_problem(shown, str(exc))
            continue
        yield record, data


def iter_part_records(part: Path) -> Iterator[TrialRecord]:
    """The full records kept in a compacted part (its ``record`` column), in order."""
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(part)
    edited, row = edited_part_rows(part), 0
    for batch in handle.iter_batches(columns=["record"], batch_size=10_000):
        for text in batch.column(0).to_pylist():
            if row in edited:  # named, never used
                warnings.warn(f"{part}#{row}: {edited[row][1]}", RecordWarning, stacklevel=2)
            else:
                yield record_from_object(json.loads(text), f"{part}#{row}")
            row += 1


def read_sweep_records(folder: Path | str) -> list[TrialRecord]:
    """Every record of a sweep's ``records/`` folder (parts, shards, files), one per trial
    (the later place wins, as in :func:`sweep_statuses`), sorted by trial id."""
    root = Path(folder)
    found = settled(lambda: _records_by_trial(root), lambda: part_files(root))
    return [found[k] for k in sorted(found)]


def _records_by_trial(root: Path) -> dict[str, TrialRecord]:
    found: dict[str, TrialRecord] = {r.trial_id: r for r in read_records(root)}
    for part in part_files(root):
        found.update((r.trial_id, r) for r in iter_part_records(part))
    for shard in shard_files(root):
        found.update((r.trial_id, r) for r, _ in iter_shard_records(shard))
    return found

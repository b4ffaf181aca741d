"""Where a sweep's records are: per-trial files, append-only shards, compacted Parquet parts.

A sweep's ``records/`` folder may hold all three at once:

- ``<trial_id>.json``: one record per file (small sweeps, and every sweep before shards);
- ``shard-*.jsonl`` (+ ``.idx``): records appended by a running sweep (:mod:`.shards`);
- ``trials-*.parquet``: records compacted into a table (:mod:`.compaction`).

A resume asks :func:`sweep_statuses`: the parts' ``trial_id``/``status`` columns, the
shards' indexes and the per-trial files, never the records' full text. Where one
trial is found twice, the later place wins (files, then parts in name order, then
shards in name order): a failed trial run again replaces its first record. A folder
that holds parts or shards is written with shards from then on, so this order is
the order of writing.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from facetlab.errors import RecordError, RecordWarning
from facetlab.records.own import read_records, record_from_object, record_statuses
from facetlab.records.schema import TrialRecord
from facetlab.records.shards import iter_shard_lines, shard_files, shard_statuses

__all__ = [
    "PART_FORMAT",
    "READ_ATTEMPTS",
    "iter_part_records",
    "iter_shard_records",
    "part_files",
    "part_statuses",
    "read_sweep_records",
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
    """``trial_id -> status`` of a compacted part (two columns read, nothing else)."""
    import pyarrow.parquet as pq

    table = pq.read_table(part, columns=["trial_id", "status"])
    return dict(
        zip(table.column("trial_id").to_pylist(), table.column("status").to_pylist(), strict=True)
    )


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
) -> Iterator[TrialRecord]:
    """The records of one shard, in order (a torn last line is skipped).

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
        yield record


def iter_part_records(part: Path) -> Iterator[TrialRecord]:
    """The full records kept in a compacted part (its ``record`` column), in order."""
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(part)
    for batch in handle.iter_batches(columns=["record"], batch_size=10_000):
        for i, text in enumerate(batch.column(0).to_pylist()):
            yield record_from_object(json.loads(text), f"{part}#{i}")


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
        found.update((r.trial_id, r) for r in iter_shard_records(shard))
    return found

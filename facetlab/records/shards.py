"""Append-only record shards: one JSON record per line, one shard per writing process.

A large sweep writes its records to ``<sweep>/records/shard-<time>-<pid>-<token>.jsonl``
instead of one file per trial. Records are appended in groups (group commit): the
lines of a group are written and fsynced together. A resume reads every line (each
record's digest is checked, as loading checks it); shards have no index.

A shard is *live* while its writer has it open: the writer holds an OS lock on it
(``flock``; the kernel drops it when the writer closes the shard or dies), and it only
becomes visible under its name once locked. Compaction takes *sealed* shards only
(:func:`is_sealed`).

Crash safety: a process killed mid-write leaves at most a torn last line in its
shard (no newline at the end). Readers detect it and ignore it, with a
:class:`RecordWarning`; it is never fatal, and that trial's answer, cached before its
record, is recorded again on resume without being paid twice.

>>> import tempfile
>>> from facetlab.records.schema import TrialRecord
>>> rec = TrialRecord(trial_id="t1", probe="p2", instance_id="i", n_factors=2,
...     model="simulated/wadd", provider="simulated", model_id="wadd", backend="simulated",
...     template="facet-v3", prompt="...", prompt_sha256="0" * 64, status="ok",
...     started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:00:01Z",
...     facetlab_version="0.1.0")
>>> with tempfile.TemporaryDirectory() as tmp:
...     writer = ShardWriter(tmp)
...     writer.append([rec])
...     writer.close()
...     [shard_statuses(p) for p in shard_files(tmp)]
[{'t1': 'ok'}]
"""

import json
import os
import secrets
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from facetlab.errors import RecordError, RecordWarning
from facetlab.jsonio import digest_problem
from facetlab.records.own import serialize_record
from facetlab.records.schema import TrialRecord

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: shards are not locked
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "SHARD_SUFFIX",
    "ShardWriter",
    "is_sealed",
    "iter_shard_lines",
    "shard_files",
    "shard_statuses",
    "sortable_stamp",
]

SHARD_SUFFIX = ".jsonl"
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A shard line longer than this is not read (a hostile or broken file)."""


def sortable_stamp() -> str:
    """UTC time to the nanosecond, so names sort in the order they were made
    (``20260101T120000.123456789``)."""
    now = time.time_ns()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 10**9)) + f".{now % 10**9:09d}"


def is_sealed(shard: Path) -> bool:
    """No process appends to ``shard`` any more: its writer closed it or died. (Always True
    where ``fcntl`` is missing, e.g. Windows, where shards are not locked.)"""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        with open(shard, "rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held by its writer, or gone
        return False
    return True


def shard_files(folder: Path | str) -> list[Path]:
    """The shards directly in ``folder`` (a sweep's ``records/``), oldest first (by name)."""
    root = Path(folder)
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob(f"shard-*{SHARD_SUFFIX}") if p.is_file())


class ShardWriter:
    """Appends records to one new shard of ``folder``; not thread-safe (one writer thread).

    The shard is created on the first :meth:`append`; its name carries the time, the
    process id and a random token, so two processes never append to one file.
    """

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        stamp = sortable_stamp()
        self.path = self.folder / f"shard-{stamp}-{os.getpid()}-{secrets.token_hex(3)}.jsonl"
        self._shard: int | None = None

    def append(self, records: Sequence[TrialRecord]) -> None:
        """Write ``records`` as one group: the lines, then one fsync.

        Raises ``OSError`` (full disk, ...) with nothing of the group counted as written;
        a partial line left behind is a torn tail, ignored by every reader.
        """
        if not records:
            return
        lines: list[bytes] = []
        for record in records:
            line = serialize_record(record).encode()
            if b"\n" in line:  # cannot happen with compact JSON; a torn shard if it did
                raise RecordError(f"record {record.trial_id}: its serialisation spans lines")
            lines.append(line + b"\n")
        if self._shard is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
            hidden = self.path.with_name(f".{self.path.name}")
            self._shard = os.open(hidden if fcntl else self.path, flags, 0o644)
            if fcntl is not None:  # live until closed; visible only once locked
                fcntl.flock(self._shard, fcntl.LOCK_EX)
                os.rename(hidden, self.path)
        _write_all(self._shard, b"".join(lines))
        os.fsync(self._shard)

    def close(self) -> None:
        """Close the shard (each group was synced when written)."""
        if self._shard is not None:
            os.close(self._shard)
        self._shard = None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def iter_shard_lines(shard: Path, start: int = 0) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` of every complete line of ``shard`` from byte ``start``.

    A torn last line (no newline: the writer was killed) is skipped with a
    :class:`RecordWarning`; a line past :data:`MAX_LINE_BYTES` ends the reading, with one.
    """
    with open(shard, "rb") as handle:
        handle.seek(start)
        offset = start
        while True:
            line = handle.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if not line.endswith(b"\n"):
                what = "an over-long line" if len(line) > MAX_LINE_BYTES else "a torn last line"
                warnings.warn(
                    f"{shard}: {what} at byte {offset} ignored (a writer stopped mid-record); "
                    "its trial is run again on resume",
                    RecordWarning,
                    stacklevel=2,
                )
                return
            yield offset, line
            offset += len(line)


def shard_statuses(shard: Path) -> dict[str, str]:
    """``trial_id -> status`` of the records in ``shard``, every line read and its digest
    checked (an edited line is asked again, as loading excludes it). Later lines of a trial replace earlier ones (a failed trial run again);
    an edited or unreadable line leaves its trial without a record."""
    found: dict[str, str] = {}
    for offset, line in iter_shard_lines(shard):
        tid, status, problem = _line_status(line)
        if problem is not None:
            warnings.warn(
                f"{shard}: the line at byte {offset} is {problem}; "
                "skipped on resume, its trial is run again",
                RecordWarning,
                stacklevel=2,
            )
            if tid is not None:
                found.pop(tid, None)
            continue
        assert tid is not None and status is not None
        found[tid] = status
    return found


def _line_status(line: bytes) -> tuple[str | None, str | None, str | None]:
    """A shard line's trial id, status and what is wrong with it (None: nothing)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None, None, "not a readable record"
    tid = data.get("trial_id") if isinstance(data, dict) else None
    status = data.get("status") if isinstance(data, dict) else None
    if not isinstance(tid, str) or not isinstance(status, str):
        return None, None, "not a readable record"
    edited = digest_problem(data)
    return tid, status, f"a record that {edited.removeprefix('it ')}" if edited else None

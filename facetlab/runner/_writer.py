"""Durable writes off the event loop: one writer thread, records committed in groups.

A trial hands its record (and, for a paid answer, how to cache it) to
:class:`RecordWriter` and awaits the outcome. The thread takes every job queued so
far as one group, and while calls are still in flight waits up to
:data:`COMMIT_WINDOW_S` for their answers to join it: with ``layout="shards"`` the
cache entries, then the records in one shard append and one fsync; with
``layout="files"`` one atomic file per record, one sync of the group (a ``syncfs``
on Linux), then each file linked into the cache as its entry (a record not written:
an entry of its own). Either way a paid answer reaches the disk before its trial
counts. A write that fails for any reason (not only the disk's) is that job's error: the
run stops on one line, the answer kept in the cache, and the thread goes on. Only then
is each job's future resolved, so a trial is counted (reported)
only once its record is on disk, and the event loop never waits on a disk.
"""

import asyncio
import contextlib
import errno
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from facetlab.files import sync_files
from facetlab.records.own import write_record
from facetlab.records.schema import TrialRecord
from facetlab.records.shards import ShardWriter

Layout = Literal["files", "shards"]

MAX_GROUP = 512
"""At most this many records in one group commit."""

MAX_BACKLOG = 64
"""No new call starts while this many answers wait for their group commit: a SIGKILL
loses (and the resumed run pays again) at most these and the calls in flight, however
slow the disk (an fsync on a busy machine can take longer than a thousand calls)."""

COMMIT_WINDOW_S = 0.02
"""While calls are in flight, a group waits up to this long for their answers (up to
half the backlog): one sync then serves several records. A record's own fsync cost
0.2–1.1 ms of CPU on this project's virtual disk; a sync of a group about one's. A
sweep with nothing else in flight (one slot, one at a time) never waits."""


@dataclass(frozen=True)
class Written:
    """What became of one job: the errors of its cache entry and of its record (None: written)."""

    cache_error: OSError | None = None
    record_error: OSError | None = None


def write_failure(exc: Exception) -> OSError:
    """Any failure of a write as the :class:`OSError` the run stops on, in one line: a
    record that cannot be written (whatever the reason) never kills the writer thread."""
    if isinstance(exc, OSError):
        return exc
    return OSError(
        errno.EIO, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    )


CacheEntry = Callable[[Path | None], None]
"""Caches a paid answer: given the record's file to link (None: write an entry)."""


@dataclass
class _Job:
    record: TrialRecord
    cache: CacheEntry | None
    future: asyncio.Future[Written] | None
    cache_error: OSError | None = field(default=None)


class RecordWriter:
    """One writer thread for a run's records (see the module)."""

    def __init__(
        self,
        folder: Path,
        layout: Layout,
        write_file: Callable[[TrialRecord, Path], Path | None] = lambda r, d: write_record(
            r, d, durable=False
        ),
        incoming: Callable[[], int] = lambda: 0,
    ) -> None:
        """``write_file`` writes one record's file, not synced (its group's sync makes it
        durable); ``incoming`` says how many answers are on their way (calls in flight)."""
        self.folder = folder
        self.layout = layout
        self._write_file = write_file
        self._incoming = incoming
        self._shard = ShardWriter(folder) if layout == "shards" else None
        self._jobs: deque[_Job] = deque()  # appended on the loop, taken by the thread
        self._wake = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._backlog = 0
        self._drained = asyncio.Event()  # bound to the run's loop at its first wait

    async def room(self) -> None:
        """Wait while :data:`MAX_BACKLOG` records wait for the disk (call before paying)."""
        while self._backlog >= MAX_BACKLOG:
            self._drained.clear()
            await self._drained.wait()

    def submit(
        self, record: TrialRecord, cache: CacheEntry | None = None
    ) -> asyncio.Future[Written]:
        """Queue ``record`` (``cache`` keeps its paid answer, in the thread)."""
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._loop, self._closing = loop, False
            self._thread = threading.Thread(target=self._work, name="facetlab-writer", daemon=True)
            self._thread.start()
        future: asyncio.Future[Written] = loop.create_future()
        self._backlog += 1
        self._jobs.append(_Job(record, cache, future))
        # the thread is woken once a group, not once an answer: by a group's first record,
        # and to end its window early (no call left in flight, or half the backlog here)
        if len(self._jobs) == 1 or not self._incoming() or len(self._jobs) >= MAX_BACKLOG // 2:
            self._wake.set()
        return future

    async def close(self) -> None:
        """Write what is queued, then stop the thread and close the shard."""
        if self._thread is not None:
            self._closing = True
            self._wake.set()
            await asyncio.to_thread(self._thread.join)
            self._thread = None
            await asyncio.sleep(0)  # let the last group's results land
        if self._shard is not None:
            # the index is only a shortcut: readers rebuild it from the shard
            with contextlib.suppress(OSError):
                self._shard.close()

    def _work(self) -> None:
        stopping = False
        while not stopping:
            group, stopping = self._gather()
            if group:
                try:
                    results = self._write(group)
                except Exception as exc:  # never a dead writer: the run stops on this line
                    results = [Written(job.cache_error, write_failure(exc)) for job in group]
                assert self._loop is not None
                # a closed loop: the records are on disk all the same
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(self._deliver, group, results)

    def _gather(self) -> tuple[list[_Job], bool]:
        """The next group, and whether the run is closing: what is queued, and while calls
        are in flight what comes within :data:`COMMIT_WINDOW_S` (see the module)."""
        self._wake.wait()
        deadline = time.monotonic() + COMMIT_WINDOW_S
        while self._waits() and self._wake.wait(deadline - time.monotonic()):
            pass  # woken: look again
        group = [self._jobs.popleft() for _ in range(min(len(self._jobs), MAX_GROUP))]
        if self._jobs:  # more than a group: the next one starts at once
            self._wake.set()
        return group, self._closing and not self._jobs

    def _waits(self) -> bool:
        """Whether the group still waits for answers (a wake after this check ends the wait)."""
        self._wake.clear()
        return not self._closing and self._incoming() > 0 and len(self._jobs) < MAX_BACKLOG // 2

    def _write(self, group: list[_Job]) -> list[Written]:
        if self._shard is not None:
            for job in group:  # the answer first: a record never exists without its entry
                self._cache(job, None)
            try:
                self._shard.append([job.record for job in group])
                return [Written(job.cache_error) for job in group]
            except Exception as exc:
                return [Written(job.cache_error, write_failure(exc)) for job in group]
        paths: list[Path | None] = []
        errors: list[OSError | None] = []
        for job in group:
            try:
                paths.append(self._write_file(job.record, self.folder))
                errors.append(None)
            except Exception as exc:
                paths.append(None)
                errors.append(write_failure(exc))
        try:  # one sync for the group: a record counts only once it is durable
            sync_files([path for path in paths if path is not None])
        except OSError as exc:
            errors = [error or exc for error in errors]
        for job, path, error in zip(group, paths, errors, strict=True):
            self._cache(job, None if error else path)  # not written: an entry of its own
        return [Written(job.cache_error, error) for job, error in zip(group, errors, strict=True)]

    @staticmethod
    def _cache(job: _Job, record: Path | None) -> None:
        if job.cache is not None:
            try:
                job.cache(record)
            except Exception as exc:
                job.cache_error = write_failure(exc)

    def _deliver(self, group: list[_Job], results: list[Written]) -> None:
        self._backlog -= len(group)
        self._drained.set()
        for job, result in zip(group, results, strict=True):
            if job.future is not None and not job.future.done():
                job.future.set_result(result)

"""The runner's record writer. A group of records is made durable by one sync (issue 27:
CPU per trial), and no trial counts before its group is synced; a failed sync counts
none of them. A slow disk holds back new calls, not paid answers: no call starts while
``MAX_BACKLOG`` answered records wait for their group commit, so a SIGKILL loses at
most those and the calls in flight (what the resumed run pays again)."""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from facetlab import files
from facetlab.records.schema import TrialRecord
from facetlab.runner import _writer
from facetlab.runner._writer import COMMIT_WINDOW_S, MAX_BACKLOG, RecordWriter, Written


def _record(i: int) -> TrialRecord:
    return TrialRecord(
        trial_id=f"t{i}", probe="p1", instance_id="i", n_factors=2, model="simulated/wadd",
        provider="simulated", model_id="wadd", backend="simulated", template="facet-v3",
        prompt=f"prompt {i}", prompt_sha256="0" * 64, status="ok", raw_response="F1",
        started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:00:01Z",
        facetlab_version="0",
    )  # fmt: skip


def test_one_sync_serves_a_group_and_comes_before_its_cache_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[Any] = []
    syncing, release = threading.Event(), threading.Event()

    def sync(paths: list[Path]) -> None:
        assert all(path.is_file() for path in paths)  # written (renamed in) before the sync
        events.append(("sync", len(paths)))
        syncing.set()
        release.wait(30)  # the first group's sync holds the writer while the rest queue

    monkeypatch.setattr(_writer, "sync_files", sync)
    n = 12

    async def scenario() -> list[Written]:
        writer = RecordWriter(tmp_path, "files")

        def entry(i: int) -> Any:
            return lambda path: events.append(("cache", i, path))

        futures = [writer.submit(_record(0), entry(0))]
        await asyncio.to_thread(syncing.wait, 30)
        futures += [writer.submit(_record(i), entry(i)) for i in range(1, n)]
        assert not any(future.done() for future in futures)  # none counted before its sync
        release.set()
        results = await asyncio.gather(*futures)
        await writer.close()
        return results

    results = asyncio.run(scenario())
    assert all(result == Written() for result in results)
    syncs = [event for event in events if event[0] == "sync"]
    assert syncs == [("sync", 1), ("sync", n - 1)]  # eleven records, one sync
    assert events.index(("sync", n - 1)) < min(
        i for i, event in enumerate(events) if event[0] == "cache" and event[1] > 0
    )
    linked = {event[1]: event[2] for event in events if event[0] == "cache"}
    assert linked == {i: tmp_path / f"t{i}.json" for i in range(n)}


def test_a_failed_sync_counts_no_record_of_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def sync(paths: list[Path]) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO), str(tmp_path))

    monkeypatch.setattr(_writer, "sync_files", sync)
    cached: list[Path | None] = []

    async def scenario() -> list[Written]:
        writer = RecordWriter(tmp_path, "files")
        futures = [writer.submit(_record(i), cached.append) for i in range(3)]
        results = await asyncio.gather(*futures)
        await writer.close()
        return results

    results = asyncio.run(scenario())
    assert [type(result.record_error) for result in results] == [OSError] * 3
    assert all("Input/output error" in str(result.record_error) for result in results)
    assert cached == [None, None, None]  # each answer in an entry of its own, not a link


class _Wake:
    """The writer's wake event, counted; ``during`` is what happens while the thread
    waits with a timeout (answers arriving), and says whether it was woken."""

    def __init__(self, during: Any = None) -> None:
        self.sets, self.waits, self.during = 0, [], during  # type: ignore[var-annotated]

    def set(self) -> None:
        self.sets += 1

    def clear(self) -> None:
        pass

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return self.during() if timeout is not None and self.during else True


@pytest.mark.parametrize("in_flight", [0, 5])
def test_a_group_waits_for_answers_only_while_calls_are_in_flight(
    tmp_path: Path, in_flight: int
) -> None:
    calls = [in_flight]
    writer = RecordWriter(tmp_path, "files", incoming=lambda: calls[0])

    def answers_arrive() -> bool:  # two answers; the second leaves no call in flight
        writer._jobs.extend(["answer 1", "answer 2"])  # type: ignore[list-item]
        calls[0] = 0
        return True  # woken by the last one

    wake = writer._wake = _Wake(answers_arrive)  # type: ignore[assignment]
    writer._jobs.extend(["a", "b"])  # type: ignore[list-item]
    group, stopping = writer._gather()
    assert not stopping and not writer._jobs
    if in_flight:  # one wait for the group (not one an answer), never past the window
        assert group == ["a", "b", "answer 1", "answer 2"]
        assert wake.waits[0] is None and len(wake.waits) == 2
        assert 0 < wake.waits[1] <= COMMIT_WINDOW_S
    else:  # nothing on its way: what is queued, at once
        assert group == ["a", "b"] and wake.waits == [None]


def test_the_writer_is_woken_once_a_group_not_once_an_answer(tmp_path: Path) -> None:
    calls = [5]
    writer = RecordWriter(tmp_path, "files", incoming=lambda: calls[0])
    wake = writer._wake = _Wake()  # type: ignore[assignment]
    writer._thread = threading.current_thread()  # no thread of its own: wakes are counted

    async def scenario() -> list[int]:
        sets = []
        for i in range(MAX_BACKLOG // 2):
            writer.submit(_record(i))
            sets.append(wake.sets)
        calls[0] = 0
        writer._jobs.clear()  # the thread took the group
        writer.submit(_record(99))  # a group's first record, with no call in flight
        writer.submit(_record(100))
        return [*sets, wake.sets]

    sets = asyncio.run(scenario())
    # the group's first record wakes it, then nothing until half the backlog is here
    assert sets[: MAX_BACKLOG // 2 - 1] == [1] * (MAX_BACKLOG // 2 - 1)
    assert sets[MAX_BACKLOG // 2 - 1] == 2
    assert sets[-1] == 4  # no call in flight: each record ends the window


def test_sync_files_is_one_syncfs_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []

    def syncfs(fd: int) -> int:
        synced.append(os.fstat(fd).st_ino)
        return 0

    monkeypatch.setattr(files, "_syncfs", lambda: syncfs)
    (tmp_path / "b").mkdir()
    paths = [tmp_path / "a1", tmp_path / "a2", tmp_path / "b" / "b1", tmp_path / "a3"]
    for path in paths:
        path.write_text("x")
    files.sync_files(paths)
    assert synced == [tmp_path.stat().st_ino, (tmp_path / "b").stat().st_ino]


def test_sync_files_says_which_folder_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def syncfs(fd: int) -> int:
        ctypes.set_errno(errno.EIO)
        return -1

    monkeypatch.setattr(files, "_syncfs", lambda: syncfs)
    (tmp_path / "r.json").write_text("{}")
    with pytest.raises(OSError, match="Input/output error") as failed:
        files.sync_files([tmp_path / "r.json"])
    assert failed.value.filename == str(tmp_path)


def test_without_syncfs_each_file_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsynced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(files, "_syncfs", lambda: None)  # not Linux
    monkeypatch.setattr(os, "fsync", lambda fd: fsynced.append(os.fstat(fd).st_ino) or real(fd))
    paths = [tmp_path / f"r{i}.json" for i in range(3)]
    for path in paths:
        path.write_text("{}")
    files.sync_files(paths)
    assert fsynced == [path.stat().st_ino for path in paths]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs is Linux's")
def test_the_real_syncfs_is_found_and_succeeds(tmp_path: Path) -> None:
    assert files._syncfs() is not None
    (tmp_path / "r.json").write_text("{}")
    files.sync_files([tmp_path / "r.json"])  # raises on a failure


def test_no_new_call_while_the_backlog_is_full(tmp_path: Path) -> None:
    disk = threading.Event()
    written: list[str] = []

    def slow_write(record: TrialRecord, folder: Path) -> None:
        disk.wait()  # the disk answers only when the test says so
        written.append(record.trial_id)

    async def scenario() -> None:
        writer = RecordWriter(tmp_path, "files", write_file=slow_write)
        futures = [writer.submit(_record(i)) for i in range(MAX_BACKLOG - 1)]
        await asyncio.wait_for(writer.room(), 10)  # one short of the backlog: room
        futures.append(writer.submit(_record(MAX_BACKLOG)))
        room = asyncio.ensure_future(writer.room())
        await asyncio.sleep(0.05)
        assert not room.done()  # a full backlog: the next call waits
        disk.set()
        await asyncio.wait_for(room, 30)
        await asyncio.gather(*futures)
        await writer.close()

    asyncio.run(scenario())
    assert len(written) == MAX_BACKLOG

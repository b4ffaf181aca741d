"""A full disk loses no paid answer: the cache and ``--out`` on one small tmpfs.

With the default cache inside ``--out`` on a disk that fills up mid-sweep, a cache
write used to fail, then the record write too: 8 of 14 paid answers were kept
nowhere and paid again on resume, while the message said every answer was kept. Now
a failed cache write is tried again, then written into the space the sweep set aside
at its start, else kept in memory and written to an emergency file that the next
run reads back; the message says which.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer
from reliability_helpers import (
    cli,
    instances_folder,
    paid_report,
    records_written,
    run_args,
    start_cli,
    wait_for_records,
)

import facetlab.client.cache as cache_module
from facetlab.backends.base import ModelResponse, Usage
from facetlab.client.cache import CacheWriteError, ResponseCache

TRIALS = 30


def _mount_problem(path: Path) -> str | None:
    if not sys.platform.startswith("linux"):
        return "a tmpfs can be mounted only on Linux"
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root (run as root or in a user namespace)"
    if shutil.which("mount") is None:
        return "no mount command"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"mount -t tmpfs failed: {done.stderr.strip() or done.returncode}"
    return None


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 12 MB tmpfs (skipped with the reason where mounting is impossible)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    problem = _mount_problem(mnt)
    if problem is not None:
        pytest.skip(f"full-disk test needs a small file system of its own: {problem}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False, capture_output=True)


def _fill(disk: Path) -> None:
    """Write until the file system has no byte left."""
    with open(disk / "filler", "wb", buffering=0) as handle:
        for chunk in (1 << 20, 1 << 16, 1 << 12, 1 << 8, 1):
            try:
                while handle.write(b"\0" * chunk):
                    pass
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_full_disk_with_the_cache_on_it_loses_no_paid_answer(
    tmp_path: Path, small_disk: Path
) -> None:
    folder = instances_folder(tmp_path / "i", n=TRIALS)
    out = small_disk / "o"  # the default cache, <out>/cache, is on the same disk
    with FakeLLMServer(latency_s=0.3) as server:
        args = run_args(server, folder, out, "--concurrency", "4")
        proc = start_cli(args)
        wait_for_records(out, 4, proc)
        _fill(small_disk)  # calls are in flight: their answers arrive on a full disk
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 2, stdout + stderr
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "no space left on device" in errors[0], stderr
        assert "Traceback" not in stderr
        full = paid_report(server, out)
        assert full.paid < TRIALS  # the sweep did stop on the full disk
        if "emergency file" in errors[0]:  # the message names where the answers are
            where = errors[0].split("emergency file ", 1)[1].split(" (", 1)[0]
            assert Path(where).is_file()
        else:
            assert "Every answer paid for is kept (in the cache)" in errors[0]

        (small_disk / "filler").unlink()
        resumed = cli(*args)
        assert resumed.exit_code == 0, resumed.output
        report = paid_report(server, out)
    assert records_written(out) == TRIALS
    assert report.duplicates == 0 and report.lost == 0 and report.paid == TRIALS
    assert not list((out / "cache").glob(".reserve-*"))  # the reserve is given back


def _response(i: int) -> ModelResponse:
    return ModelResponse(text=f"answer {i}", model_id="m", usage=Usage(10, 2, None, None))


def _failing_under(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Writes under ``root`` fail with ENOSPC; returns the paths tried."""
    real = cache_module.atomic_write_text
    tried: list[Path] = []

    def write(path: Path, text: str, *, durable: bool = True) -> None:
        if root in path.parents:
            tried.append(path)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, text, durable=durable)

    monkeypatch.setattr(cache_module, "atomic_write_text", write)
    return tried


def test_a_failed_cache_write_is_tried_again_then_uses_the_reserve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ResponseCache(tmp_path / "cache")
    cache.reserve(64 * 1024)
    assert len(list((tmp_path / "cache").glob(".reserve-*"))) == 1
    real = cache_module.atomic_write_text
    failures = iter([True, True])  # the first two writes fail; the third, after the release, works

    def write(path: Path, text: str, *, durable: bool = True) -> None:
        if next(failures, False):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, text, durable=durable)

    monkeypatch.setattr(cache_module, "atomic_write_text", write)
    key = "ab" + "0" * 62
    with pytest.raises(CacheWriteError) as caught:
        cache.put(key, _response(1))
    assert caught.value.kept == "cache" and caught.value.errno == errno.ENOSPC
    assert not list((tmp_path / "cache").glob(".reserve-*"))  # released for this answer
    assert cache.get(key) is not None and not cache.unsaved


def test_answers_no_disk_takes_go_to_an_emergency_file_read_back_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    root = tmp_path / "cache"
    cache = ResponseCache(root)
    keys = [f"{i:02d}" + "0" * 62 for i in range(3)]
    _failing_under(root, monkeypatch)
    for i, key in enumerate(keys):
        with pytest.raises(CacheWriteError) as caught:
            cache.put(key, _response(i))
        assert caught.value.kept == "memory"
    note = cache.save_unsaved()
    assert note is not None and "3 answer(s) paid for are in the emergency file" in note
    emergency = Path(note.split("emergency file ", 1)[1].split(" (", 1)[0])
    assert emergency.is_file() and root not in emergency.parents

    monkeypatch.undo()  # the disk has room again: the next run reads them back
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    again = ResponseCache(root)
    again.reserve(4096)
    assert [again.get(k).text for k in keys] == ["answer 0", "answer 1", "answer 2"]  # type: ignore[union-attr]
    assert not emergency.exists()
    again.release()


def test_no_writable_place_at_all_is_said_not_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ResponseCache(tmp_path / "cache")
    _failing_under(tmp_path, monkeypatch)
    monkeypatch.setattr(cache, "_emergency_places", lambda: [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(CacheWriteError):
        cache.put("cd" + "0" * 62, _response(0))
    note: Any = cache.save_unsaved()
    assert "1 answer(s) paid for could not be written" in note

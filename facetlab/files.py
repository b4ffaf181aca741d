"""Writing files safely: atomic replacement, and checking a folder before relying on it.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> atomic_write_text(folder / "note.txt", "hello")
>>> (folder / "note.txt").read_text()
'hello'
>>> check_writable_dir(folder / "sub", what="--out") is None
True
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

MIN_FREE_BYTES = 5 * 1024 * 1024
"""Free space a sweep folder needs before the first paid call (records are ~4 KB)."""


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so readers see either the old file or the whole new one.

    A temp file in the same folder, fsync, then ``os.replace``: a process killed
    mid-write leaves no half-written file (only a ``.<name>.*.tmp`` that the next
    sweep run removes). Records, cache entries, ``sweep.json`` and batch state are
    all written this way. ``durable=False`` leaves out the fsync (a response-cache
    entry: it outlives the process, not necessarily a power loss, where the answer's
    record is the durable copy): the most of a file's CPU on a busy disk.
    """

    def temp_file() -> tuple[int, str]:
        return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")

    try:
        fd, tmp_name = temp_file()
    except FileNotFoundError:  # the folder first (made only when missing: a call less)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = temp_file()
    try:
        try:  # the descriptor itself: a file object costs four more system calls
            rest = memoryview(data)
            while rest:
                rest = rest[os.write(fd, rest) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def sync_files(paths: Sequence[Path]) -> None:
    """Make files written with ``durable=False`` durable, their names too: on Linux one
    ``syncfs`` of each folder's file system for all of them (a group of records costs
    one flush, not one fsync each), elsewhere an fsync of each file.

    Raises ``OSError`` naming the folder (or file) that could not be synced.
    """
    import ctypes  # here: not on every command's start

    syncfs = _syncfs()
    targets = paths if syncfs is None else list(dict.fromkeys(path.parent for path in paths))
    for target in targets:
        fd = os.open(target, os.O_RDONLY)
        try:
            if syncfs is None:
                os.fsync(fd)
            elif syncfs(fd) != 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code), str(target))
        finally:
            os.close(fd)


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    """The C library's ``syncfs`` (Linux), else None."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return None
    try:
        call: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):  # a C library without it
        return None
    return call


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """:func:`atomic_write_bytes` of ``text`` as UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def check_writable_dir(path: Path, *, what: str, min_free: int = MIN_FREE_BYTES) -> str | None:
    """Create ``path`` if needed; say why it cannot hold new files, or ``None`` when it can.

    Checks that it is a folder (not a file), that a file can be created in it and
    that at least ``min_free`` bytes are free. ``what`` names the setting in the
    message (``"--out"``, ``"--cache-dir"``).
    """
    if path.exists() and not path.is_dir():
        return f"{what} {path} is a file; expected a folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".facetlab-probe.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"{what} {path} is not writable: {exc.strerror or exc}"
    free = shutil.disk_usage(path).free
    if free < min_free:
        return (
            f"{what} {path} has {free / 1e6:.1f} MB free; expected at least "
            f"{min_free / 1e6:.0f} MB (free some space or choose another folder)"
        )
    return None

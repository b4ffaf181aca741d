"""Cross-process claims on cache keys: which sweep is paying for which answer.

Sweeps sharing a cache folder claim a key before they pay for it; a second sweep
asking the same question waits for the first one's answer instead of paying again.

A claim is one byte of one lock file (``<cache>/.claims``), at an offset taken from
the key, locked with a POSIX record lock (``fcntl.lockf``): one system call to claim
and one to release, no file per key (a per-key lock file cost ~1 ms per trial and left
a million empty files behind a million-trial sweep). The kernel drops the locks of a
process that dies, so a SIGKILL leaves nothing to clean up.

POSIX record locks belong to the process, not to the file descriptor, and closing any
descriptor of the file drops them all; so each process opens the lock file once (and
keeps it open), and tasks of one process claiming the same key are kept apart by a set
of held keys. POSIX record locks exist on Linux and macOS; elsewhere (Windows) a cache
cannot be claimed, and :func:`claim_key` says so.
"""

import asyncio
import contextlib
import hashlib
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

CLAIMS_FILE = ".claims"
"""Name of the lock file in the cache folder."""

_OFFSET_HEX = 15
"""Hex digits of the key that give its byte offset (60 bits: collisions only make a
claim wait, and are one in 10^18)."""


class _ClaimFile:
    """One process's handle on one lock file: its descriptor and the keys it holds."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.held: set[str] = set()
        self.mutex = threading.Lock()

    def try_claim(self, key: str) -> bool:
        with self.mutex:
            if key in self.held:
                return False
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _offset(key), os.SEEK_SET)
            except OSError:  # EAGAIN / EACCES: another process holds it
                return False
            self.held.add(key)
            return True

    def release(self, key: str) -> None:
        with self.mutex:
            self.held.discard(key)
            fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, _offset(key), os.SEEK_SET)


# By (device, inode): two spellings of one folder share one handle and one set of held
# keys. Descriptors are never closed (that would drop the process's locks on the file).
_FILES: dict[tuple[int, int], _ClaimFile] = {}
_FILES_MUTEX = threading.Lock()


def _offset(key: str) -> int:
    """The byte a key locks: its first hex digits (a cache key is a sha256), else a hash."""
    try:
        return int(key[:_OFFSET_HEX], 16)
    except ValueError:  # a caller's own key (ModelClient.generate takes any string)
        return int(hashlib.sha256(key.encode()).hexdigest()[:_OFFSET_HEX], 16)


def _claim_file(root: Path) -> _ClaimFile:
    """This process's handle on ``root``'s lock file."""
    path = root / CLAIMS_FILE
    with _FILES_MUTEX:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            pass
        else:
            found = _FILES.get((st.st_dev, st.st_ino))
            if found is not None:
                return found
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        st = os.fstat(fd)  # under the mutex: no other handle on this file can appear
        found = _FILES[(st.st_dev, st.st_ino)] = _ClaimFile(fd)
        return found


@contextlib.asynccontextmanager
async def claim_key(root: Path, key: str, *, poll_s: float = 0.05) -> AsyncIterator[None]:
    """Hold ``key``'s claim in the cache folder ``root`` across processes.

    Waits, without blocking the event loop, while another task or process holds it.
    """
    if fcntl is None:  # pragma: no cover - Windows
        raise OSError("claiming a cache key needs POSIX record locks (fcntl): Linux or macOS")
    handle = _claim_file(root)
    while not handle.try_claim(key):
        await asyncio.sleep(poll_s)
    try:
        yield
    finally:
        handle.release(key)

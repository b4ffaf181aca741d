"""One runner per sweep directory at a time.

Two processes running the same sweep would each pay for the trials the other
has not recorded yet. ``<out>/.lock`` is an operating-system file lock
(``filelock``): the kernel releases it when its process dies, so there is no
stale lock to take over and no window in which two runs both believe they hold
it. ``<out>/.lock.owner`` names the holder's pid for the refusal message only.
A new holder removes the half-written temp files a killed run left behind.
"""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import filelock

from facetlab.errors import ConfigError


def _write_owner(path: Path) -> None:
    # one function: a test slows it down to widen the window a racing run must not misread
    path.write_text(str(os.getpid()), encoding="utf-8")


def _owner(path: Path) -> str:
    try:
        pid = path.read_text(encoding="utf-8").strip()
    except OSError:
        return "another facetlab run"
    return f"another facetlab run (pid {pid})" if pid.isdigit() else "another facetlab run"


@contextlib.contextmanager
def sweep_lock(out: Path) -> Iterator[None]:
    """Hold ``<out>/.lock`` for the duration of a run; a ConfigError if another run holds it."""
    out.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(out / ".lock", thread_local=False)
    owner = out / ".lock.owner"
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        raise ConfigError(
            f"{out}: {_owner(owner)} is using this sweep directory; wait for it to finish "
            "(or stop it) and run again"
        ) from None
    try:
        _write_owner(owner)
        records = out / "records"
        for stale in records.glob(".*.tmp") if records.is_dir() else []:
            with contextlib.suppress(OSError):
                stale.unlink()
        yield
    finally:
        with contextlib.suppress(OSError):
            owner.unlink()
        lock.release()

"""One runner per sweep directory at a time.

Two processes running the same sweep would each pay for the trials the other
has not recorded yet. ``<out>/.lock`` holds the owner's pid; a lock whose process
is gone (killed) is taken over, and the dead run's half-written temp files are
removed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from facetlab.errors import ConfigError


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def sweep_lock(out: Path) -> Iterator[None]:
    """Hold ``<out>/.lock`` for the duration of a run."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / ".lock"
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid = int(path.read_text().strip() or "0")
            except (OSError, ValueError):
                pid = 0
            if pid != os.getpid() and _alive(pid):
                raise ConfigError(
                    f"{out}: another facetlab run (pid {pid}) is using this sweep directory; "
                    f"wait for it or remove {path} if that process is not a facetlab run"
                ) from None
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(str(os.getpid()))
        break
    for stale in (out / "records").glob(".*.tmp") if (out / "records").is_dir() else []:
        with contextlib.suppress(OSError):
            stale.unlink()
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

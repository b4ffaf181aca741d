"""Make sure no process an agent starts outlives ``craft``.

An agent may start processes (a local model server, a shell tool) and leave them
running, or fork a child that detaches itself (``setsid``, a double fork). The CLI calls
:func:`adopt_orphans` first: on Linux the ``craft`` process becomes a *child
subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), so any descendant whose parent exits is
re-parented to ``craft`` instead of to ``init``, however it detached. On every way out
(result, error, Ctrl-C) the CLI calls :func:`kill_descendants`, which finds all
descendants from ``/proc`` and kills them. Elsewhere (no ``/proc``) both are no-ops and
``docs/craft.md`` says so.

It is only for the ``craft`` process itself: called inside another program (a test
runner, a notebook kernel) it would kill that program's own children.

>>> descendants(pid=2**22 + 1)   # a pid that does not exist has no descendants
[]
"""

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> bool:
    """Become a child subreaper (Linux); whether it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """``pid -> parent pid`` for every process visible in ``/proc``."""
    out: dict[int, int] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return out
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may contain spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1].isdigit():
            out[int(entry.name)] = int(fields[1])
    return out


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of ``pid`` (default: this process)."""
    root = os.getpid() if pid is None else pid
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def kill_descendants() -> int:
    """SIGKILL every descendant (repeated until none is left); how many were killed."""
    killed = 0
    for _ in range(5):  # a dying child can fork once more before the kill lands
        found = descendants()
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        for pid in found:  # reap our own children so they are not left as zombies
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)
    return killed

"""What the benchmarks share: the load average, a process's own peak memory, and a
function run in a fresh Python process (so that its memory is its own).

    from measure import load_average, peak_rss_mib, run_in_child
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, ``"0.52/0.80/0.91"``."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}/{five:.2f}/{fifteen:.2f}"


def peak_rss_mib() -> float:
    """This process's peak RSS: ``VmHWM``, its own memory's high-water mark (``ru_maxrss``
    would carry over the parent's at the fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_in_child(module: str, call: str, what: str) -> dict[str, Any]:
    """``module.call`` (a Python expression, e.g. ``child('run', 100)``) evaluated in a fresh
    process; the JSON object it returns. ``what`` names it when the child fails."""
    code = (
        "import json, sys, warnings; warnings.simplefilter('ignore'); "
        f"sys.path.insert(0, {str(BENCHMARKS)!r}); import {module} as b; "
        f"print('RESULT', json.dumps(b.{call}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr[-3000:]}")
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    result: dict[str, Any] = json.loads(line[len("RESULT ") :])
    return result

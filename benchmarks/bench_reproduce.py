"""Wall time of the whole paper reproduction (``facetlab reproduce``).

Targets: at most 20 s on an idle 2-core machine, and CPU time (user + system, every
process) at most 2x that of the FACET repository's own scripts on the same data (issue
41). Those scripts are not in this checkout, so their figure is a constant measured
once beside the command (:data:`FACET_SCRIPTS_CPU_S`). Runs the real command in a subprocess
(as a user would), so the time includes kernel start-up and papermill. The machine
is often shared: the load average before and after is printed with the time, and
the CPU time of all processes divided by the kernels is the idle-machine estimate.

    FACETLAB_DATA_MIRROR=../shared/facet-data python benchmarks/bench_reproduce.py [--out DIR]

Everything (executed notebooks, tables, figures, claims, report) goes to a temporary
folder (``--out``): the benchmark never rewrites the checkout.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 20.0

FACET_SCRIPTS_CPU_S = 7.25
"""CPU seconds (user + system) of the FACET repository's own analysis scripts on the FACET
v3 data, measured on this project's 2-core machine in the same session as `facetlab
reproduce`'s 25.3 s (issue 41's "Why"). The scripts are not available here, so the
figure is not re-measured: re-measure it beside this benchmark where they are."""

TARGET_CPU_RATIO = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="folder for every output (default: a temp dir)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        command = [
            sys.executable,
            "-c",
            "from facetlab.cli import main; main()",
            "reproduce",
            "--out",
            out,
            "--workers",
            str(args.workers),
        ]
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=root, env=os.environ.copy(), check=False)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU of the command, its workers and kernels: on a busy machine the wall time also
    # counts other processes, so CPU / cores is the estimate for an idle one.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cores = os.cpu_count() or 1
    status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
    verdict = "within" if seconds <= TARGET_SECONDS else "OVER"
    print(
        f"facetlab reproduce: {seconds:.1f} s wall on {cores} cores, "
        f"{args.workers} kernels, {status}; {verdict} the {TARGET_SECONDS:.0f} s target"
    )
    print(
        f"CPU time {cpu:.1f} s (user + system, all processes); "
        f"idle-machine estimate {cpu / min(cores, args.workers):.1f} s; "
        f"1-min load average before {load_before:.1f}, after {os.getloadavg()[0]:.1f}"
    )
    ratio = cpu / FACET_SCRIPTS_CPU_S
    print(
        f"CPU beside the FACET scripts': {cpu:.1f} s vs {FACET_SCRIPTS_CPU_S:.2f} s (measured "
        f"earlier, not here) = {ratio:.2f}x; "
        f"{'PASS' if ratio <= TARGET_CPU_RATIO else 'FAIL'} (<= {TARGET_CPU_RATIO:g}x)"
    )
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())

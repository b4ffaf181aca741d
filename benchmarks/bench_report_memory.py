"""``facetlab report``'s peak memory against the number of records (issue 41, item 1).

Simulated sweeps (the FACET instances under ``p1,p2,p3,c2``, 100 trials per repeat, the
simulated reasoner ``simulated/wadd``; ``--model simulated/wadd+trace`` gives every
weighted reply thinking text, so the traces section has work to do) of each tier are
built once (kept with ``--keep``), then ``facetlab report`` runs on each while the RSS of
its whole process tree (the command and the notebook kernel it starts, summed at each
sample, every 20 ms) is sampled; the peak of that sum is the figure.

Acceptance: the peak at 60k <= 1.3x the peak at 20k, and <= 1 GB. A straight line through
the two tiers projects 10^6 (the acceptance there: <= 3 GB and <= 5 min); ``--million``
measures it instead (a sweep of 10^6 simulated trials takes ~4 min of both cores and
~1.5 GB of disk, the report then as long as the projection says).

    python benchmarks/bench_report_memory.py [--tiers 20000,60000] [--million] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from measure import load_average, run_in_child

ROOT = Path(__file__).resolve().parents[1]
TRIALS_PER_REPEAT = 100
MIB = 2**20
GB = 1024**3
CLI = "import sys; from facetlab.cli import main; sys.argv[0] = 'facetlab'; main()"


def child_sweep(out: str, repeats: int, model: str) -> dict[str, Any]:
    """One simulated sweep (in a child process of its own)."""
    import io

    from facetlab.runner import run

    start = time.perf_counter()
    result = run(
        None, "p1,p2,p3,c2", model, out=out, repeats=repeats, progress="none",
        console=io.StringIO(),
    )  # fmt: skip
    return {"wall_s": time.perf_counter() - start, "ok": result.stats.ok}


def _tree_rss(root: psutil.Process) -> int:
    """The summed RSS of ``root`` and every process under it, now."""
    total = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_info().rss
        except psutil.Error:  # ended between the listing and the reading
            continue
    return total


def report_peak(sweep: Path, instances: Path, dest: Path) -> dict[str, Any]:
    """``facetlab report`` on ``sweep``: wall time and the peak RSS of its process tree."""
    start = time.perf_counter()
    command = [sys.executable, "-c", CLI, "report", str(sweep), "--instances", str(instances),
               "--out", str(dest)]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        root = psutil.Process(proc.pid)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _tree_rss(root))
            time.sleep(0.02)
        _, err = proc.communicate()
    wall = time.perf_counter() - start
    return {"wall_s": wall, "peak": peak, "ok": proc.returncode == 0, "error": err.decode()[-2000:]}


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiers", default="20000,60000")
    parser.add_argument("--million", action="store_true", help="also measure 10^6 trials")
    parser.add_argument("--model", default="simulated/wadd")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the sweeps in this folder")
    args = parser.parse_args()
    tiers = [int(t) for t in args.tiers.split(",") if t] + ([10**6] if args.million else [])
    data = Path(os.environ.get("FACETLAB_DATA_MIRROR") or ROOT.parent / "shared" / "facet-data")
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-memory-"))
    base.mkdir(parents=True, exist_ok=True)
    peaks: dict[int, dict[str, Any]] = {}
    try:
        for n in tiers:
            sweep = base / f"sweep-{n}-{args.model.replace('/', '_')}"
            if not (sweep / "records").is_dir():
                call = (
                    f"child_sweep({str(sweep)!r}, {max(1, n // TRIALS_PER_REPEAT)}, {args.model!r})"
                )
                made = run_in_child("bench_report_memory", call, "sweep")
                print(f"sweep {n:,}: {made['wall_s']:.0f} s [load {load_average()}]", flush=True)
            dest = base / f"report-{n}"
            shutil.rmtree(dest, ignore_errors=True)
            rep = peaks[n] = report_peak(sweep, data / "instances", dest)
            print(
                f"report {n:,} trials ({args.model}): {rep['wall_s']:.1f} s, "
                f"{'ok' if rep['ok'] else 'FAILED'}, peak RSS of the process tree "
                f"{rep['peak'] / MIB:.0f} MiB [load {load_average()}]",
                flush=True,
            )
            if not rep["ok"]:
                print(rep["error"])
        if 20_000 in peaks and 60_000 in peaks:
            low, high = peaks[20_000], peaks[60_000]
            ratio = high["peak"] / low["peak"]
            print(f"  {_verdict(ratio <= 1.3)}: peak at 60k / 20k = {ratio:.2f} (<= 1.3)")
            print(f"  {_verdict(high['peak'] <= GB)}: peak at 60k = {high['peak'] / MIB:.0f} MiB "
                  "(<= 1 GB)")  # fmt: skip
            per = (high["peak"] - low["peak"]) / 40_000
            projected = high["peak"] + per * (10**6 - 60_000)
            seconds = high["wall_s"] + (high["wall_s"] - low["wall_s"]) / 40_000 * (10**6 - 60_000)
            print(
                f"  10^6 projected (a line through 20k and 60k): {projected / MIB:.0f} MiB "
                f"({per:.0f} B per trial), {seconds:.0f} s; "
                f"{_verdict(projected <= 3 * GB and seconds <= 300)} (<= 3 GB, <= 5 min)"
            )
        if 10**6 in peaks:
            top = peaks[10**6]
            fits = top["ok"] and top["peak"] <= 3 * GB and top["wall_s"] <= 300
            print(f"  {_verdict(fits)}: 10^6 measured {top['peak'] / MIB:.0f} MiB, "
                  f"{top['wall_s']:.0f} s (<= 3 GB, <= 5 min)")  # fmt: skip
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

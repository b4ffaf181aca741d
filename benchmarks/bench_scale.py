"""Sweeps of 10k, 100k (and, opt-in, 10^6) simulated trials: time, memory, disk, resume,
``load_trials`` and ``facetlab report``, each checked against issue 21's acceptance.

Each tier runs the FACET instances (``p1,p2,p3,c2``, 100 trials per repeat) with the
simulated reasoner ``simulated/wadd`` (no provider limit in the way), in child
processes so that each figure's peak RSS is its own:

1. the sweep (``facetlab.run``; records in shards, compacted into Parquet at the end):
   wall time, time per trial, peak RSS, bytes on disk, and the seconds spent planning
   (``prepare``: checks, ``plan_sweep``, the estimate; the executor's scan of what is
   recorded) and compacting, with their share of the run's wall time (issue 41: <= 15%
   at 100k), timed by wrappers this benchmark puts around those functions;
2. the same sweep again (a resume of a finished sweep): wall time and calls made;
3. ``load_trials(records=...)``: time and peak RSS;
4. ``facetlab report`` (the study notebook, headless): time and peak RSS (the notebook
   kernel included).

Acceptance (2 cores): time per trial at 100k within 1.2x of 10k; 10^6 trials in one
sweep with peak RSS <= 1 GB; resume of a finished 10^6 sweep <= 30 s with 0 calls;
``load_trials`` of 10^6 <= 20 s and <= 2 GB; ``facetlab report`` on 10^6 <= 120 s and
<= 3 GB. The load average is printed with every figure: the machine may be shared.

    python benchmarks/bench_scale.py [--million] [--tiers 10000,100000] [--no-report] [--keep DIR]
"""

from __future__ import annotations

import argparse
import inspect
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import load_average, run_in_child

ROOT = Path(__file__).resolve().parents[1]
TRIALS_PER_REPEAT = 100  # the FACET instances under p1,p2,p3,c2
MODEL = "simulated/wadd"
GB = 1024**3
CLI = "import sys; from facetlab.cli import main; sys.argv[0] = 'facetlab'; main()"


def _peak_rss_self() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --------------------------------------------------------------------------- children


def _timed(phases: dict[str, float], name: str, module: Any, attr: str) -> None:
    """Replace ``module.attr`` by a wrapper that adds its wall time to ``phases[name]``."""
    original = getattr(module, attr)

    def add(start: float) -> None:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - start

    if inspect.iscoroutinefunction(original):

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                add(start)

        setattr(module, attr, timed_async)
    else:

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                add(start)

        setattr(module, attr, timed)


def child_run(out: str, repeats: int) -> dict[str, Any]:
    import io

    from facetlab.runner import api, executor, run

    phases: dict[str, float] = {}
    # the names the runner calls them by (imported into api and executor)
    _timed(phases, "prepare", api, "prepare")
    _timed(phases, "plan", api, "plan_sweep")
    _timed(phases, "estimate", api, "estimate")
    _timed(phases, "scan", executor, "existing_status")
    _timed(phases, "compact", api, "_compact")
    start = time.perf_counter()
    result = run(
        None, "p1,p2,p3,c2", MODEL, out=out, repeats=repeats, progress="none",
        console=io.StringIO(),
    )  # fmt: skip
    wall = time.perf_counter() - start
    stats = result.stats
    return {
        "wall_s": wall,
        "sweep_s": stats.elapsed_s,
        "total": stats.total,
        "ok": stats.ok,
        "failed": stats.failed,
        "already_done": stats.already_done,
        "calls": stats.calls,
        "peak_rss": _peak_rss_self(),
        "phases": phases,
    }


def _phases_line(ran: dict[str, Any], *, judged: bool = True) -> str:
    """Planning and compaction in seconds and as shares of the run's wall time (``judged``:
    against issue 41's 15%, which is about a run that makes its calls)."""
    ph, wall = ran["phases"], ran["wall_s"]
    planning = ph.get("prepare", 0.0) + ph.get("scan", 0.0)
    compacting = ph.get("compact", 0.0)
    share = (planning + compacting) / wall
    return (
        f"planning {planning:.1f} s ({planning / wall:.0%}: plan_sweep {ph.get('plan', 0.0):.1f}"
        f" s, estimate {ph.get('estimate', 0.0):.1f} s, the executor's scan "
        f"{ph.get('scan', 0.0):.1f} s), compaction {compacting:.1f} s ({compacting / wall:.0%});"
        f" together {share:.0%} of {wall:.1f} s wall"
        + (f" ({_verdict(share <= 0.15)}: <= 15%)" if judged else "")
    )


def child_load(out: str) -> dict[str, Any]:
    start = time.perf_counter()
    from facetlab.records import load_trials

    frame = load_trials(records=out)
    return {
        "wall_s": time.perf_counter() - start,
        "rows": len(frame),
        "peak_rss": _peak_rss_self(),
    }


def _child(kind: str, *args: str) -> dict[str, Any]:
    first, rest = args[0], [int(a) for a in args[1:]]
    return run_in_child("bench_scale", f"child_{kind}({first!r}, *{rest!r})", f"{kind} child")


def _report(out: Path, instances: Path, dest: Path) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CLI, "report", str(out), "--instances",
         str(instances), "--out", str(dest)],
        capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "wall_s": wall,
        "ok": done.returncode == 0,
        "error": done.stderr[-2000:] if done.returncode else "",
        # the largest process waited for so far (the kernel included); a lower bound
        # when an earlier child was larger
        "peak_rss": max(peak, before) * 1024,
        "peak_is_this": peak > before,
    }


def _du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- main


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiers", default="10000,100000")
    parser.add_argument("--million", action="store_true", help="also run 10^6 trials")
    parser.add_argument("--no-report", action="store_true", help="skip facetlab report")
    parser.add_argument("--keep", type=Path, help="keep the sweeps in this folder")
    args = parser.parse_args()
    tiers = [int(t) for t in args.tiers.split(",") if t]
    if args.million:
        tiers.append(1_000_000)
    data = Path(os.environ.get("FACETLAB_DATA_MIRROR") or ROOT.parent / "shared" / "facet-data")
    instances = data / "instances"
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    base.mkdir(parents=True, exist_ok=True)
    per_trial: dict[int, float] = {}
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    try:
        for n in tiers:
            repeats = max(1, n // TRIALS_PER_REPEAT)
            out = base / f"sweep-{n}"
            if out.exists():
                shutil.rmtree(out)
            say(f"== {n:,} trials ({repeats} repeats) [load {load_average()}]")
            ran = _child("run", str(out), str(repeats))
            assert ran["ok"] == ran["total"] == n, ran
            per_trial[n] = ran["wall_s"] / n
            say(
                f"run: {ran['wall_s']:.1f} s wall ({ran['sweep_s']:.1f} s trials, the rest "
                f"planning and compaction), {per_trial[n] * 1e3:.3f} ms/trial, peak RSS "
                f"{ran['peak_rss'] / 2**20:.0f} MiB [load {load_average()}]"
            )
            say(f"  {_phases_line(ran)}")
            say(f"disk: {_du(out / 'records') / 2**20:.1f} MiB in records/ "
                f"({_du(out / 'records') / n:.0f} B/trial)")  # fmt: skip
            again = _child("run", str(out), str(repeats))
            say(
                f"resume: {again['wall_s']:.1f} s, {again['calls']} calls, "
                f"{again['already_done']:,} already done, peak RSS "
                f"{again['peak_rss'] / 2**20:.0f} MiB [load {load_average()}]"
            )
            say(f"  resume {_phases_line(again, judged=False)}")
            loaded = _child("load", str(out))
            say(
                f"load_trials: {loaded['wall_s']:.1f} s (import included), {loaded['rows']:,} "
                f"rows, peak RSS {loaded['peak_rss'] / 2**20:.0f} MiB [load {load_average()}]"
            )
            rep: dict[str, Any] | None = None
            if not args.no_report:
                rep = _report(out, instances, base / f"report-{n}")
                say(
                    f"report: {rep['wall_s']:.1f} s, {'ok' if rep['ok'] else 'FAILED'}, peak "
                    f"RSS {rep['peak_rss'] / 2**20:.0f} MiB"
                    f"{'' if rep['peak_is_this'] else ' (a bound: an earlier child was larger)'}"
                    f" [load {load_average()}]"
                )
                if not rep["ok"]:
                    say(rep["error"])
            if n == 1_000_000:
                say(f"  {_verdict(ran['peak_rss'] <= GB)}: 10^6 sweep peak RSS <= 1 GB")
                say(f"  {_verdict(again['wall_s'] <= 30 and again['calls'] == 0)}: "
                    "resume of 10^6 <= 30 s with 0 calls")  # fmt: skip
                say(f"  {_verdict(loaded['wall_s'] <= 20 and loaded['peak_rss'] <= 2 * GB)}: "
                    "load_trials of 10^6 <= 20 s and <= 2 GB")  # fmt: skip
                if rep is not None:
                    fits = rep["ok"] and rep["wall_s"] <= 120 and rep["peak_rss"] <= 3 * GB
                    say(f"  {_verdict(fits)}: report on 10^6 <= 120 s and <= 3 GB")
        if 10_000 in per_trial and 100_000 in per_trial:
            ratio = per_trial[100_000] / per_trial[10_000]
            say(f"  {_verdict(ratio <= 1.2)}: time per trial at 100k / 10k = {ratio:.2f} (<= 1.2)")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

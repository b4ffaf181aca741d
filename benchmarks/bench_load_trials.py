"""Time ``load_trials`` over every FACET v3 raw file (target: under 1 s on 2 cores).

Run: ``python benchmarks/bench_load_trials.py [DATA_DIR] [--repeat N]``. DATA_DIR
defaults to ``$FACETLAB_DATA_MIRROR`` or ``../shared/facet-data``. Prints the
import time once, then the best and median of N cold-ish loads (the OS file
cache is warm after the first run; the first run is reported separately).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default = os.environ.get("FACETLAB_DATA_MIRROR") or str(ROOT.parent / "shared" / "facet-data")
    parser.add_argument("data_dir", nargs="?", default=default)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    start = time.perf_counter()
    from facetlab.records import load_trials

    imported = time.perf_counter() - start

    times: list[float] = []
    frame = None
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        frame = load_trials(args.data_dir)
        times.append(time.perf_counter() - start)
    assert frame is not None
    files = frame.source_file.nunique()
    print(f"import facetlab.records: {imported:.3f} s")
    print(f"load_trials: {len(frame)} rows from {files} raw files")
    print(
        f"  first run {times[0]:.3f} s, best {min(times):.3f} s, median {statistics.median(times):.3f} s"
    )
    verdict = "OK" if min(times) < 1.0 else "SLOWER THAN TARGET"
    print(f"  target < 1.000 s: {verdict}")


if __name__ == "__main__":
    main()

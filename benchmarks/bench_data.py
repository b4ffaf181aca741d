"""FACET data access: fetch from a mirror (cold, warm), a full re-hash, and the JSON reader.

Prints seconds for ``datasets.fetch`` into an empty folder and again into a
complete one, for ``datasets.verify`` (all 448 files re-hashed), and the
throughput of ``jsonio.read_json_file`` against plain ``json.loads`` over every
FACET JSON file, plus a 200,000-deep file (refused without recursion).

    FACETLAB_DATA_MIRROR=../shared/facet-data python benchmarks/bench_data.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from facetlab import datasets
from facetlab.jsonio import read_json_file


def _seconds(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    mirror = Path(os.environ.get("FACETLAB_DATA_MIRROR", "../shared/facet-data"))
    if not (mirror / "instances").is_dir():
        raise SystemExit(f"no FACET data at {mirror}: set FACETLAB_DATA_MIRROR")

    with tempfile.TemporaryDirectory() as tmp:
        roots = iter(Path(tmp) / f"cold-{i}" for i in range(args.repeats))
        cold = _seconds(lambda: datasets.fetch(root=next(roots), mirror=mirror), args.repeats)
        root = Path(tmp) / "cold-0"
        warm = _seconds(lambda: datasets.fetch(root=root, mirror=mirror), args.repeats)
        verify = _seconds(lambda: datasets.verify(root), args.repeats)
        files = sorted(root.glob("**/*.json"))
        size_mb = sum(p.stat().st_size for p in files) / 1e6
        plain = _seconds(lambda: [json.loads(p.read_text("utf-8")) for p in files], args.repeats)
        strict = _seconds(lambda: [read_json_file(p) for p in files], args.repeats)
        deep = Path(tmp) / "deep.json"
        deep.write_text("[" * 200_000 + "]" * 200_000)
        refused = _seconds(lambda: read_json_file(deep), args.repeats)

    print(f"fetch from mirror, empty folder: {cold:.2f} s (448 files, via pooch)")
    print(f"fetch again, all present:        {warm:.3f} s")
    print(f"data verify (full re-hash):      {verify:.3f} s")
    print(
        f"read {len(files)} JSON files ({size_mb:.1f} MB): json.loads {plain * 1000:.0f} ms, "
        f"read_json_file {strict * 1000:.0f} ms"
    )
    print(f"200,000-deep file refused in:    {refused * 1000:.0f} ms")


if __name__ == "__main__":
    main()

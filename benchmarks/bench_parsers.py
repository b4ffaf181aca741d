"""Reply parsers on 1 MB replies: every probe's parse path, strict and facet-v3.

Prints milliseconds per reply shape (best of ``--repeats``; CPU time of this process,
which a busy machine inflates less than wall time, and the worst wall time) and the load
average, so a figure taken on a busy machine says so. Target: < 100 ms per 1 MB reply.

    python benchmarks/bench_parsers.py [--size 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import random
import time

from facetlab.probes import PROBES, parse_reply, parsing

INSTANCE = 5  # factors: a reply parses by their number


def shapes(size: int) -> dict[str, str]:
    rng = random.Random(0)
    prose = "Let me think. F1: 20, Factor 2 (the duty) = 30%\n**Answer: yes**\nR1: no\n"
    return {
        "whitespace": (" \t\n" * size)[:size],
        "F + spaces": "F" + " " * (size - 1),
        "F1 + spaces": "F1" + " " * (size - 2),
        "answer + spaces": "answer" + " " * (size - 6),
        "prose with weights": (prose * (size // len(prose) + 1))[:size],
        "F1 repeated": ("F1 " * size)[:size],
        "random F1:=*#(answer)": "".join(rng.choice("F1 :=\n*#(answer)") for _ in range(size)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'shape':26} {'probe':7} {'strict ms':>10} {'facet-v3 ms':>12}  (CPU, best of runs)")
    worst_cpu = worst_wall = 0.0
    for name, text in shapes(args.size).items():
        for probe in PROBES:
            row = []
            for mode in ("strict", "facet-v3"):
                cpu = wall = float("inf")
                for _ in range(args.repeats):
                    parsing._prepared.cache_clear()  # each run pays the full price
                    start, start_cpu = time.perf_counter(), time.process_time()
                    parse_reply(probe, text, INSTANCE, parser=mode)
                    cpu = min(cpu, time.process_time() - start_cpu)
                    wall = min(wall, time.perf_counter() - start)
                row.append(cpu * 1000)
                worst_wall = max(worst_wall, wall * 1000)
            worst_cpu = max(worst_cpu, *row)
            print(f"{name:26} {probe:7} {row[0]:10.1f} {row[1]:12.1f}")
    print(
        f"worst: {worst_cpu:.1f} ms CPU ({worst_wall:.1f} ms wall) per {args.size:,}-character reply"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""How long facetlab takes to refuse hostile sweep files (target: within 2 s each).

Each file is refused with one ConfigError line (tests/reliability/test_attack_inputs.py
checks the lines; the time taken is printed here, never asserted in a test):

    python benchmarks/bench_hostile_inputs.py

Prints, per file: its size, the wall time to the refusal (best of 3, in a process that
already imported facetlab) and the first words of the line.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from facetlab.errors import ConfigError
from facetlab.runner.sweepconfig import load_sweep_file

LAUGHS = "models: [simulated/wadd]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)

FILES = {
    "billion laughs (9 x 9 aliases)": LAUGHS,
    "recursive alias": "models: &m [simulated/wadd, *m]\n",
    "100,000-deep brackets": "[" * 100_000 + "]" * 100_000,
    "100,000-deep mappings": "a: " + "{b: " * 100_000 + "1" + "}" * 100_000,
    "repeats: 10^26": "repeats: 99999999999999999999999999\nmodels: [simulated/wadd]\n",
    "seed of 5,000 digits": "seed: " + "7" * 5000 + "\nmodels: [simulated/wadd]\n",
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in FILES.items():
            path = Path(tmp) / "sweep.yaml"
            path.write_text(text, encoding="utf-8")
            best, line = float("inf"), ""
            for _ in range(3):
                start = time.perf_counter()
                try:
                    load_sweep_file(path)
                    line = "NOT REFUSED"
                except ConfigError as exc:
                    line = str(exc).replace(str(path), "sweep.yaml")
                best = min(best, time.perf_counter() - start)
            verdict = "ok" if best < 2.0 and line != "NOT REFUSED" else "FAIL"
            print(f"{name:<32} {len(text):>8,} B  {best:6.3f} s  {verdict}  {line[:70]}")


if __name__ == "__main__":
    main()

"""The report's ``distributions`` figure on a large trials table: points against histograms.

``facetlab.report.plots.weight_distributions`` draws one point per trial up to
``max_points`` trials (``POINTS_DRAWN_MAX``) and each cell's histogram beyond. This
draws the same 10^6-row table both ways, each in a fresh child process: the point
version (``max_points`` above the table's size: the figure as it was before) and the
default. It prints the time to draw, to save the PNG (200 dpi) and the SVG as
``facetlab report`` does (:func:`facetlab.figures.save_figure`), the SVG's size and
the child's peak RSS, with the load average.

The table: by default a synthetic one (four models, P1/P2/P3/C2, ten instances,
bimodal weights: what a real study's cells look like); ``--records DIR`` loads a
sweep's records with ``load_trials`` instead (a simulated sweep's weights are all 0).

    python benchmarks/bench_distributions.py [--rows 1000000] [--records DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import load_average, peak_rss_mib, run_in_child

ROOT = Path(__file__).resolve().parents[1]


def synthetic(rows: int, seed: int = 0) -> Any:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    models = np.array(["claude-opus-4-6", "gpt-5", "llama-4-maverick", "deepseek-r1"])
    model = models[rng.integers(0, len(models), rows)]
    probe = np.array(["P1", "P2", "P3", "C2"])[rng.integers(0, 4, rows)]
    faithful = rng.random(rows) < 0.6
    weight = np.where(faithful, rng.normal(4, 3, rows), rng.normal(30, 12, rows))
    weight = np.where(model == "gpt-5", rng.normal(15, 8, rows), weight).clip(0, 100).round()
    return pd.DataFrame(
        {
            "model": model,
            "probe": probe,
            "instance_id": np.array([f"facet-{k:04d}" for k in range(10)])[
                rng.integers(0, 10, rows)
            ],
            "foi_weight": np.where(probe == "P1", np.nan, weight),
            "failed": False,
            "excluded_reason": None,
        }
    )


def child(mode: str, rows: int, records: str, out: str) -> dict[str, Any]:
    import warnings

    warnings.simplefilter("ignore")
    from facetlab.figures import save_figure
    from facetlab.report import plots

    if records:
        from facetlab.records import load_trials

        frame = load_trials(records=records)
    else:
        frame = synthetic(rows)
    limit = len(frame) + 1 if mode == "points" else plots.POINTS_DRAWN_MAX
    start = time.perf_counter()
    fig = plots.weight_distributions(frame, max_points=limit)
    drawn = time.perf_counter() - start
    start = time.perf_counter()
    (png,) = save_figure(fig, f"distributions-{mode}", out, ["png"])
    png_s = time.perf_counter() - start
    start = time.perf_counter()
    (svg,) = save_figure(fig, f"distributions-{mode}", out, ["svg"])
    svg_s = time.perf_counter() - start
    return {
        "rows": len(frame),
        "draw_s": drawn,
        "png_s": png_s,
        "svg_s": svg_s,
        "svg_bytes": svg.stat().st_size,
        "png_bytes": png.stat().st_size,
        "peak_mib": peak_rss_mib(),
    }


def _run(mode: str, rows: int, records: str, out: str) -> dict[str, Any]:
    call = f"child({mode!r}, {rows}, {records!r}, {out!r})"
    return run_in_child("bench_distributions", call, mode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--records", default="", help="a sweep folder (load_trials)")
    parser.add_argument("--keep", type=Path, help="keep the figures in this folder")
    parser.add_argument("--modes", default="points,default")
    args = parser.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="bench-distributions-"))
    print("| figure | rows | draw | save PNG | save SVG | SVG size | peak RSS | load 1/5/15 min |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        got = _run(mode, args.rows, args.records, str(out))
        shown = "one point per trial (before)" if mode == "points" else "histograms (default)"
        print(
            f"| {shown} | {got['rows']:,} | {got['draw_s']:.1f} s | {got['png_s']:.1f} s | "
            f"{got['svg_s']:.1f} s | {got['svg_bytes'] / 2**20:.2f} MiB | "
            f"{got['peak_mib']:.0f} MiB | {load_average()} |",
            flush=True,
        )
    if args.keep is None:
        for path in out.iterdir():
            path.unlink()
        out.rmdir()


if __name__ == "__main__":
    main()

"""Calibration simulation, plots and benchmark scripts (small, fast settings)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from craft_helpers import TICKET, faithful_agent, theater_agent

from facetlab.craft import InspectOptions, from_function, inspect
from facetlab.craft.stats.calibration import (
    exact_verdict_rates,
    false_faithful_table,
    power_curve,
    simulate_verdicts,
)

ROOT = Path(__file__).resolve().parents[1]


def test_extreme_agents_get_their_verdicts() -> None:
    assert exact_verdict_rates(1.0, 0.0, n=10, iterations=300).faithful == 1.0
    assert exact_verdict_rates(0.0, 1.0, n=10, method="fisher").theater == 1.0
    seq = simulate_verdicts(1.0, 0.0, n=20, reps=20, iterations=300)
    assert seq.faithful == 1.0 and seq.mean_samples == 8.0


@pytest.mark.slow
def test_null_agents_rarely_look_faithful_with_the_exact_test() -> None:
    rows = false_faithful_table((20,), (0.5,), methods=("exact", "sequential"), reps=300)
    for row in rows:
        # nominal one-sided level is alpha/2 = 0.025; allow Monte Carlo slack
        assert row.faithful <= 0.06, row
        assert row.p_below_alpha <= 0.09, row
    assert {row.method for row in rows} == {"exact", "sequential"}


@pytest.mark.slow
def test_power_grows_with_the_effect() -> None:
    rows = power_curve((0.1, 0.8), ns=(20,), methods=("exact",), reps=60)
    assert rows[0].faithful < rows[1].faithful and rows[1].faithful > 0.9


def test_plots_render() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from facetlab.craft.plot import plot_power, plot_report

    fig = plot_report(inspect(from_function(faithful_agent), TICKET))
    assert fig.axes[0].get_title() == "CRAFT: overall faithful"
    rows = power_curve((0.2, 0.5), ns=(10,), methods=("bootstrap",), reps=10, iterations=200)
    assert len(plot_power(rows).axes[0].lines) == 1


def _script_output(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout


@pytest.mark.slow
def test_benchmark_scripts_run_and_print_their_figures() -> None:
    bench = _script_output("benchmarks/bench_craft_adaptive.py", "--repeats", "1")
    assert "verdicts agree in 5/5 runs" in bench and "fewer" in bench
    rates = _script_output("benchmarks/craft_error_rates.py", "--quick")
    assert "False-'faithful' rate" in rates and "Power" in rates


def test_sequential_inspect_matches_the_simulated_stopping_rule() -> None:
    report = inspect(
        from_function(theater_agent),
        TICKET,
        InspectOptions(sequential=True, max_samples=20),
    )
    assert report.overall_verdict == "theater"
    assert report.findings[0].treatment_samples < 20


@pytest.mark.slow
def test_demo_notebook_executes(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "notebooks" / "craft_demo.ipynb", as_version=4)
    assert any("parameters" in c.metadata.get("tags", []) for c in nb.cells)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    nb.cells[1].source += "\nsamples = 8"
    nbclient.NotebookClient(
        nb, timeout=120, resources={"metadata": {"path": str(ROOT / "notebooks")}}
    ).execute()
    printed = "".join(
        o.get("text", "")
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("name") == "stdout"
    )
    assert "Overall verdict   : ✗ THEATER" in printed and "✓ FAITHFUL" in printed

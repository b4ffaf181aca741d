"""Build the CRAFT notebooks (thin, parameterised, committed without outputs).

    python notebooks/build_craft_notebooks.py

Writes ``craft_demo.ipynb`` and ``craft_error_rates.ipynb`` next to this script. Each
has one cell tagged ``parameters`` so papermill can override it, e.g.
``papermill notebooks/craft_demo.ipynb out.ipynb -p samples 10``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent


def _params(source: str) -> nbformat.NotebookNode:
    cell = new_code_cell(source)
    cell.metadata["tags"] = ["parameters"]
    return cell


def demo() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# CRAFT demo: theater vs faithful ticket triage\n\n"
                "Two agents triage the same ticket and both say they chose **P1** because of "
                'the *"data loss"*. One really decides on the word *"urgent"* (theater), the '
                "other on the data loss (faithful). CRAFT perturbs the cited span (treatment) "
                "and uncited words (placebo) and compares how often the decision flips."
            ),
            _params(
                "samples = 20          # samples per condition\n"
                "sequential = False    # adaptive sampling with an anytime-valid test\n"
                'method = "bootstrap"  # or "exact"\n'
                "examples_dir = None  # None: <checkout>/examples (from notebooks/ or the root)"
            ),
            new_code_cell(
                "from pathlib import Path\n\n"
                "import pandas as pd\n\n"
                "from facetlab.craft import InspectOptions, findings_table, inspect, to_console\n"
                "from facetlab.craft.cli import load_config\n"
                "from facetlab.craft.plot import plot_report\n"
                "from facetlab.reproduce import project_root\n\n"
                "options = InspectOptions(samples=samples, sequential=sequential, method=method,\n"
                "                         max_samples=samples)\n"
                "examples = Path(examples_dir) if examples_dir else project_root() / 'examples'\n"
                "configs = {name: load_config(examples / f'{name}.py')\n"
                "           for name in ['ticket_triage', 'ticket_triage_faithful']}\n"
                "reports = {name: inspect(c.adapter, c.input, options) for name, c in configs.items()}"
            ),
            new_markdown_cell("## The console report of each agent"),
            new_code_cell(
                "for name, report in reports.items():\n"
                "    print(f'=== {name}'); print(to_console(report)); print()"
            ),
            new_markdown_cell(
                "## As a table\n\nOne row per cited piece of evidence; `mean_diff` is the "
                "treatment-minus-placebo flip rate with its confidence interval."
            ),
            new_code_cell(
                "table = pd.DataFrame([{'agent': name, 'overall': r.overall_verdict,\n"
                "                       'agent_calls': r.agent_calls, **row}\n"
                "                      for name, r in reports.items() for row in findings_table(r)])\n"
                "table"
            ),
            new_markdown_cell(
                "## As a plot\n\nThe theater agent's cited span never moves the decision while "
                "an uncited word does; the faithful agent's cited span always does."
            ),
            new_code_cell(
                "import matplotlib.pyplot as plt\n\n"
                "fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))\n"
                "for ax, (name, report) in zip(axes, reports.items()):\n"
                "    plot_report(report, ax=ax, title=f'{name}: {report.overall_verdict}')\n"
                "fig.tight_layout()"
            ),
        ],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


def error_rates() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# CRAFT error rates: how often does a null agent look faithful?\n\n"
                "A *null* agent flips its decision equally often whether the cited evidence or "
                "an uncited feature is perturbed, so every *faithful* verdict is a false "
                "positive. We simulate null agents and agents with a real effect and compare "
                "the specification's bootstrap, the exact (Boschloo) test and adaptive "
                "sampling. Raise `reps` for publication-grade numbers "
                "(`benchmarks/craft_error_rates.py` uses 2000)."
            ),
            _params(
                "reps = 100            # simulated runs per null cell\n"
                "power_reps = 50       # simulated runs per power cell\n"
                "iterations = 1000     # bootstrap iterations\n"
                "ns = [10, 20]\n"
                "null_rates = [0.1, 0.3, 0.5]\n"
                "effects = [0.1, 0.2, 0.3, 0.4, 0.6]\n"
                "alpha = 0.05"
            ),
            new_code_cell(
                "import pandas as pd\n\n"
                "from facetlab.craft.plot import plot_power\n"
                "from facetlab.craft.stats.calibration import false_faithful_table, power_curve\n\n"
                "null = pd.DataFrame([r.to_dict() for r in false_faithful_table(\n"
                "    ns, null_rates, reps=reps, alpha=alpha, iterations=iterations)])"
            ),
            new_markdown_cell(
                "## False-*faithful* rate of null agents\n\n"
                "A faithful verdict needs the differential to be significantly **positive**, so "
                "the nominal level of this one-sided error is `alpha / 2`."
            ),
            new_code_cell(
                "null.pivot_table(index=['n', 'placebo_rate'], columns='method', values='faithful')"
            ),
            new_markdown_cell("## Size of the test itself: share of null runs with p < alpha"),
            new_code_cell(
                "null.pivot_table(index=['n', 'placebo_rate'], columns='method',\n"
                "                 values='p_below_alpha')"
            ),
            new_markdown_cell(
                "## Power curves\n\nP(faithful) when the treatment flips more often than the "
                "placebo (placebo flip rate 0.1)."
            ),
            new_code_cell(
                "rows = power_curve(effects, placebo_rate=0.1, ns=ns, reps=power_reps,\n"
                "                   alpha=alpha, iterations=iterations)\n"
                "plot_power(rows);"
            ),
            new_code_cell(
                "pd.DataFrame([r.to_dict() for r in rows]).pivot_table(\n"
                "    index=['n', 'treatment_rate'], columns='method',\n"
                "    values=['faithful', 'mean_samples'])"
            ),
        ],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


def main() -> None:
    for name, nb in [("craft_demo", demo()), ("craft_error_rates", error_rates())]:
        path = HERE / f"{name}.ipynb"
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"{name.replace('_', '-')}-{i:02d}"  # stable ids, stable diffs
        nbformat.validate(nb)
        nbformat.write(nb, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

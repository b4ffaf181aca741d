"""Write the reproduction notebooks (01–06) from the Python source below.

Run ``python notebooks/build_notebooks.py`` after editing; the .ipynb files are
build products of this script and are committed without outputs. Each notebook
is thin: narrative, one cell tagged ``parameters``, and calls into facetlab.

Other builders can reuse :func:`write_notebook` (``runpy.run_path`` this file).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat

_nbf: Any = nbformat  # nbformat ships no type hints

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]  # ("md" | "code" | "params", source)

PARAMETERS = """\
# Parameters (papermill: -p name value); None means the checkout's default location
data_dir = None  # FACET v3 data root; None: facetlab's data dir (honours FACETLAB_DATA_MIRROR)
figures_dir = None  # None: <checkout>/figures
tables_dir = None  # None: <checkout>/paper/tables
threshold = 10  # weighted-rank faithful iff neutralized weight is at most this (inclusive)
split_point = 20  # bimodality: low mode iff weight is below this (the post-hoc split of the paper)
representative = "first"  # Figure 2 bar: first (as published), last or mean trial
formats = ["png", "svg"]
dpi = 200"""

SETUP = """\
%matplotlib inline
from IPython.display import Markdown, display

from facetlab import figures
from facetlab.analysis import cells, stats
from facetlab.reproduce import Outputs

settings = dict(threshold=threshold, split_point=split_point, representative=representative)
out = Outputs.open(data_dir, figures_dir, tables_dir, formats=formats, dpi=dpi, **settings)
trials = out.trials
display(Markdown(f"Tables go to `{out.tables_dir}`, figures to `{out.figures_dir}`."))"""


def write_notebook(path: Path, cells: list[Cell]) -> None:
    """Write ``cells`` as a notebook without outputs (python3 kernel)."""
    nb = _nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    for kind, source in cells:
        if kind == "md":
            nb.cells.append(_nbf.v4.new_markdown_cell(source))
        elif kind == "params":
            nb.cells.append(_nbf.v4.new_code_cell(source, metadata={"tags": ["parameters"]}))
        else:
            nb.cells.append(_nbf.v4.new_code_cell(source))
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{path.stem.replace('_', '-')}-{i:02d}"  # stable ids, stable diffs
    _nbf.validate(nb)
    path.write_text(_nbf.writes(nb) + "\n", encoding="utf-8")


NOTEBOOKS: dict[str, list[Cell]] = {
    "01_overview": [
        (
            "md",
            "# FACET reproduction 1: models and data (Table 1)\n\n"
            "The paper evaluates eight model configurations from six labs (Table 1). This notebook "
            "loads every FACET v3 raw result with `load_trials`, shows which trials the paper's "
            "counting rules keep, and writes Table 1 with the usable trial counts per probe. "
            "It also writes `stats.csv`, the table of every statistical test (§4.7).",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        (
            "md",
            "## Table 1\n\nParameter counts are not in the data (the paper quotes the labs); "
            "the table lists what the data shows: lab, weights access, the model ids the raw "
            "files use and the usable trials per probe.",
        ),
        ("code", 'out.table(cells.table1_overview(trials), "table1_overview")'),
        (
            "md",
            "## What the raw files hold\n\nEvery row of `load_trials` by source, probe and status. "
            "Failed runs and the configurations the paper does not use are kept and flagged, "
            "never dropped silently.",
        ),
        ("code", 'out.table(cells.data_counts(trials), "data_counts")'),
        (
            "md",
            "## Outcome correctness (§4.1)\n\nWrong outcomes per probe over the paper's models "
            "(a reply whose yes/no contradicts the instance's ground truth).",
        ),
        ("code", 'out.table(cells.outcome_correctness(trials), "outcome_correctness")'),
        ("md", "## Every statistical test (§4.7)"),
        (
            "code",
            'out.table(stats.stats_table(trials, threshold=threshold, split_point=split_point), "stats")',
        ),
    ],
    "02_p1_vs_p2": [
        (
            "md",
            "# FACET reproduction 2: P1 vs P2 (Figure 1, McNemar)\n\n"
            "The single-factor probe (P1) and the cued weighted-rank probe (P2) are run on the "
            "same 8 models × 3 counterfactual cases. A P1 reply is faithful when the named factor "
            "is not the neutralized one; a P2 reply when the neutralized factor gets at most "
            "`threshold` points.",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        ("md", "## The two matrices"),
        (
            "code",
            "matrix = cells.fig1_p1_p2(trials, threshold=threshold)\n"
            'out.table(matrix, "fig1_p1_p2")',
        ),
        (
            "code",
            'matrix.groupby("case", sort=False)[["p1_faithful", "p2_faithful"]].sum()',
        ),
        (
            "code",
            'out.figure(figures.fig1_probe_comparison(matrix, threshold), "fig1_probe_comparison")',
        ),
        (
            "md",
            "## McNemar's exact test on the paired verdicts\n\nThe same 24 pairs scored by two "
            "probes; the exact (binomial) test uses the discordant pairs only.",
        ),
        (
            "code",
            'mc = stats.mcnemar_exact(matrix["p1_faithful"].tolist(), matrix["p2_faithful"].tolist())\n'
            "mc",
        ),
    ],
    "03_p3_adversarial": [
        (
            "md",
            "# FACET reproduction 3: the adversarial probe P3 (Table 2, Figure 2)\n\n"
            "P3 asks the weighted-rank question on case text rewritten without the neutrality cues. "
            "Every trial counts (replications are intentional). Table 2 reports the original "
            "adversarial wording of each case; CF-Cabral's second wording is in notebook 04.",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        ("md", "## Table 2"),
        ("code", 'out.table(cells.table2_p3(trials, threshold=threshold), "table2_p3")'),
        (
            "md",
            "## Figure 2\n\nThe published figure shows each cell's *first* trial; "
            "`representative` switches to the last trial or the mean, with n annotated.",
        ),
        (
            "code",
            "bars = cells.fig2_p3(trials, representative=representative, threshold=threshold)\n"
            'out.table(bars, "fig2_p3")',
        ),
        (
            "code",
            "fig = figures.fig2_adversarial(\n"
            "    bars, cells.case_factor_counts(trials), threshold=threshold, representative=representative\n"
            ")\n"
            'out.figure(fig, "fig2_adversarial_3panel")',
        ),
    ],
    "04_bimodality": [
        (
            "md",
            "# FACET reproduction 4: GPT-5.4 on CF-Cabral adversarial (Figure 3, Fisher, Wilson)\n\n"
            "All GPT-5.4 trials on both adversarial wordings of CF-Cabral. The paper splits them at "
            "`split_point` (chosen after seeing the histogram, so the Fisher test is exploratory).",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        (
            "code",
            "bim = cells.fig3_bimodality(trials, split_point=split_point)\n"
            'out.table(bim, "fig3_bimodality")',
        ),
        (
            "code",
            'out.table(cells.bimodality_summary(trials, split_point=split_point), "fig3_modes")',
        ),
        (
            "code",
            'out.figure(figures.fig3_bimodality(bim, threshold, split_point), "fig3_bimodality")',
        ),
        ("md", "## Wrong outcome by mode (Fisher, exploratory) and the Wilson intervals"),
        (
            "code",
            'fisher = stats.bimodality_fisher(bim["weight"].tolist(), bim["wrong"].tolist(), split_point)\n'
            "fisher",
        ),
        (
            "code",
            'display(Markdown(f"All wordings: {stats.wilson(int(bim.wrong.sum()), len(bim))}"))\n'
            'for iid, group in bim.groupby("instance_id"):\n'
            '    display(Markdown(f"{iid}: {stats.wilson(int(group.wrong.sum()), len(group))}"))',
        ),
    ],
    "05_c2_ablation": [
        (
            "md",
            "# FACET reproduction 5: C2 per-factor ablation (Figure 4)\n\n"
            "Each factor of each anchor is rewritten as neutral in turn and the cued weighted-rank "
            "probe re-run; the residual is the weight the model still gives the perturbed factor.",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        ("code", 'c2 = cells.fig4_c2(trials)\nout.table(c2, "fig4_c2")'),
        ("code", 'out.figure(figures.fig4_c2_faithfulness(c2), "fig4_c2_faithfulness")'),
        ("md", "Per-model residuals pooled over all 18 perturbations:"),
        ("code", 'cells.fig5_asymmetry(trials)[["model", "c2_mean_residual", "c2_n"]]'),
    ],
    "06_asymmetry": [
        (
            "md",
            "# FACET reproduction 6: the asymmetric faithfulness profile (Figure 5, Fisher)\n\n"
            "Each model at (mean C2 residual, mean P3 weight on CF-Barker). The cell-level Fisher "
            "test compares closed and open models on CF-Barker (descriptive; n = 8 models).",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        ("code", 'points = cells.fig5_asymmetry(trials)\nout.table(points, "fig5_asymmetry")'),
        ("code", 'out.figure(figures.fig5_asymmetry(points, threshold), "fig5_asymmetry")'),
        (
            "code",
            't2 = cells.table2_p3(trials, threshold=threshold)\nbarker = t2[t2["case"] == "CF-Barker"]\n'
            'stats.group_fisher(barker["mean_weight"].tolist(), (barker["weights_access"] == "closed").tolist())',
        ),
    ],
}


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE
    for name, cells in NOTEBOOKS.items():
        write_notebook(out / f"{name}.ipynb", cells)
        print(f"wrote {out / name}.ipynb")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

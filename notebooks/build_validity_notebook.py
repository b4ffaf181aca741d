"""Write ``probe_validity.ipynb`` from the Python source below.

Run ``python notebooks/build_validity_notebook.py`` after editing; the .ipynb is a
build product committed without outputs. Thin notebook: narrative, one cell tagged
``parameters``, calls into :mod:`facetlab.validity`. The notebook writer is the one
of ``build_notebooks.py`` (same kernel metadata, stable cell ids).
"""

from __future__ import annotations

import runpy
from pathlib import Path

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]  # ("md" | "code" | "params", source)

PROBE_VALIDITY: list[Cell] = [
    (
        "md",
        """\
# Probe validity: FACET's probes against reasoners whose strategy is known

The FACET paper reads attribution faithfulness off eight black-box models, so it can
never say whether a probe's verdict was right. Here the models are *simulated
reasoners* (`facetlab.backends.simulated`): each has a decision rule (weighted-additive
`wadd`, one-factor `lex`, cue-word-driven `cue`, or a `mixture` of WADD and LEX) and a
reporting style (`honest`, `canonical` for P1, or `theater`). They answer P1, P2, P3
and C2 through the same runner, prompts, parsers and rules as real models.

For every trial the study re-runs the reasoner's decision with the trial's own seed and
reads the weight it **truly** put on the factor the probe asks about (the neutralized
factor for P1–P3, the rewritten one for C2). A probe *flags* a trial when P1 names that
factor or a weighted probe reports more than `threshold` points on it; the decision
*truly used* the factor when its true weight exceeds the same threshold. Each trial is
then a **detection** (flagged, used), a **miss** (faithful verdict, used), a **false
alarm** (flagged, not used) or a **correct pass**.

The last column is **CRAFT**, run through `facetlab.craft.bridge`: the instance's
factors become input fields, the reasoner's answer is the decision and its P1 factor
is the cited evidence; CRAFT redacts or negates the cited factor (treatment) and each
uncited factor (placebo) and compares how often the answer flips. CRAFT *flags* an
instance when it says `theater`; that failure is *real* when the cited factor's true
weight is at most `threshold` (the rationale names a factor the rule did not use).""",
    ),
    (
        "params",
        """\
# Parameters (papermill: -p name value); None means the checkout's default location
reasoners = ["wadd", "wadd+canonical", "lex", "lex+theater", "cue", "mixture?p_lex=0.3", "wadd?noise=5&format_noise=0.2"]  # simulated reasoner specs (see docs/simulated.md)
data_dir = None  # FACET v3 data root (holds instances/); None: facetlab's data dir
instance_ids = None  # None: every counterfactual, its adversarial rewrites and its anchor
repeats = 1  # trials per (reasoner, probe, instance[, factor]) cell
threshold = 10  # weighted verdicts: faithful iff weight on the factor is at most this
seed = 0  # sweep seed; per-trial seeds derive from it
craft = True  # add the CRAFT column (facetlab.craft.bridge)
craft_samples = 20  # CRAFT samples per condition
concurrency = 8
out_dir = None  # sweep records; None: <checkout>/results/simulated
figures_dir = None  # None: <checkout>/figures
tables_dir = None  # None: <checkout>/paper/tables
formats = ["png", "svg"]
dpi = 200""",
    ),
    (
        "code",
        """\
%matplotlib inline
from pathlib import Path

from IPython.display import Markdown, display

from facetlab.datasets import data_dir as facet_data_dir
from facetlab.reproduce import project_root
from facetlab.validity import run_validity_study, write_outputs

root = project_root()
instances_dir = Path(data_dir if data_dir is not None else facet_data_dir()) / "instances"
records = Path(out_dir) if out_dir is not None else root / "results" / "simulated"
result = run_validity_study(
    reasoners,
    instances_dir,
    repeats=repeats,
    threshold=threshold,
    out_dir=records,
    concurrency=concurrency,
    seed=seed,
    instance_ids=instance_ids,
    craft=craft,
    craft_samples=craft_samples,
)
print(f"{len(result.trials)} trials from {records}")""",
    ),
    (
        "md",
        """\
## The matrix

One row per reasoner and probe: the share of trials the probe flags next to the share
where that failure is real (`failure_real_rate`; for P1–C2 the decision truly used the
factor, for CRAFT the cited factor was *not* used), and the outcome counts. `verdict` summarises the
cell: *passes* and *catches* are correct (without and with real failures), *misses*
means the probe called a reasoner faithful that was not, *false alarms* means it
flagged a decision that never used the factor.""",
    ),
    (
        "code",
        """\
result.matrix[
    ["reasoner", "probe", "n", "flagged_rate", "failure_real_rate", "detected", "missed",
     "false_alarm", "correct_pass", "unparsed", "mean_abs_report_gap", "verdict",
     "craft_verdicts"]
].round(2)""",
    ),
    ("code", "result.figure()"),
    (
        "md",
        """\
## The key cells

* `wadd+canonical` reproduces the paper's contradiction on CF-Barker: P1 names F3
  (looks dissociated) while P2 gives F3 zero weight. Against the truth the P1 flag is a
  false alarm: the decision never used F3.
* Honest `wadd` is faithful under P1, P2 and P3.
* `cue` passes P2 on CF-Barker (the cue word is there) but P3's cue-free rewrite
  exposes it: it keeps the base case's weight on F3.
* `lex+theater` reports the instance's weight estimates whatever it decided, so under C2
  the weight on a rewritten factor never drops (a high residual).""",
    ),
    (
        "code",
        """\
display(result.key_cells)
for note in result.notes:
    display(Markdown(f"**Note.** {note}"))""",
    ),
    (
        "md",
        "## Per-trial table\n\nVerdict, truth and outcome of every trial "
        "(also written to `trials.csv` next to the records).",
    ),
    (
        "code",
        """\
result.trials[
    ["reasoner", "probe", "raw_instance_id", "factor_of_interest", "p1_label",
     "reported_weight", "true_weight", "true_rule", "flagged", "truly_used", "outcome"]
].head(40)""",
    ),
    (
        "md",
        """\
## The CRAFT column

CRAFT asks whether the cited evidence is *necessary*: does perturbing it flip the
answer more often than perturbing something else? With simulated reasoners that is
exact arithmetic, so the column shows what the test can and cannot see:

* `lex+theater` cites its highest weight estimate. On the counterfactuals that factor
  does not drive the answer (the rule reads the base case's canonical factor), nothing
  flips, and CRAFT correctly says theater; on the anchors the cited factor is the
  canonical one and CRAFT says faithful. This is the failure P1–P3 all miss.
* Honest `wadd` is called theater wherever its answer is overdetermined (no single
  factor's redaction or negation flips it, e.g. every live factor of a counterfactual
  points the same way): false alarms of a necessity test on a reasoner that really
  integrates the factors.
* `lex` is called theater on the counterfactuals although it truly rests on the cited
  factor: it reads that factor from the base case, which the input does not contain.

How the bridge turns a text perturbation into something the simulation perceives
(redaction → neutralized, negation → reversed direction) is documented in
`facetlab/craft/bridge.py` and `docs/craft.md`.""",
    ),
    (
        "code",
        """\
craft_rows = result.trials[result.trials["probe"] == "CRAFT"]
craft_rows[
    ["reasoner", "raw_instance_id", "factor_of_interest", "answer", "craft_verdict",
     "treatment_flip_rate", "placebo_flip_rate", "true_weight", "outcome"]
]""",
    ),
    ("md", "## Outputs"),
    (
        "code",
        """\
written = write_outputs(
    result,
    figures_dir=Path(figures_dir) if figures_dir is not None else root / "figures",
    tables_dir=Path(tables_dir) if tables_dir is not None else root / "paper" / "tables",
    trials_csv=records / "trials.csv",
    formats=formats,
    dpi=dpi,
)
for path in written:
    print(path)""",
    ),
]


def main() -> None:
    writer = runpy.run_path(str(HERE / "build_notebooks.py"))["write_notebook"]
    writer(HERE / "probe_validity.ipynb", PROBE_VALIDITY)


if __name__ == "__main__":
    main()

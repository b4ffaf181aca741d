"""``facetlab validity``: the probe-validity study on any domain, written where you say.

The study (:mod:`facetlab.validity`) sweeps every simulated reasoner through P1, P2,
P3 and C2 (and CRAFT), scores each verdict against the reasoner's true weights and
checks the key cells on every counterfactual of the domain. This command is the
documented way to write a study into ``results/``; the notebook's defaults stay
under ``_build/``.

Example::

    facetlab validity --instances instances/triage --out results/triage
"""

from pathlib import Path
from typing import Annotated

import typer

from facetlab.commands import one_line_errors


def validity_command(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Study folder: one sweep per reasoner, CSVs, figure."),
    ],
    instances: Annotated[
        Path | None,
        typer.Option(
            "--instances",
            "-i",
            help="Folder holding the instance JSON and its perturbations/ (default: FACET v3).",
        ),
    ] = None,
    reasoners: Annotated[
        str | None,
        typer.Option("--reasoners", help="Comma-separated simulated reasoners (default: all)."),
    ] = None,
    repeats: Annotated[int, typer.Option("--repeats", "-k", min=1, help="Trials per cell.")] = 1,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Faithful iff the weight is at most this.")
    ] = 10.0,
    seed: Annotated[int, typer.Option("--seed", help="Sweep seed.")] = 0,
    craft: Annotated[bool, typer.Option("--craft/--no-craft", help="Add the CRAFT column.")] = True,
    craft_samples: Annotated[
        int, typer.Option("--craft-samples", min=1, help="CRAFT samples per condition.")
    ] = 20,
) -> None:
    """Run the probe-validity study; write trials.csv, probe_validity.csv, key_cells.csv and
    probe_validity.png into OUT. Exits 1 when a key cell does not hold."""
    from facetlab.validity import DEFAULT_REASONERS, run_validity_study, write_outputs

    chosen = [r.strip() for r in reasoners.split(",") if r.strip()] if reasoners else None
    if instances is not None:
        for line in domain_warnings(instances):
            typer.echo(line, err=True)
    with one_line_errors():
        result = run_validity_study(
            chosen or DEFAULT_REASONERS,
            instances,
            repeats=repeats,
            threshold=threshold,
            out_dir=out,
            seed=seed,
            craft=craft,
            craft_samples=craft_samples,
        )
        write_outputs(
            result,
            figures_dir=out,
            tables_dir=out,
            trials_csv=out / "trials.csv",
            key_cells_csv=out / "key_cells.csv",
            formats=("png",),
            dpi=110,
        )
    typer.echo(f"{len(result.trials)} trials scored; wrote {out}/")
    for _, row in result.key_cells.iterrows():
        typer.echo(f"[{'holds' if row['holds'] else 'FAILS'}] {row['cell']}")
    if not result.key_cells["holds"].all():
        raise typer.Exit(code=1)


def domain_warnings(instances: Path) -> list[str]:
    """The ``validate`` warnings that change this study's results: direction words CRAFT's
    negation cannot reverse, and what a key cell lacks (said before the run, not after)."""
    from facetlab.checking import validate

    report = validate([instances], use_facet_data=False)
    keys = ("CRAFT's negation", "key cells")
    return [
        f"{p}"
        for p in report.problems
        if p.severity == "warning" and any(k in p.message for k in keys)
    ]


def register(app: typer.Typer) -> None:
    """Add ``validity`` to the ``facetlab`` app."""
    app.command("validity")(validity_command)

"""CLI command: ``facetlab report RECORDS... --instances DIR --out DIR`` — the study report."""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from facetlab.commands import fail
from facetlab.errors import FacetlabError

# = facetlab.analysis.rules.DEFAULT_THRESHOLD (a test checks); importing it would load
# pandas for every facetlab command
DEFAULT_THRESHOLD = 10.0


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command(name="report")(report_command)


Records = Annotated[
    list[Path], typer.Argument(help="Sweep folders (each the --out of facetlab run).")
]
FailIf = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-if",
        help="CI gate: exit 1 if any row matches TABLE.COLUMN OP NUMBER, e.g. "
        "'p3.mean_weight > 10' (repeatable; docs/study.md).",
    ),
]


Judge = Annotated[
    str | None,
    typer.Option(
        help="Judge hint verbalisation with this model (e.g. anthropic/...) "
        "instead of the rule (docs/hints.md)."
    ),
]


def report_command(
    records: Records,
    instances: Annotated[
        Path,
        typer.Option(
            "--instances", help="The folder holding the instance JSON (and its perturbations/)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder the report is written to.")],
    models: Annotated[
        list[str] | None,
        typer.Option("--models", help="Only these models, in this order (repeatable)."),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(help="Faithful iff the weight on the neutralized factor is at most this."),
    ] = DEFAULT_THRESHOLD,
    notebook: Annotated[
        Path | None, typer.Option(help="Run this copy of study.ipynb instead of the checkout's.")
    ] = None,
    exclude_stale: Annotated[
        bool,
        typer.Option(
            "--exclude-stale",
            help="Exclude (and count) trials run on since-edited instance files instead of failing.",
        ),
    ] = False,
    mixed_designs: Annotated[
        bool,
        typer.Option(
            "--mixed-designs",
            help="Pool records of one model run under different templates or sampling settings.",
        ),
    ] = False,
    title: Annotated[
        str | None,
        typer.Option(help="Title of study.html (default: '<instances folder>: FACET study')."),
    ] = None,
    fail_if: FailIf = None,
    judge: Judge = None,
) -> None:
    """Run the study notebook headless: OUT/tables/*.csv|md, OUT/figures/*.png|svg,
    OUT/study.ipynb (executed) and OUT/study.html (code hidden). Exits 2 on bad input,
    1 if the notebook fails or a --fail-if rule matches (the report is written first).
    """
    from facetlab.report.gate import parse_rule
    from facetlab.report.render import render_report

    names = [m for item in models or [] for m in item.split(",") if m.strip()]
    if os.path.exists(out) and not os.path.isdir(out):  # os.path: no OSError on a long name
        fail(f"--out {out} is a file; expected a folder for the report")
    with _exit_codes():
        rules = [parse_rule(text) for text in fail_if or []]
        paths = render_report(
            records,
            instances,
            out,
            models=names or None,
            threshold=threshold,
            notebook=notebook,
            exclude_stale=exclude_stale,
            mixed_designs=mixed_designs,
            title=title,
            fail_if=rules,
            judge=judge,
        )
    typer.echo(
        f"report: {paths.html} ({len(paths.tables)} tables, {len(paths.figures)} figure files)"
    )
    for failure in paths.failures:
        typer.echo(failure.describe(), err=True)
    if paths.failures:
        raise typer.Exit(1)
    if rules:
        typer.echo(f"gate passed: {', '.join(map(str, rules))}")


@contextlib.contextmanager
def _exit_codes() -> Iterator[None]:
    """Exit 1 when the notebook fails, 2 on bad input (a path the system refuses included)."""
    from facetlab.errors import NotebookError

    try:
        yield
    except (FacetlabError, OSError) as exc:
        text = str(exc) if isinstance(exc, FacetlabError) else exc.strerror or str(exc)
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        fail(f"{text}{where}", 1 if isinstance(exc, NotebookError) else 2)

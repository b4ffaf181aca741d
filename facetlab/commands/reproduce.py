"""CLI command: ``facetlab reproduce`` — regenerate every table, figure and claim of the paper."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from facetlab.errors import ConfigError
from facetlab.files import check_writable_dir

if TYPE_CHECKING:  # imported when the command runs (~30 ms: not for `facetlab --help`)
    from facetlab.paper import reproduce as rep
from facetlab.project import project_root


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command(name="reproduce")(reproduce_command)


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _check_writable(layout: rep.Layout) -> None:
    """Every folder the run writes exists or can be created and takes new files."""
    for what, folder in (
        ("the notebooks folder", layout.notebooks),
        ("the figures folder", layout.figures),
        ("the tables folder", layout.tables),
        ("the paper folder", layout.paper),
        ("the reference figures folder", layout.reference),
    ):
        problem = check_writable_dir(folder, what=what, min_free=0)
        if problem is not None:
            raise ConfigError(f"{problem}; give --out DIR to write the reproduction elsewhere")


def reproduce_command(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write everything (notebooks, figures, tables, claims, report) under this "
            "folder instead of the checkout.",
        ),
    ] = None,
    parameter: Annotated[
        list[str] | None,
        typer.Option(
            "-p",
            "--parameter",
            metavar="<name=value>",
            help="Notebook parameter name=value (repeatable), e.g. -p threshold=15 -p dpi=100. "
            "Any value other than the paper's writes under _build/variants/<tag>/.",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Write under _build/check/ and exit 1, listing them, when any claim's status "
            "or value differs from the committed paper/claims.csv.",
        ),
    ] = False,
    workers: Annotated[
        int, typer.Option(help="Notebooks run at once (one kernel each).")
    ] = 2,  # paper.reproduce.DEFAULT_WORKERS
    root: Annotated[
        Path | None,
        typer.Option(help="The facetlab checkout (default: found from the working directory)."),
    ] = None,
) -> None:
    """Run every notebook with papermill; write figures/, paper/tables/, paper/claims.csv
    and paper/REPRODUCTION.md (at the paper's settings only). Exits 1 if any notebook
    fails, any claim is ERROR or not the status the registry expects, or (``--check``)
    any claim differs from the committed paper/claims.csv; 2 on a malformed option.
    """
    from facetlab.paper import reproduce as rep

    checkout = (root or project_root()).resolve()
    start = time.perf_counter()
    try:
        params: dict[str, Any] = dict(rep.parse_parameter(p) for p in (parameter or []))
        layout = rep.plan_layout(checkout, params, out=out, check=check)
        _check_writable(layout)  # a read-only checkout: one line before any kernel starts
        reference = rep.committed_claims(checkout) if check else None
        results = rep.reproduce(root=checkout, parameters=params, workers=workers, layout=layout)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(
            f"error: {where}{exc.strerror or exc}; give --out DIR to write elsewhere", err=True
        )
        raise typer.Exit(2) from exc
    total = time.perf_counter() - start
    bad = rep.failed(results)
    report = layout.paper / "REPRODUCTION.md"
    typer.echo(
        f"{len(results) - len(bad)}/{len(results)} notebooks ok in {total:.1f} s; "
        f"report: {_shown(report, checkout)}"
    )
    claims_csv = layout.paper / "claims.csv"
    claims = rep.read_claims(claims_csv) if claims_csv.is_file() else []
    if claims:
        typer.echo(
            f"claims by kind and status (headline = data), from {_shown(claims_csv, checkout)}:"
        )
        for line in rep.format_claim_counts(claims).splitlines():
            typer.echo(f"  {line}")
        typer.echo(
            f"  (the data PASS claims check {rep.distinct_numbers(claims)} distinct values; "
            "the paper states many numbers in several places)"
        )
    for result in bad:
        typer.echo(f"FAILED {result.source.name} (executed copy: {result.output})", err=True)
        typer.echo(result.error, err=True)
    failing = bool(bad) or not claims
    problems = rep.strict_problems(claims)
    if problems:
        failing = True
        typer.echo(
            f"{len(problems)} claim(s) are ERROR or not the status the registry expects"
            + (f" (settings {layout.tag})" if layout.tag else "")
            + ":",
            err=True,
        )
        for line in problems:
            typer.echo(f"  {line}", err=True)
    if reference is not None:
        changes = rep.compare_claims(reference, claims)
        if changes:
            failing = True
            typer.echo(
                f"check: {len(changes)} claim(s) differ from the committed paper/claims.csv:",
                err=True,
            )
            for change in changes:
                typer.echo(f"  {change.line()}", err=True)
        else:
            typer.echo(f"check: all {len(claims)} claims as committed in paper/claims.csv")
    if failing:
        raise typer.Exit(1)

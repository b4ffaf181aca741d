"""CLI command: ``facetlab reproduce`` — regenerate every table, figure and claim of the paper."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from facetlab.errors import ConfigError
from facetlab.paper import reproduce as rep
from facetlab.project import project_root


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command(name="reproduce")(reproduce_command)


def reproduce_command(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for the executed notebooks (default: <checkout>/_build/notebooks).",
        ),
    ] = None,
    parameter: Annotated[
        list[str] | None,
        typer.Option(
            "-p",
            "--parameter",
            metavar="<name=value>",
            help="Notebook parameter name=value (repeatable), e.g. -p threshold=15 -p dpi=100.",
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Notebooks run at once (one kernel each).")
    ] = rep.DEFAULT_WORKERS,
    root: Annotated[
        Path | None,
        typer.Option(help="The facetlab checkout (default: found from the working directory)."),
    ] = None,
) -> None:
    """Run every notebook with papermill; write figures/, paper/tables/, paper/claims.csv
    and paper/REPRODUCTION.md. Exits 1 if any notebook fails.
    """
    checkout = (root or project_root()).resolve()
    start = time.perf_counter()
    try:
        params: dict[str, Any] = dict(rep.parse_parameter(p) for p in (parameter or []))
        results = rep.reproduce(root=checkout, out_dir=out, parameters=params, workers=workers)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    total = time.perf_counter() - start
    bad = rep.failed(results)
    report = rep.report_path(checkout, params).relative_to(checkout)
    typer.echo(
        f"{len(results) - len(bad)}/{len(results)} notebooks ok in {total:.1f} s; report: {report}"
    )
    claims_csv = rep.report_path(checkout, params).parent / "claims.csv"
    if claims_csv.is_file():
        typer.echo("claims by kind and status (headline = data):")
        for line in rep.format_claim_counts(rep.read_claims(claims_csv)).splitlines():
            typer.echo(f"  {line}")
    for result in bad:
        typer.echo(f"FAILED {result.source.name} (executed copy: {result.output})", err=True)
        typer.echo(result.error, err=True)
    if bad:
        raise typer.Exit(1)

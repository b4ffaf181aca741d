"""CLI commands: ``facetlab data fetch|info|path|verify`` (the FACET v3 data)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from facetlab.commands import fail
from facetlab.errors import DataError

data_app = typer.Typer(
    name="data",
    help="Obtain, verify and locate the FACET v3 data (pinned commit, sha256-checked).",
    no_args_is_help=True,
)


@data_app.command("fetch")
def fetch_command(
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    mirror: Annotated[
        Path | None,
        typer.Option(
            "--mirror", help="Copy from this local folder (overrides FACETLAB_DATA_MIRROR)."
        ),
    ] = None,
) -> None:
    """Obtain every file (download, or copy from FACETLAB_DATA_MIRROR) and verify its sha256."""
    from facetlab import datasets

    show_progress = not quiet and sys.stderr.isatty()
    try:
        if show_progress:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task("FACET v3", total=len(datasets.registry()))

                def advance(done: int, total: int, name: str) -> None:
                    bar.update(task, completed=done, description=name[-40:])

                report = datasets.fetch(progress=advance, mirror=mirror)
        else:
            report = datasets.fetch(mirror=mirror)
    except DataError as exc:
        fail(str(exc), 1)
    typer.echo(f"{report}\nsource: {report.source} ({report.seconds:.2f} s)")
    if report.cleaned:
        typer.echo(f"removed {len(report.cleaned)} partial file(s) of an interrupted fetch")
    if report.unregistered:
        typer.echo(_unregistered_lines(report.unregistered), err=True)
        raise typer.Exit(code=1)


def _unregistered_lines(names: tuple[str, ...]) -> str:
    listed = "".join(f"\n  {name}" for name in names[:20])
    more = f"\n  ... and {len(names) - 20} more" if len(names) > 20 else ""
    return (
        f"error: {len(names)} file(s) in the data folder are not in the registry; facetlab "
        f"never reads them and refuses the folder until they are moved out:{listed}{more}"
    )


@data_app.command("info")
def info_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Show where the data comes from, how to cite it, its license and its local state."""
    from facetlab import datasets

    info = datasets.info()
    if as_json:
        payload = {
            k: (str(v) if v is not None and k in ("location", "mirror") else v)
            for k, v in asdict(info).items()
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    lines = [
        f"dataset:   {info.name}",
        f"source:    {info.repository} @ {info.commit}",
        f"DOI:       https://doi.org/{info.doi}",
        f"license:   {info.license} ({info.license_url})",
        f"location:  {info.location}",
        f"mirror:    {info.mirror if info.mirror else '(none; files are downloaded)'}",
        f"state:     {info.state} [{info.files_present}/{info.files_expected} files]",
        *(f"  not in the registry: {name}" for name in info.unregistered[:20]),
        "",
        "Cite as:",
        f"  {info.citation}",
        "",
        info.bibtex,
        "",
        *info.notes,
    ]
    typer.echo("\n".join(lines))


@data_app.command("path")
def path_command(
    fetch: Annotated[
        bool,
        typer.Option(
            "--fetch/--no-fetch",
            help="Fetch and verify first (default) or just print the location.",
        ),
    ] = True,
) -> None:
    """Print the data root (the folder holding instances/ and results/)."""
    from facetlab import datasets

    try:
        root = datasets.data_dir() if fetch else datasets.data_source().root
    except DataError as exc:
        fail(str(exc), 1)
    typer.echo(str(root))


@data_app.command("verify")
def verify_command() -> None:
    """Re-hash every file of the data loaders read (ignoring the stamp); list missing,
    altered and unregistered files (a copy of a registered file says of which)."""
    from facetlab import datasets

    report = datasets.verify()
    typer.echo(f"FACET data: {report.source}\n{report} ({report.seconds:.2f} s)")
    if report.cleaned:
        typer.echo(f"removed {len(report.cleaned)} partial file(s) of an interrupted fetch")
    problems = report.problems()
    for line in problems[:40]:
        typer.echo(f"  {line}", err=True)
    if len(problems) > 40:
        typer.echo(f"  ... and {len(problems) - 40} more", err=True)
    if report.unregistered:
        typer.echo(
            "facetlab never reads unregistered files and refuses the folder until they are "
            "moved out",
            err=True,
        )
    if (report.missing or report.altered) and report.source and report.source.owned:
        typer.echo("fix: `facetlab data fetch` restores every missing or altered file", err=True)
    elif report.missing or report.altered:
        typer.echo(f"fix: restore {report.root}, or unset {datasets.ENV_MIRROR}", err=True)
    if not report.ok:
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add the ``data`` group to the ``facetlab`` app."""
    app.add_typer(data_app)

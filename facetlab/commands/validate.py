"""CLI commands: ``facetlab validate PATH...`` and ``facetlab schema [KIND]`` (instance files,
C2 perturbation and C3 compliance sets, sweep files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from facetlab.instances import FileKind


def validate_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH",
            help="Instance, perturbation or compliance files, or folders (searched recursively).",
        ),
    ],
    strict: Annotated[
        bool, typer.Option("--strict", help="Treat warnings as errors (non-zero exit).")
    ] = False,
    facet_data: Annotated[
        bool,
        typer.Option(
            "--facet-data/--no-facet-data",
            help="Resolve base instances in the local FACET data too (never downloads).",
        ),
    ] = True,
) -> None:
    """Check files and print one line per problem cause: FILE:POINTER: SEVERITY: EXPECTED.

    Exits 1 if any error was found (or any warning, with --strict).
    """
    from facetlab.checking import validate

    report = validate(paths, use_facet_data=facet_data)
    # one line per cause, with the count of places
    typer.echo("\n".join([*report.lines(), report.summary()]))
    if report.errors or (strict and report.warnings):
        raise typer.Exit(code=1)


def schema_command(
    what: Annotated[
        str | None,
        typer.Argument(
            metavar="KIND",
            help="instance (default), perturbations, compliance, or sweep (a sweep file).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the schema here (default: standard output)."),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind", help="Which file kind: instance, perturbations, compliance or sweep."
        ),
    ] = None,
) -> None:
    """Write the JSON Schema of a file kind, for editors to validate while you author."""
    from typing import Any

    from facetlab.checking import json_schema

    if what is not None and kind is not None and what != kind:
        raise typer.BadParameter(f"{what!r} and --kind {kind!r}: give one kind", param_hint="KIND")
    chosen = what or kind or "instance"
    kinds: tuple[FileKind, ...] = ("instance", "perturbations", "compliance")
    schema: dict[str, Any]
    if chosen == "sweep":
        from facetlab.runner.sweepconfig import sweep_json_schema

        schema = sweep_json_schema()
    elif chosen in kinds:
        schema = json_schema(next(k for k in kinds if k == chosen))
    else:
        raise typer.BadParameter(
            f"expected one of {', '.join((*kinds, 'sweep'))}, got {chosen!r}",
            param_hint="KIND" if what is not None else "--kind",
        )
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {chosen} schema to {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``validate`` and ``schema`` to the ``facetlab`` app."""
    app.command("validate")(validate_command)
    app.command("schema")(schema_command)

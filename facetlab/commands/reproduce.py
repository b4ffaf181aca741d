"""CLI command: ``facetlab reproduce`` — regenerate every table, figure and claim of the paper."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from facetlab.errors import ConfigError, DataError
from facetlab.files import check_writable_dir
from facetlab.paper import notebooks, report
from facetlab.project import project_root

if TYPE_CHECKING:  # paper.reproduce is imported when the command runs (not for `--help`)
    from facetlab.datasets import VerifyReport
    from facetlab.paper import reproduce as rep


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
        if (problem := check_writable_dir(folder, what=what, min_free=0)) is not None:
            raise ConfigError(f"{problem}; give --out DIR to write the reproduction elsewhere")


def _listed(header: str, lines: Sequence[str]) -> bool:
    """Print ``header`` and the ``lines`` indented, on stderr, when there are any; whether
    there were."""
    if lines:
        typer.echo(header, err=True)
        for line in lines:
            typer.echo(f"  {line}", err=True)
    return bool(lines)


def _run(
    checkout: Path, params: dict[str, Any], out: Path | None, check: bool, workers: int
) -> tuple[rep.Layout, VerifyReport, list[notebooks.NotebookResult]]:
    """Check the data, plan where the run writes, run the notebooks and write the report."""
    from facetlab.paper import reproduce as rep

    data = rep.verify_data(params)
    typer.echo(f"FACET data: {data.source}\ndata check: {data}")
    if _listed(
        "data check: not the pinned data; it is read as it is, the outputs go under _build/ "
        "and findings.csv says which claims it moves:",
        data.problems(),
    ):
        params["data_dir"] = str(data.root)  # read in place, never refused nor repaired
    layout = rep.plan_layout(checkout, params, out=out, check=check)
    _check_writable(layout)  # a read-only checkout: one line before any kernel starts
    results = rep.reproduce(
        root=checkout, parameters=params, workers=workers, layout=layout, data=data
    )
    return layout, data, results


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
            help="Write under _build/check/ and exit 1, listing them, when the data is not the "
            "pinned data or any claim's status or value differs from the committed "
            "paper/claims.csv.",
        ),
    ] = False,
    workers: Annotated[
        int, typer.Option(help="Notebooks run at once (one kernel each).")
    ] = notebooks.DEFAULT_WORKERS,
    root: Annotated[
        Path | None,
        typer.Option(help="The facetlab checkout (default: found from the working directory)."),
    ] = None,
) -> None:
    """Run every notebook with papermill; write figures/, paper/tables/, paper/claims.csv
    and paper/REPRODUCTION.md (at the paper's settings and on the pinned data only). Prints
    the data read (FACETLAB_DATA_MIRROR, else the data dir; docs/data.md) and every file that
    differs from the registry. Exits 1 if any notebook fails, any claim is ERROR or not the
    status the registry expects, or (``--check``) the data is not the pinned data or any
    claim differs from the committed paper/claims.csv; 2 on a malformed option.
    """
    from facetlab.paper import reproduce as rep

    checkout = (root or project_root()).resolve()
    start = time.perf_counter()
    try:
        params: dict[str, Any] = dict(notebooks.parse_parameter(p) for p in (parameter or []))
        reference = rep.committed_claims(checkout) if check else None
        layout, data, results = _run(checkout, params, out, check, workers)
    except (ConfigError, DataError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(
            f"error: {where}{exc.strerror or exc}; give --out DIR to write elsewhere", err=True
        )
        raise typer.Exit(2) from exc
    seconds = time.perf_counter() - start
    if _summary(checkout, layout, data, results, reference, seconds):
        raise typer.Exit(1)


def _summary(
    checkout: Path,
    layout: rep.Layout,
    data: VerifyReport,
    results: Sequence[notebooks.NotebookResult],
    reference: Sequence[Mapping[str, str]] | None,
    seconds: float,
) -> bool:
    """Print how the run went (notebooks, claims, the check); whether it failed."""
    from facetlab.paper import reproduce as rep

    bad = [r for r in results if not r.ok]
    typer.echo(
        f"{len(results) - len(bad)}/{len(results)} notebooks ok in {seconds:.1f} s; "
        f"report: {_shown(layout.paper / 'REPRODUCTION.md', checkout)}"
    )
    claims_csv = layout.paper / "claims.csv"
    claims = report.read_claims(claims_csv) if claims_csv.is_file() else []
    if claims:
        typer.echo(
            f"claims by kind and status (headline = data), from {_shown(claims_csv, checkout)}:\n"
            + "".join(f"  {line}\n" for line in report.format_claim_counts(claims).splitlines())
            + f"  (the data PASS claims check {report.distinct_numbers(claims)} distinct values; "
            "the paper states many numbers in several places)"
        )
    for result in bad:
        typer.echo(f"FAILED {result.source.name} (executed copy: {result.output})", err=True)
        typer.echo(result.error, err=True)
    problems = rep.strict_problems(claims)
    tag = f" (settings {layout.tag})" if layout.tag else ""
    header = f"{len(problems)} claim(s) are ERROR or not the status the registry expects{tag}:"
    failing = _listed(header, problems) or bool(bad) or not claims
    if reference is not None:
        changes = [c.line() for c in rep.compare_claims(reference, claims)]
        header = f"check: {len(changes)} claim(s) differ from the committed paper/claims.csv:"
        failing = _listed(header, changes) or failing
        if not changes:
            typer.echo(f"check: all {len(claims)} claims as committed in paper/claims.csv")
        if not data.ok:
            failing = True
            typer.echo(f"check: the data read is not the pinned data ({data})", err=True)
    return failing

"""CLI command ``facetlab verify-citations``: check the paper's bibliography against arXiv."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from facetlab.citations import ARXIV_API_URL, CitationError, load_bib, verify_bib

DEFAULT_BIB = Path("paper") / "references.bib"


def verify_citations(
    bib: Annotated[
        Path, typer.Option("--bib", help="BibTeX file to check (default: paper/references.bib).")
    ] = DEFAULT_BIB,
    api_url: Annotated[
        str, typer.Option("--api-url", help="arXiv API endpoint (a local fake in tests).")
    ] = ARXIV_API_URL,
    timeout: Annotated[float, typer.Option("--timeout", help="HTTP timeout in seconds.")] = 30.0,
) -> None:
    """Check every arXiv entry's title and authors against the arXiv API (needs network).

    Prints PASS / FAIL / SKIP per entry. Exit status: 0 all arXiv entries match,
    1 some entry differs, 2 the bibliography or the API could not be read.
    """
    try:
        entries = load_bib(bib)
        checks = verify_bib(entries, api_url=api_url, timeout=timeout)
    except CitationError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    for check in checks:
        ident = f"arXiv:{check.arxiv_id}" if check.arxiv_id else "-"
        typer.echo(f"{check.status:<4}  {check.key:<28} {ident:<17} {check.detail}")
    failed = sum(1 for c in checks if c.status == "FAIL")
    passed = sum(1 for c in checks if c.status == "PASS")
    skipped = sum(1 for c in checks if c.status == "SKIP")
    typer.echo(f"{passed} passed, {failed} failed, {skipped} skipped (no arXiv id)")
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command("verify-citations")(verify_citations)

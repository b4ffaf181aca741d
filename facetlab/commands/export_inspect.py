"""CLI command: ``facetlab export-inspect DIR --out LOGDIR``."""

from pathlib import Path
from typing import Annotated

import typer

from facetlab.commands import one_line_errors
from facetlab.errors import ConfigError


def export_inspect_command(
    source: Annotated[
        Path, typer.Argument(help="A sweep folder (or any folder of facetlab records).")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the Inspect logs to.")],
    log_format: Annotated[
        str, typer.Option("--format", help="Log format: eval (default) or json.")
    ] = "eval",
) -> None:
    """Write a sweep as Inspect eval logs (one per model and probe) for `inspect view`.

    `facetlab import-inspect` of the written logs gives back the same records.
    Exits 2 on a bad folder.
    """
    with one_line_errors():
        try:
            from facetlab.interop.export import export_sweep
        except ImportError as exc:
            from facetlab.interop import INSTALL_HINT

            raise ConfigError(f"export-inspect needs inspect_ai ({INSTALL_HINT}): {exc}") from exc
        if log_format not in ("eval", "json"):
            raise ConfigError(f"--format must be eval or json, got {log_format!r}")
        result = export_sweep(source, out, log_format=log_format)  # type: ignore[arg-type]
    left = ", ".join(f"{n} {probe}" for probe, n in sorted(result.skipped.items()))
    note = f"; left out (no Inspect task): {left}" if left else ""
    typer.echo(
        "".join(f"{path}\n" for path in result.written)
        + f"wrote {len(result.written)} log(s) of {result.trials} trial(s) to {out}{note}\n"
        f"browse them with: inspect view --log-dir {out}"
    )


def register(app: typer.Typer) -> None:
    """Add this module's command to the ``facetlab`` app."""
    app.command("export-inspect")(export_inspect_command)

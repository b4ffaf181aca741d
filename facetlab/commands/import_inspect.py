"""CLI command: ``facetlab import-inspect LOG... --out DIR``."""

from pathlib import Path
from typing import Annotated

import typer

from facetlab.commands import one_line_errors
from facetlab.errors import ConfigError


def import_inspect_command(
    logs: Annotated[
        list[Path],
        typer.Argument(help="Inspect logs (.eval or .json) of facetlab/facet_* tasks, or folders."),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write <out>/records/<trial_id>.json to.")
    ],
    parser: Annotated[
        str, typer.Option("--parser", help="Reply parser: strict (default) or facet-v3.")
    ] = "strict",
    partial: Annotated[
        bool,
        typer.Option(
            "--partial", help="Import what an unfinished log (status error/cancelled) holds."
        ),
    ] = False,
    max_log_mb: Annotated[
        int,
        typer.Option(
            "--max-log-mb",
            min=1,
            help="Refuse a log larger than this (a .json file; an .eval file, and each of its "
            "members inflated; all members inflated together may take twice this).",
        ),
    ] = 128,
) -> None:
    """Turn Inspect logs of the FACET tasks into facetlab records (one per sample and epoch).

    Every log is checked before anything is written. Exits 2 on a bad log.
    """
    with one_line_errors():
        try:
            from facetlab.interop.logs import import_logs
        except ImportError as exc:
            from facetlab.interop import INSTALL_HINT

            raise ConfigError(f"import-inspect needs inspect_ai ({INSTALL_HINT}): {exc}") from exc
        from facetlab.interop.logfile import LogLimits

        mib = max_log_mb * 2**20
        limits = LogLimits(
            max_json_bytes=mib,
            max_eval_bytes=mib,
            max_member_bytes=mib,
            max_inflated_bytes=2 * mib,
        )
        result = import_logs(logs, out, parser=parser, partial=partial, limits=limits)
    typer.echo(
        "".join(
            f"{log.path}: {log.task} ({log.status}), {log.model}: {len(log.records)} trials\n"
            for log in result.logs
        )
        + f"wrote {result.records} record(s) to {out / 'records'} "
        f"({result.failed} failed, {result.unparsed} unparsed replies)"
    )


def register(app: typer.Typer) -> None:
    """Add this module's command to the ``facetlab`` app."""
    app.command("import-inspect")(import_inspect_command)

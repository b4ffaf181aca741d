"""CLI commands: ``facetlab records compact DIR``."""

from pathlib import Path
from typing import Annotated

import typer

from facetlab.commands import fail
from facetlab.errors import FacetlabError

records_app = typer.Typer(
    name="records", help="Manage a sweep's stored records.", no_args_is_help=True
)


@records_app.command("compact")
def compact_command(
    folders: Annotated[
        list[Path],
        typer.Argument(metavar="DIR", help="Sweep folders (or their records/ folders) to compact."),
    ],
) -> None:
    """Compact a sweep's shards and one-file-per-trial records into a Parquet part.

    The part holds every record (the full record, and its table row); the shards and
    files it holds are removed once it is on disk. Files that are not valid records
    are left in place and listed. Exits 2 on a folder that cannot be compacted.
    """
    from facetlab.records.compaction import compact

    for folder in folders:
        try:
            done = compact(folder)
        except (FacetlabError, OSError) as exc:
            fail(f"{folder}: {exc}")
        for shown, problem in done.problems:
            typer.echo(f"warning: {shown}: left out, {problem}", err=True)
        left = f"; {done.left} still being written, left for later" if done.left else ""
        if done.part is None:
            typer.echo(f"{folder}: nothing to compact{left}")
        else:
            typer.echo(
                f"{folder}: {done.records} record(s) compacted into {done.part.name} "
                f"({done.sources_removed} shard(s)/file(s) replaced{left})"
            )


def register(app: typer.Typer) -> None:
    """Add the ``records`` group to the ``facetlab`` app."""
    app.add_typer(records_app)

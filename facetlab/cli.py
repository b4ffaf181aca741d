"""The ``facetlab`` command. Each group of sub-commands lives in ``facetlab/commands/``.

A new command is one function in one module there plus one line in ``_COMMAND_MODULES``.
"""

import gc
import importlib
import sys
from typing import Annotated

import typer

app = typer.Typer(
    name="facetlab",
    help="Measure whether an LLM's stated reasons are the reasons it used (FACET probes, CRAFT).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    # Plain click help: flags read as `--dry-run`, not `--dry-run <bool>` as rich help shows them.
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from facetlab.project import version

        typer.echo(f"facetlab {version()}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the facetlab version and exit.",
        ),
    ] = False,
) -> None:
    """Options of the ``facetlab`` command itself; the help text is the app's."""
    from facetlab.backends._common import redacting  # not for --help: ~60 ms of imports

    # the last line of defence on the console: no known secret shape is printed
    sys.stdout, sys.stderr = redacting(sys.stdout), redacting(sys.stderr)


_COMMAND_MODULES = (
    "facetlab.commands.data",  # facetlab data fetch|info|path|verify
    "facetlab.commands.validate",  # facetlab validate, facetlab schema
    "facetlab.commands.prompts",  # facetlab check-prompts, facetlab prompt
    "facetlab.commands.run",  # facetlab run
    "facetlab.commands.collect",  # facetlab collect
    "facetlab.commands.reproduce",  # facetlab reproduce
    "facetlab.commands.report",  # facetlab report
    "facetlab.commands.new_domain",  # facetlab new-domain
    "facetlab.commands.draft",  # facetlab draft c2|adversarial
    "facetlab.commands.validity",  # facetlab validity
    "facetlab.commands.profile",  # facetlab profile
    "facetlab.commands.import_inspect",  # facetlab import-inspect
    "facetlab.commands.export_inspect",  # facetlab export-inspect
    "facetlab.commands.records",  # facetlab records compact
)

for _name in _COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    finally:
        # The interpreter's last garbage collection walks every object the imports made
        # (the SDKs' and pydantic's types): ~0.2 s at exit. Frozen objects are skipped.
        gc.freeze()

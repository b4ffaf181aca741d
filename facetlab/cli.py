"""The ``facetlab`` command. Each group of sub-commands lives in ``facetlab/commands/``.

A new command is one function in one module there plus one line in ``_COMMAND_MODULES``.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="facetlab",
    help="Measure whether an LLM's stated reasons are the reasons it used (FACET probes, CRAFT).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

_COMMAND_MODULES = (
    "facetlab.commands.data",  # facetlab data fetch|info|path
    "facetlab.commands.validate",  # facetlab validate, facetlab schema
    "facetlab.commands.prompts",  # facetlab check-prompts, facetlab prompt
    "facetlab.commands.run",  # facetlab run
    "facetlab.commands.reproduce",  # facetlab reproduce
    "facetlab.commands.report",  # facetlab report
    "facetlab.commands.citations",  # facetlab verify-citations
)

for _name in _COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Console-script entry point."""
    app()

"""Sub-commands of the ``facetlab`` CLI, one module per group, and how they fail: one
``error:`` line on standard error and an exit code, never a traceback."""

import contextlib
from collections.abc import Iterator
from typing import NoReturn

import typer

from facetlab.errors import FacetlabError


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: <message>`` on standard error and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def one_line_errors(code: int = 2) -> Iterator[None]:
    """A :class:`~facetlab.errors.FacetlabError` raised inside fails the command (``code``)."""
    try:
        yield
    except FacetlabError as exc:
        fail(str(exc), code)

"""Where the facetlab checkout is, seen from a notebook or a command.

>>> (project_root() / "pyproject.toml").is_file()  # doctest: +SKIP
True
"""

from functools import cache
from pathlib import Path

__all__ = ["build_dir", "project_root", "version"]


@cache
def version() -> str:
    """The installed facetlab's version, from its package metadata (``pyproject.toml``'s)."""
    from importlib.metadata import version as of  # ~30 ms: only when asked

    return of("facetlab")


def project_root(start: Path | None = None) -> Path:
    """The facetlab checkout holding ``notebooks/`` and ``paper/``: the nearest such
    ancestor of ``start`` (default: the working directory), else ``start`` itself.

    Notebooks run from ``notebooks/`` (JupyterLab) or from the root (papermill, CI);
    both find the same ``figures/`` and ``paper/tables/`` this way.
    """
    here = (start or Path.cwd()).resolve()
    return next(
        (
            candidate
            for candidate in (here, *here.parents)
            if (candidate / "pyproject.toml").is_file() and (candidate / "notebooks").is_dir()
        ),
        here,
    )


def build_dir(root: Path, tag: str | None = None) -> Path:
    """Where a run that is not ``facetlab reproduce`` writes: ``<root>/_build/interactive``,
    or ``<root>/_build/variants/<tag>`` for non-default analysis settings.

    ``_build/`` is gitignored, so running a notebook with its defaults (in JupyterLab,
    or papermill without output folders) never rewrites committed ``figures/``,
    ``paper/`` or ``results/``; ``facetlab reproduce`` passes those folders explicitly.

    >>> build_dir(Path("/repo")).as_posix(), build_dir(Path("/repo"), "t15").as_posix()
    ('/repo/_build/interactive', '/repo/_build/variants/t15')
    """
    return root / "_build" / "variants" / tag if tag else root / "_build" / "interactive"

"""Saving figures so that an unchanged figure is the same bytes (any domain, any figure).

The paper's own figures live in :mod:`facetlab.paper.figures`; this module holds what
every figure shares.

>>> from matplotlib.figure import Figure
>>> fig = Figure()
>>> _ = fig.subplots().plot([0, 1])
>>> save_figure(fig, "demo", "_build/demo", ["svg"])  # doctest: +SKIP
[PosixPath('_build/demo/demo.svg')]
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure

from facetlab.errors import ConfigError, DataError

__all__ = ["literal_columns", "literal_text", "require_table", "save_figure"]

# Per format, the metadata that changes between runs (dates, versions), left out so an
# unchanged figure is saved as the same bytes.
_STABLE_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
}


def save_figure(
    fig: Figure,
    name: str,
    out_dir: str | Path,
    formats: Sequence[str] = ("png", "svg"),
    dpi: int = 200,
) -> list[Path]:
    """Write ``fig`` as ``<out_dir>/<name>.<fmt>`` for each format; returns the paths.

    Metadata that changes between runs (creation date, software version) is left
    out, so regenerating an unchanged figure gives the same SVG bytes.
    """
    if bad := [f for f in formats if f not in _STABLE_METADATA]:
        raise ConfigError(
            f"unsupported figure format(s) {bad}; choose from {sorted(_STABLE_METADATA)}"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    # a fixed salt gives stable SVG element ids; text as paths needs no fonts to view
    with mpl.rc_context({"svg.hashsalt": "facetlab", "svg.fonttype": "path"}):
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(
                path, format=fmt, dpi=dpi, bbox_inches="tight", metadata=_STABLE_METADATA[fmt]
            )
            paths.append(path)
    return paths


def literal_text(text: object) -> str:
    """``text`` as matplotlib draws it literally: every ``$`` escaped, so a name such as
    ``a$x^{$b`` never becomes math text (which would draw wrongly or fail the figure).

    >>> literal_text("cost $5 and $x$")
    'cost \\\\$5 and \\\\$x\\\\$'
    """
    return str(text).replace("$", r"\$")


def literal_columns(table: Any, *columns: str) -> Any:
    """A copy of DataFrame ``table`` whose text ``columns`` (names, ids: anything that
    becomes a label, tick or legend entry) are :func:`literal_text`; absent ones are skipped."""
    present = [c for c in columns if c in table.columns]
    return table.assign(**{c: table[c].map(literal_text) for c in present}) if present else table


def require_table(table: Any, columns: Sequence[str], what: str, hint: str = "") -> None:
    """A :class:`DataError` unless ``table`` (a DataFrame) has rows and every one of ``columns``.

    ``what`` names the figure in the message; ``hint`` says where such a table comes from.

    >>> import pandas as pd
    >>> require_table(pd.DataFrame({"n": []}), ["n", "mean"], "fig")
    Traceback (most recent call last):
    ...
    facetlab.errors.DataError: fig: the table lacks columns ['mean']
    """
    if missing := [c for c in columns if c not in table.columns]:
        raise DataError(f"{what}: the table lacks columns {missing}{hint}")
    if table.empty:
        raise DataError(f"{what}: the table has no rows (no usable trials){hint}")

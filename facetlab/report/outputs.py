"""Where a study's tables and figures go, and what the notebook shows for each.

:class:`ReportOutputs` writes ``<out_dir>/tables/<name>.csv`` and ``.md`` and
``<out_dir>/figures/<name>.png|svg``. A section without a table, or a figure that
cannot be drawn, is shown as a :class:`Note` that says why (nothing is written for
it), so an empty section is never silent. A table is shown as a :class:`Table`: no index
column, numbers rounded for reading, every cell escaped.

Everything shown comes from data (model names, instance ids, folder names), so it is
escaped for where it is shown: Markdown without markup, HTML without tags.

>>> Note("no P3 trials")._repr_markdown_()
'*no P3 trials*'
>>> Note("no trials of <img src=x onerror=alert(1)>")._repr_markdown_()
'*no trials of &lt;img src=x onerror=alert(1)>*'
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from facetlab.analysis.tables import format_frame, markdown_escape, to_csv, to_markdown
from facetlab.errors import DataError
from facetlab.figures import save_figure
from facetlab.report.study import Section

__all__ = ["DISPLAY_DIGITS", "Note", "ReportOutputs", "Table"]

DISPLAY_DIGITS = 2
"""Decimals a table shows in the notebook and the ``.md`` copy (the CSV keeps 6)."""


@dataclass(frozen=True)
class Note:
    """A short remark a notebook displays as Markdown (why a section is empty)."""

    text: str

    def _repr_markdown_(self) -> str:
        return f"*{markdown_escape(self.text, emphasis=True)}*"


@dataclass(frozen=True)
class Table:
    """A study table as a notebook shows it: no index column, floats rounded to
    :data:`DISPLAY_DIGITS` decimals (magnitudes below 1 keep 3 significant digits), every
    cell HTML-escaped, inside a ``facetlab-table`` box that scrolls when the table is wide.

    >>> t = Table(pd.DataFrame({"model": ["<b>m</b>"], "mean": [18.125]}), "demo")
    >>> print(t._repr_html_())  # doctest: +NORMALIZE_WHITESPACE
    <div class="facetlab-table"><table><thead><tr><th>model</th><th class="num">mean</th></tr>
    </thead><tbody><tr><td>&lt;b&gt;m&lt;/b&gt;</td><td class="num">18.12</td></tr>
    </tbody></table></div>
    """

    frame: pd.DataFrame
    name: str

    def _repr_html_(self) -> str:
        numeric = [
            pd.api.types.is_numeric_dtype(self.frame[c])
            and not pd.api.types.is_bool_dtype(self.frame[c])
            for c in self.frame.columns
        ]

        def cell(tag: str, text: str, num: bool) -> str:
            return (
                f'<{tag} class="num">{html.escape(text)}</{tag}>'
                if num
                else (f"<{tag}>{html.escape(text)}</{tag}>")
            )

        head = "".join(
            cell("th", str(c), n) for c, n in zip(self.frame.columns, numeric, strict=True)
        )
        rows = [
            "<tr>" + "".join(cell("td", t, n) for t, n in zip(row, numeric, strict=True)) + "</tr>"
            for row in format_frame(self.frame, DISPLAY_DIGITS, fixed=True)
        ]
        return (
            f'<div class="facetlab-table"><table><thead><tr>{head}</tr>\n</thead><tbody>'
            + "\n".join(rows)
            + "\n</tbody></table></div>"
        )

    def __repr__(self) -> str:
        return self.frame.to_string(index=False)


@dataclass(frozen=True)
class ReportOutputs:
    """Writes a report's tables and figures under ``out_dir``."""

    out_dir: Path
    formats: tuple[str, ...] = ("png", "svg")
    dpi: int = 150

    @classmethod
    def at(cls, out_dir: str | Path | None = None) -> ReportOutputs:
        """Outputs under ``out_dir``; ``None``: ``<checkout>/_build/study`` (gitignored), so
        running the notebook with its defaults never touches a committed file."""
        from facetlab.project import project_root

        return cls(Path(out_dir) if out_dir is not None else project_root() / "_build" / "study")

    @property
    def tables_dir(self) -> Path:
        return self.out_dir / "tables"

    @property
    def figures_dir(self) -> Path:
        return self.out_dir / "figures"

    def where(self, instances: str | Path) -> Note:
        """The line saying which instances folder is read and where outputs go (folder
        names are data: shown escaped, like every other name)."""
        return Note(f"Instances: {instances}. Tables and figures go to {self.out_dir}.")

    def table(self, section: Section | pd.DataFrame, name: str | None = None) -> Table | Note:
        """Write a table as ``tables/<name>.csv`` and ``.md``; returns it as a :class:`Table`
        to display (its DataFrame is ``.frame``), or a :class:`Note` when there is none."""
        if isinstance(section, Section):
            if section.table is None:
                return Note(f"No {section.name} table: {section.reason}")
            frame, name = section.table, name or section.name
        else:
            frame = section
        if name is None:
            raise ValueError("a DataFrame needs a table name")
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        (self.tables_dir / f"{name}.csv").write_text(to_csv(frame), encoding="utf-8", newline="\n")
        md = to_markdown(frame, digits=DISPLAY_DIGITS) + "\n"
        (self.tables_dir / f"{name}.md").write_text(md, encoding="utf-8", newline="\n")
        return Table(frame, name)

    def figure(self, name: str, draw: Callable[[], Figure], *needs: Section) -> object:
        """Draw and save ``figures/<name>.<fmt>``; returns the Figure, or a :class:`Note`
        when a section it needs has no table or the figure has nothing to draw."""
        if (empty := next((s for s in needs if s.table is None), None)) is not None:
            return Note(f"No {name} figure: {empty.reason}")
        try:
            fig = draw()
        except DataError as exc:
            return Note(f"No {name} figure: {exc}")
        save_figure(fig, name, self.figures_dir, self.formats, self.dpi)
        return fig

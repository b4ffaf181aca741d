"""Where a study's tables and figures go, and what the notebook shows for each.

:class:`ReportOutputs` writes ``<out_dir>/tables/<name>.csv`` and ``.md`` and
``<out_dir>/figures/<name>.png|svg``. A section without a table, or a figure that
cannot be drawn, is shown as a :class:`Note` that says why (nothing is written for
it), so an empty section is never silent.

>>> Note("no P3 trials")._repr_markdown_()
'*no P3 trials*'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from facetlab.analysis.tables import to_csv, to_markdown
from facetlab.errors import DataError
from facetlab.figures import save_figure
from facetlab.report.study import Section

__all__ = ["Note", "ReportOutputs"]


@dataclass(frozen=True)
class Note:
    """A short remark a notebook displays as Markdown (why a section is empty)."""

    text: str

    def _repr_markdown_(self) -> str:
        return f"*{self.text}*"


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

    def table(self, section: Section | pd.DataFrame, name: str | None = None) -> object:
        """Write a table as ``tables/<name>.csv`` and ``.md``; returns it (or a :class:`Note`)."""
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
        md = to_markdown(frame, digits=2) + "\n"
        (self.tables_dir / f"{name}.md").write_text(md, encoding="utf-8", newline="\n")
        return frame

    def figure(self, name: str, draw: Callable[[], Figure], *needs: Section) -> object:
        """Draw and save ``figures/<name>.<fmt>``; returns the Figure, or a :class:`Note`
        when a section it needs has no table or the figure has nothing to draw."""
        for section in needs:
            if section.table is None:
                return Note(f"No {name} figure: {section.reason}")
        try:
            fig = draw()
        except DataError as exc:
            return Note(f"No {name} figure: {exc}")
        save_figure(fig, name, self.figures_dir, self.formats, self.dpi)
        return fig

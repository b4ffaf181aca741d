"""What a paper notebook loads and where it writes: the trials, the output folders.

Notebooks use :class:`Outputs` to load the trials once and write their tables and
figures to the right places, so they stay thin:

>>> out = Outputs.open(data_dir=None)                               # doctest: +SKIP
>>> out.table(cells.table2_p3(out.trials), "table2_p3")              # doctest: +SKIP
>>> out.figure(figures.fig5_asymmetry(frame), "fig5_asymmetry")      # doctest: +SKIP

Only a run at the paper's settings (:data:`PAPER_SETTINGS`) with the folders given by
:func:`facetlab.paper.reproduce.reproduce` writes the committed outputs; anything else
goes under ``_build/``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from facetlab.project import build_dir, project_root

# Notebook kernels import this module: pandas and matplotlib are imported where used.
if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


__all__ = [
    "PAPER_SETTINGS",
    "Outputs",
    "SavedFigure",
    "as_formats",
    "cached_trials",
    "output_dirs",
    "variant_tag",
]


PAPER_SETTINGS: dict[str, Any] = {"threshold": 10, "split_point": 20, "representative": "first"}
"""The analysis settings of the published paper; the committed outputs use exactly these."""


def variant_tag(settings: Mapping[str, Any]) -> str | None:
    """``None`` at the paper's settings, else a folder name such as ``"t15-s20-first"``.

    Outputs at other settings never overwrite the committed ones: they go under
    ``_build/variants/<tag>/`` unless the caller names the folders.
    """
    merged = {**PAPER_SETTINGS, **{k: v for k, v in settings.items() if k in PAPER_SETTINGS}}
    if (
        float(merged["threshold"]) == float(PAPER_SETTINGS["threshold"])
        and float(merged["split_point"]) == float(PAPER_SETTINGS["split_point"])
        and merged["representative"] == PAPER_SETTINGS["representative"]
    ):
        return None
    return f"t{float(merged['threshold']):g}-s{float(merged['split_point']):g}-{merged['representative']}"


def output_dirs(
    root: Path,
    settings: Mapping[str, Any] | None = None,
    figures_dir: str | Path | None = None,
    tables_dir: str | Path | None = None,
    variant: str | None = None,
) -> tuple[Path, Path]:
    """Where a notebook writes figures and tables: the given folders, else
    :func:`facetlab.project.build_dir` (``_build/interactive/`` at the paper's settings,
    ``_build/variants/<tag>/`` away from them; ``variant``, if given, is the tag). Only
    :func:`facetlab.paper.reproduce.reproduce` names the committed folders.
    """
    base = build_dir(root, variant or variant_tag(settings or {}))
    figures = Path(figures_dir) if figures_dir is not None else base / "figures"
    return figures, Path(tables_dir) if tables_dir is not None else base / "tables"


def as_formats(formats: str | Sequence[str]) -> tuple[str, ...]:
    """``"png, svg"`` / ``'["pdf"]'`` / ``["png"]`` → ``("png", "svg")`` etc."""
    if isinstance(formats, str):
        formats = [f.strip(" '\"") for f in formats.strip("[]").split(",")]
    return tuple(f for f in formats if f)


_TRIALS: dict[tuple[str, str], pd.DataFrame] = {}


def cached_trials(data_dir: str | Path | None = None) -> pd.DataFrame:
    """``load_trials(data_dir)``, parsed once per process and data version (a copy each call).

    :func:`reproduce` runs several notebooks in one kernel; they share the parsed
    table instead of re-reading ~1,200 JSON files each. The key is the data dir and
    the sha256 of facetlab's data registry (the files are verified against it), so a
    different data version is parsed afresh.
    """
    from facetlab.datasets.pinned import registry_digest
    from facetlab.records import load_trials

    key = (
        str(Path(data_dir).resolve()) if data_dir is not None else "",
        registry_digest(),
    )
    if key not in _TRIALS:
        _TRIALS[key] = load_trials(data_dir)
    return _TRIALS[key].copy()


@dataclass(frozen=True)
class Outputs:
    """What a reproduction notebook needs: the trials and where its outputs go.

    Create it with :meth:`open` from the notebook's parameters; ``None`` for a
    directory means ``_build/interactive/`` (an interactive run never rewrites the
    committed outputs; :func:`reproduce` passes the committed folders explicitly).
    """

    trials: pd.DataFrame
    figures_dir: Path
    tables_dir: Path
    formats: tuple[str, ...] = ("png", "svg")
    dpi: int = 200
    written: list[Path] = field(default_factory=list)

    @classmethod
    def open(
        cls,
        data_dir: str | Path | None = None,
        figures_dir: str | Path | None = None,
        tables_dir: str | Path | None = None,
        formats: Sequence[str] = ("png", "svg"),
        dpi: int = 200,
        variant: str | None = None,
        **settings: Any,
    ) -> Outputs:
        """Load the trials (``load_trials(data_dir)``) and resolve the output folders.

        ``settings`` are the notebook's analysis parameters (``threshold``,
        ``split_point``, ``representative``). Without explicit folders, outputs go to
        ``_build/interactive/`` at the paper's values and to ``_build/variants/<tag>/``
        away from them; only :func:`reproduce` writes the committed folders. ``variant`` names
        that folder explicitly (for settings :func:`variant_tag` does not know, such
        as a sensitivity sweep's range). ``formats`` may also be one string,
        ``"png,svg"`` (as ``papermill -p formats pdf`` passes it).
        """
        figs, tabs = output_dirs(project_root(), settings, figures_dir, tables_dir, variant)
        return cls(cached_trials(data_dir), figs, tabs, as_formats(formats), int(dpi))

    def table(self, frame: pd.DataFrame, name: str, caption: str | None = None) -> pd.DataFrame:
        """Write ``frame`` as ``<tables_dir>/<name>.csv|.md|.tex``; returns it for display."""
        from facetlab.analysis.tables import write_table

        paths = write_table(frame, name, self.tables_dir, caption=caption)
        self.written.extend([paths.csv, paths.markdown, paths.latex])
        return frame

    def figure(self, fig: Figure, name: str) -> SavedFigure:
        """Save ``fig`` as ``<figures_dir>/<name>.<format>``; returns it for display.

        The notebook shows the saved file itself (no second rendering of the figure).
        """
        from facetlab.figures import save_figure

        paths = save_figure(fig, name, self.figures_dir, self.formats, self.dpi)
        self.written.extend(paths)
        return SavedFigure(fig, tuple(paths))


@dataclass(frozen=True)
class SavedFigure:
    """A figure and the files it was saved to; Jupyter displays the saved PNG (or SVG)."""

    figure: Figure
    paths: tuple[Path, ...]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        by_suffix = {p.suffix: p for p in self.paths}
        bundle = {"text/plain": f"<figure saved to {', '.join(p.name for p in self.paths)}>"}
        if ".png" in by_suffix:
            bundle["image/png"] = base64.b64encode(by_suffix[".png"].read_bytes()).decode("ascii")
        elif ".svg" in by_suffix:
            bundle["image/svg+xml"] = by_suffix[".svg"].read_text(encoding="utf-8")
        return bundle

"""What a study returns (:class:`ValidityResult`) and the files it writes."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from facetlab.figures import save_figure
from facetlab.validity.figure import plot_validity_matrix


@dataclass(frozen=True, eq=False)
class ValidityResult:
    """What :func:`run_validity_study` and :func:`load_study` return."""

    trials: pd.DataFrame
    """One row per trial: verdict, truth and outcome (see :func:`load_study`)."""
    matrix: pd.DataFrame
    """One row per (reasoner, probe) (see :func:`validity_matrix`)."""
    key_cells: pd.DataFrame
    """The issue's four key cells with ``holds`` (see :func:`key_cells`)."""
    threshold: float
    out_dir: Path
    notes: tuple[str, ...] = ()

    def figure(self) -> Figure:
        """The reasoner × probe matrix as an annotated figure."""
        return plot_validity_matrix(self.matrix, threshold=self.threshold)


def write_outputs(
    result: ValidityResult,
    *,
    figures_dir: Path | str | None = "figures",
    tables_dir: Path | str | None = "paper/tables",
    trials_csv: Path | str | None = None,
    formats: Sequence[str] = ("png", "svg"),
    dpi: int = 200,
    key_cells_csv: Path | str | None = None,
) -> list[Path]:
    """Write ``probe_validity.<fmt>``, ``probe_validity.csv`` and (optionally) the trials
    and key-cells CSVs.

    A ``None`` directory skips that output. Returns the paths written.
    """
    written: list[Path] = []
    if figures_dir is not None:
        written += save_figure(result.figure(), "probe_validity", figures_dir, formats, dpi)
    if tables_dir is not None:
        written.append(write_csv(result.matrix, Path(tables_dir) / "probe_validity.csv"))
    if trials_csv is not None:
        written.append(write_csv(result.trials, Path(trials_csv)))
    if key_cells_csv is not None:
        written.append(write_csv(result.key_cells, Path(key_cells_csv)))
    return written


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Every table of the study in one format: 4 significant digits, ``\\n`` line ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, float_format="%.4g", lineterminator="\n")
    return path

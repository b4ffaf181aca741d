"""The reasoner × probe validity matrix as an annotated figure."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from facetlab.analysis.rules import DEFAULT_THRESHOLD
from facetlab.errors import DataError
from facetlab.validity.outcomes import CRAFT, MATRIX_PROBES

VERDICT_COLORS: dict[str, str] = {
    "passes": "#2ecc71",
    "catches": "#1f9e89",
    "false alarms": "#f39c12",
    "misses": "#e74c3c",
    "misses + false alarms": "#8e44ad",
    "no verdict": "#d5d8dc",
}
"""Cell colours: green correct, orange false alarm, red miss, purple both."""


def plot_validity_matrix(matrix: pd.DataFrame, *, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """Reasoners (rows) × probes (columns), coloured by the cell's verdict against the truth.

    Each cell reads: the verdict; the share of trials the probe flags next to
    the share where that failure is real; CRAFT cells also count their verdicts;
    the counts of misses and false alarms.
    """
    need = {"reasoner", "probe", "verdict", "flagged_rate", "truly_used_rate", "n"}
    if missing := need - set(matrix.columns):
        raise DataError(f"matrix lacks column(s) {sorted(missing)} (from validity_matrix)")
    reasoners = list(dict.fromkeys(matrix["reasoner"]))
    probes = [p for p in MATRIX_PROBES if p in set(matrix["probe"])]
    fig = Figure(figsize=(2.3 * len(probes) + 2.6, 0.95 * len(reasoners) + 1.6))
    ax = fig.add_subplot()
    for i, reasoner in enumerate(reasoners):
        for j, probe in enumerate(probes):
            hit = matrix[(matrix["reasoner"] == reasoner) & (matrix["probe"] == probe)]
            if hit.empty:
                continue
            cell = hit.iloc[0]
            ax.add_patch(
                _rect(j, i, VERDICT_COLORS.get(str(cell["verdict"]), VERDICT_COLORS["no verdict"]))
            )
            ax.text(j, i, _annotation(cell), ha="center", va="center", fontsize=7.5)
    ax.set_xlim(-0.5, len(probes) - 0.5)
    ax.set_ylim(len(reasoners) - 0.5, -0.5)
    ax.set_xticks(range(len(probes)), probes)
    ax.set_yticks(range(len(reasoners)), [f"simulated/{r}" for r in reasoners])
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(
        f"Probe verdicts against each reasoner's true weights (threshold {threshold:g} pts)",
        fontsize=10,
        pad=22,
    )
    handles = [Patch(color=c, label=v) for v, c in VERDICT_COLORS.items() if v != "no verdict"]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.subplots_adjust(left=0.28, right=0.98, top=0.86, bottom=0.07)
    return fig


def _rect(x: float, y: float, color: str) -> Rectangle:
    return Rectangle((x - 0.48, y - 0.46), 0.96, 0.92, color=color, alpha=0.85, lw=0)


def _pct(value: Any) -> str:
    return "–" if pd.isna(value) else f"{100 * float(value):.0f}%"


def _annotation(cell: pd.Series[Any]) -> str:
    lines = [
        str(cell["verdict"]),
        f"flagged {_pct(cell['flagged_rate'])} · real {_pct(cell.get('failure_real_rate', cell['truly_used_rate']))}",
    ]
    if str(cell["probe"]) == CRAFT and cell.get("craft_verdicts"):
        lines.append(str(cell["craft_verdicts"]).replace("inconclusive", "unclear"))
    missed, alarms = int(cell.get("missed", 0)), int(cell.get("false_alarm", 0))
    bits = []
    if cell.get("detected", 0) and (missed or alarms):
        bits.append(f"{int(cell['detected'])} detected")
    if missed:
        bits.append(f"{missed} missed")
    if alarms:
        bits.append(f"{alarms} false alarm{'s' if alarms > 1 else ''}")
    if cell.get("unparsed", 0):
        # a CRAFT row without a verdict is untestable (or cites nothing), not a bad reply
        missing = "no verdict" if str(cell["probe"]) == CRAFT else "unparsed"
        bits.append(f"{int(cell['unparsed'])} {missing}")
    lines.append(", ".join(bits) if bits else f"n={int(cell['n'])}")
    gap = cell.get("mean_abs_report_gap", float("nan"))
    if not pd.isna(gap) and float(gap) > 1:
        # a report far from the decision: the reasoner says something it did not do
        lines.append(f"report off by {float(gap):.0f} pts")
    return "\n".join(lines)

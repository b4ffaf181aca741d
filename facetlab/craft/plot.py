"""Plots of CRAFT reports and calibration runs (matplotlib, imported only when called)."""

from collections.abc import Sequence
from typing import Any

from facetlab.craft.report import Report
from facetlab.craft.stats.calibration import VerdictRates

COLORS = {"faithful": "#2a9d8f", "theater": "#e76f51", "inconclusive": "#8d99ae"}


def plot_report(report: Report, ax: Any = None, title: str | None = None) -> Any:
    """Bar chart of baseline, treatment and placebo flip rates per finding; returns the Figure.

    Each finding's treatment bar is coloured by its verdict and annotated with the
    differential and its CI.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(1.8 + 2.2 * max(1, len(report.findings)), 3.2))
    width = 0.26
    for i, f in enumerate(report.findings):
        for offset, rate, color, label in (
            (-width, f.baseline_flip_rate, "#cccccc", "baseline"),
            (0.0, f.treatment_flip_rate, COLORS[f.verdict], "treatment (cited)"),
            (width, f.placebo_flip_rate, "#457b9d", "placebo"),
        ):
            ax.bar(i + offset, rate, width, color=color, label=label if i == 0 else None)
        if f.differential is not None:
            d = f.differential
            ax.annotate(
                f"{f.verdict}\nΔ={d.mean_diff:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}]",
                (i, 1.02),
                ha="center",
                va="bottom",
                fontsize=8,
            )
    ax.set_xticks(range(len(report.findings)))
    ax.set_xticklabels([f.evidence.describe() for f in report.findings], fontsize=8)
    ax.set(
        ylim=(0, 1.45),
        ylabel="decision flip rate",
        title=title or f"CRAFT: overall {report.overall_verdict}",
    )
    ax.legend(fontsize=7, loc="upper left", ncol=3, frameon=False)
    return ax.figure


def plot_power(rows: Sequence[VerdictRates], ax: Any = None) -> Any:
    """P(faithful) against effect size, one line per (method, N); returns the Figure."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    groups: dict[tuple[str, int], list[VerdictRates]] = {}
    for r in rows:
        groups.setdefault((r.method, r.n), []).append(r)
    styles = {"bootstrap": "-", "exact": "--", "sequential": ":"}
    for (method, n), items in sorted(groups.items()):
        items.sort(key=lambda r: r.treatment_rate - r.placebo_rate)
        ax.plot(
            [r.treatment_rate - r.placebo_rate for r in items],
            [r.faithful for r in items],
            styles.get(method, "-"),
            marker="o",
            markersize=3,
            label=f"{method}, N={n}",
        )
    ax.set(
        xlabel="effect: treatment flip rate - placebo flip rate",
        ylabel="P(verdict = faithful)",
        ylim=(0, 1.02),
    )
    ax.legend(fontsize=7)
    return ax.figure

"""The paper's five figures, one function each, every value taken from a frame of
:mod:`facetlab.paper.cells` (itself computed from ``load_trials``).

Each function returns a :class:`matplotlib.figure.Figure` built without pyplot (no
GUI backend, no global figure registry), keeping the published encodings so a
figure can be compared side by side with ``reference/fig*.png`` of the dataset:
model order, open-weight vs closed grouping, the green/yellow/orange/red scale,
the 10% threshold and uniform-1/N reference lines.

>>> from facetlab.records import load_trials                     # doctest: +SKIP
>>> fig = fig1_probe_comparison(cells.fig1_p1_p2(load_trials()))  # doctest: +SKIP
>>> save_figure(fig, "fig1_probe_comparison", "figures")         # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from facetlab.analysis import rules
from facetlab.analysis.stats import wilson
from facetlab.errors import ConfigError
from facetlab.figures import require_table

__all__ = [
    "COLORS",
    "FIGURE_NAMES",
    "INTENTIONAL_DIFFERENCES",
    "SHORT_NAMES",
    "fig1_probe_comparison",
    "fig2_adversarial",
    "fig3_bimodality",
    "fig4_c2_faithfulness",
    "fig5_asymmetry",
]

COLORS = {
    "faithful": "#2ecc71",
    "dissociated": "#e74c3c",
    "partial": "#f39c12",
    "at_threshold": "#f1c40f",
    "wrong": "#922b21",
    "open": "#2ecc71",
    "closed": "#e74c3c",
    "grey": "#7f7f7f",
}
"""The paper's palette: green faithful / open, red dissociated / closed, orange, yellow."""

FIGURE_NAMES = (
    "fig1_probe_comparison",
    "fig2_adversarial_3panel",
    "fig3_bimodality",
    "fig4_c2_faithfulness",
    "fig5_asymmetry",
)
"""File stems, the same as the dataset's ``reference/`` images."""

INTENTIONAL_DIFFERENCES: dict[str, tuple[str, ...]] = {
    "fig1_probe_comparison": (
        "Sans-serif type like every facetlab figure (the published Figure 1 is set in serif).",
        "One legend below both panels, clear of their case labels and counts (published: "
        "under panel (b), over its labels).",
    ),
    "fig2_adversarial_3panel": (
        "Every cell with more than one trial carries its replication n, as §4.3 says the "
        "figure does (the published figure has no n labels).",
        "A legend explains the bar colours; the uniform 1/N line is labelled in every panel "
        "(published: panel c only).",
        "The y axis reaches 60% to leave room for the n labels (published: 50%).",
        "facetlab's own title and caption: the published caption calls GPT-5.4's CF-Cabral "
        "trial the corpus's only wrong outcome, which the data contradict (see Findings).",
    ),
    "fig3_bimodality": (
        "The post-hoc split point (20) is drawn as a dashed line; the modes are labelled "
        "“WADD-like” / “LEX-like” (a reading, not a measurement).",
        "The caption states the counts per wording instead of the published interpretation.",
    ),
    "fig4_c2_faithfulness": (
        "Shorter title; the caption says what a cell shows (mean over the anchor's N "
        "perturbations, the values below it in factor order).",
    ),
    "fig5_asymmetry": (
        "Each label gives the trials behind its point (C2 n, P3 n), so a mean over a single "
        "CF-Barker P3 trial reads as one (published: no n).",
        "The open-weight labels are stacked right of their points, below the threshold line, with "
        "leader lines that do not cross; smaller, translucent markers keep overlapping "
        "points visible.",
        "The x axis ends after the points and labels (the published axis runs to 12%).",
        "No “closed-source cluster” / “all open-weight models” annotations and no caption "
        "“No model is faithful on both axes”: the data place a model there (see Findings).",
    ),
}
"""What each facetlab figure does differently from the published one, on purpose
(the reproduction report lists these under the side-by-side images)."""

SHORT_NAMES = {
    "Claude Sonnet 4.6": "Sonnet 4.6",
    "Claude Opus 4.6": "Opus 4.6",
    "GPT-5.4": "GPT-5.4",
    "DeepSeek v3.2": "DeepSeek v3.2",
    "Mistral Large 3": "Mistral L3",
    "Llama 4 Maverick": "Maverick",
    "Llama 4 Scout": "Scout",
    "Qwen3 Next 80B-A3B": "Qwen3 Next",
}
"""Compact labels used in the heatmap and scatter (Figures 4 and 5)."""

_FROM_CELLS = "; use facetlab.paper.cells"

_WRAPPED = {
    "Claude Sonnet 4.6": "Claude\nSonnet\n4.6",
    "Claude Opus 4.6": "Claude\nOpus\n4.6",
    "DeepSeek v3.2": "DeepSeek\nv3.2",
    "Mistral Large 3": "Mistral\nLarge 3",
    "Llama 4 Maverick": "Llama 4\nMaverick",
    "Llama 4 Scout": "Llama 4\nScout",
    "Qwen3 Next 80B-A3B": "Qwen3\nNext",
}

# Figures 2 and 4 group open-weight models first, in this order, then the closed ones.
_OPEN_FIRST = (
    "DeepSeek v3.2",
    "Mistral Large 3",
    "Qwen3 Next 80B-A3B",
    "Llama 4 Maverick",
    "Llama 4 Scout",
    "Claude Sonnet 4.6",
    "Claude Opus 4.6",
    "GPT-5.4",
)


def _style(**extra: object) -> Any:
    """rcParams shared by every figure while it is built, plus ``extra`` (dots written
    as ``__``); the ones read when saving are set by :func:`save_figure`."""
    return {
        "font.family": "sans-serif",  # one family for every figure
        "font.sans-serif": ["DejaVu Sans"],
        "font.size": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        **{key.replace("__", "."): value for key, value in extra.items()},
    }


def _grouped_models(frame: pd.DataFrame) -> tuple[list[str], int]:
    """The frame's models, open-weight first (figure order), then closed, unknown last;
    and how many are open (the dashed divider sits after them)."""
    access: dict[str, str] = (
        dict(zip(frame["model"], frame["weights_access"], strict=False))
        if "weights_access" in frame
        else {}
    )
    present = list(dict.fromkeys(frame["model"]))
    known = [m for m in _OPEN_FIRST if m in present]
    ordered = known + [m for m in present if m not in known]
    models = sorted(ordered, key=lambda m: (access.get(m) != "open", ordered.index(m)))
    return models, sum(1 for m in models if access.get(m) == "open")


def _short(model: str) -> str:
    """The compact label of ``model`` (:data:`SHORT_NAMES`), else its display name."""
    return SHORT_NAMES.get(model, model)


def _caption(fig: Figure, text: str, y: float = -0.03, wrap: bool = False) -> None:
    """The grey note under a figure (the paper's figures carry one too)."""
    fig.text(0.5, y, text, ha="center", fontsize=9, color="#444444", wrap=wrap)


def _neutralized_note(case: str, frame: pd.DataFrame) -> str:
    """``"F1 neut."``: the neutralized factor of ``case`` as Figure 1 prints it under the case."""
    sub = frame[frame["case"] == case]
    return (
        f"{sub['neutralized_factor'].iloc[0]} neut."
        if "neutralized_factor" in sub.columns and not sub.empty
        else ""
    )


# --------------------------------------------------------------------------- Figure 1


def fig1_probe_comparison(
    matrix: pd.DataFrame, threshold: float = rules.DEFAULT_THRESHOLD
) -> Figure:
    """Figure 1: P1 labels (left) and P2 weights (right), green faithful / red dissociated.

    ``matrix`` is :func:`facetlab.paper.cells.fig1_p1_p2` (computed at ``threshold``).
    """
    require_table(
        matrix,
        ["model", "case", "p1_label", "p1_faithful", "p2_weight", "p2_faithful"],
        "Figure 1",
        hint=_FROM_CELLS,
    )
    models = list(dict.fromkeys(matrix["model"]))
    cases = list(dict.fromkeys(matrix["case"]))
    cmap = ListedColormap([COLORS["dissociated"], COLORS["faithful"]])
    with mpl.rc_context(_style()):
        fig = Figure(figsize=(15, 8), layout="constrained")
        axes = fig.subplots(1, 2)
        panels = (
            (
                "p1_faithful",
                "p1_label",
                '(a) Single-Factor Probe\n"which one factor is most important?"',
            ),
            (
                "p2_faithful",
                "p2_weight",
                '(b) Weighted-Rank Probe\n"assign weights to all N factors, summing to 100"',
            ),
        )
        for ax, (flag, value, title) in zip(axes, panels, strict=True):
            grid = np.zeros((len(models), len(cases)))
            for i, model in enumerate(models):
                for j, case in enumerate(cases):
                    row = matrix[(matrix["model"] == model) & (matrix["case"] == case)]
                    if row.empty:
                        grid[i, j] = np.nan
                        continue
                    ok = bool(row[flag].iloc[0])
                    grid[i, j] = 1.0 if ok else 0.0
                    shown = row[value].iloc[0]
                    text = str(shown) if value == "p1_label" else f"{float(shown):g}%"
                    ax.text(
                        j,
                        i,
                        text,
                        ha="center",
                        va="center",
                        fontsize=13,
                        fontweight="bold",
                        color="#1a1a1a" if ok else "white",
                    )
            ax.imshow(grid, cmap=cmap, vmin=0, vmax=1, aspect="auto")
            ax.set_yticks(
                range(len(models)),
                [_short(m) if m.startswith("Qwen") else m for m in models],
            )
            ax.set_xticks([])
            for j, case in enumerate(cases):
                sub = matrix[matrix["case"] == case]
                share = float(sub[flag].astype(bool).mean())
                tone = (
                    COLORS["faithful"]
                    if share > 0.75
                    else COLORS["dissociated"]
                    if share < 0.25
                    else COLORS["partial"]
                )
                under = ax.get_xaxis_transform()
                ax.text(
                    j, -0.06, case, transform=under, ha="center", fontweight="bold", fontsize=12
                )
                ax.text(
                    j,
                    -0.12,
                    _neutralized_note(case, matrix),
                    transform=under,
                    ha="center",
                    color="#444444",
                )
                ax.text(
                    j,
                    -0.22,
                    f"faithful: {int(sub[flag].astype(bool).sum())}/{len(sub)}",
                    transform=under,
                    ha="center",
                    fontweight="bold",
                    color=tone,
                    fontsize=12,
                )
            ax.tick_params(length=0)
            ax.spines[:].set_visible(False)
            ax.set_title(title, fontweight="bold", fontsize=13)
        # one legend for the figure, below both panels' case labels (never over them)
        fig.legend(
            handles=[
                Patch(
                    color=COLORS["faithful"],
                    label=f"Faithful  (non-neutralized factor / weight ≤ {threshold:g}%)",
                ),
                Patch(
                    color=COLORS["dissociated"],
                    label=f"Dissociation  (neutralized factor / weight > {threshold:g}%)",
                ),
            ],
            loc="outside lower center",
            ncol=2,
            frameon=False,
            fontsize=11,
        )
    return fig


# --------------------------------------------------------------------------- Figure 2


def _bar_color(weight: float, wrong: bool, threshold: float, dissociation: float) -> str:
    """Figure 2's bar colour: dark red wrong, yellow faithful, orange partial, red dissociated."""
    if wrong:
        return COLORS["wrong"]
    if weight <= threshold:
        return COLORS["at_threshold"]
    if weight < dissociation:
        return COLORS["partial"]
    return COLORS["dissociated"]


def fig2_adversarial(
    bars: pd.DataFrame,
    n_factors: dict[str, int] | None = None,
    threshold: float = rules.DEFAULT_THRESHOLD,
    representative: str | None = None,
    dissociation: float = rules.DEFAULT_DISSOCIATION,
) -> Figure:
    """Figure 2: P3 weight on the neutralized factor, three panels (one per case).

    ``bars`` is :func:`facetlab.paper.cells.fig2_p3`; its ``representative``
    column ("first" | "last" | "mean") says what a bar shows and labels the axis
    (passing ``representative`` is only a check). Open-weight models sit left of
    the dashed divider. Bars at 0 are drawn as a green dot and "0%"; ``✗`` marks a wrong
    outcome (for "mean": any wrong trial in the cell); ``n=`` above every bar
    gives the cell's number of trials. ``n_factors`` (case → N) adds the uniform 1/N line.
    """
    require_table(bars, ["model", "case", "weight", "wrong", "n"], "Figure 2", hint=_FROM_CELLS)
    shown = sorted({str(r) for r in bars["representative"]}) if "representative" in bars else []
    if representative is None:
        representative = shown[0] if len(shown) == 1 else "first"
    if representative not in ("first", "last", "mean"):
        raise ConfigError(
            f"representative must be 'first', 'last' or 'mean', got {representative!r}"
        )
    if shown and shown != [representative]:
        raise ConfigError(f"bars were computed for representative {shown}, not {representative!r}")
    models, n_open = _grouped_models(bars)
    cases = list(dict.fromkeys(bars["case"]))
    top = max(50.0, float(np.ceil((bars["weight"].max() + 8) / 10.0) * 10))
    what = {"first": "first trial", "last": "last trial", "mean": "mean of trials"}[representative]
    with mpl.rc_context(_style()):
        fig = Figure(figsize=(16, 6.2), layout="constrained")
        axes = np.atleast_1d(fig.subplots(1, len(cases), sharey=True))
        for k, (ax, case) in enumerate(zip(axes, cases, strict=True)):
            sub = bars[bars["case"] == case].set_index("model")
            for i, model in enumerate(models):
                if model not in sub.index:
                    continue
                w = float(sub.at[model, "weight"])
                wrong = bool(sub.at[model, "wrong"])
                n = int(sub.at[model, "n"])
                label = f"{w:.0f}%" if w.is_integer() else f"{w:.1f}%"
                if w == 0:  # no bar: a dot marks the 0, the label says it
                    ax.plot(i, 0, marker="o", markersize=6, color=COLORS["faithful"], clip_on=False)
                    ax.text(
                        i,
                        1.2,
                        label,
                        ha="center",
                        va="bottom",
                        color=COLORS["faithful"],
                        fontweight="bold",
                    )
                    y_text = 1.2 + 3.2
                else:
                    ax.bar(i, w, width=0.7, color=_bar_color(w, wrong, threshold, dissociation))
                    style = {"color": COLORS["wrong"], "fontweight": "bold"} if wrong else {}
                    if w >= dissociation and not wrong:
                        style = {"fontweight": "bold"}
                    text = label + ("\n✗" if wrong else "")
                    ax.text(i, w + 1.0, text, ha="center", va="bottom", fontsize=11, **style)
                    y_text = w + (7.5 if wrong else 4.2)
                if n > 1:  # the paper's rule: "annotated with replication n where greater than 1"
                    ax.text(
                        i,
                        y_text,
                        f"n={n}",
                        ha="center",
                        va="bottom",
                        fontsize=8,
                        color=COLORS["grey"],
                    )
            ax.axhline(threshold, color="#bbbbbb", linestyle=":", linewidth=1)
            if n_factors and case in n_factors:
                uniform = 100.0 / n_factors[case]
                ax.axhline(uniform, color="#bbbbbb", linestyle="--", linewidth=0.9)
                ax.text(  # every panel (N differs by case), in a margin right of the bars
                    len(models) + 0.5,
                    uniform + 0.4,
                    f"uniform\n1/{n_factors[case]}",
                    ha="right",
                    va="bottom",
                    fontsize=7,
                    style="italic",
                    color=COLORS["grey"],
                )
            if 0 < n_open < len(models):
                ax.axvline(n_open - 0.5, color="#999999", linestyle="--", linewidth=1)
            neut = (
                f"\n({sub['neutralized_factor'].iloc[0]} neutralized)"
                if "neutralized_factor" in sub.columns and len(sub)
                else ""
            )
            ax.set_title(f"({chr(97 + k)}) {case} adversarial{neut}", fontweight="bold")
            ax.set_xticks(range(len(models)), [_WRAPPED.get(m, m) for m in models], fontsize=8)
            ax.set(xlim=(-0.6, len(models) + 0.55), ylim=(0, top))
            ax.yaxis.set_major_formatter(mpl.ticker.PercentFormatter(decimals=0))
        axes[0].set_ylabel(
            f"Weight on neutralized factor ({what})\n(target: 0%; ✗ = wrong outcome"
            + (" in the cell)" if representative == "mean" else ")")
        )
        fig.suptitle(
            "Adversarial weighted-rank probe (P3) across the three counterfactual cases",
            fontweight="bold",
        )
        axes[min(1, len(axes) - 1)].legend(
            handles=[
                Patch(color=COLORS["at_threshold"], label=f"≤ {threshold:g}% (faithful)"),
                Patch(color=COLORS["partial"], label=f"{threshold:g}–{dissociation:g}% (partial)"),
                Patch(color=COLORS["dissociated"], label=f"≥ {dissociation:g}% (dissociated)"),
                Patch(color=COLORS["wrong"], label="wrong outcome (✗)"),
            ],
            title="bar colour",
            loc="upper left",
            fontsize=8,
            title_fontsize=8,
            frameon=False,
        )
        _caption(
            fig,
            "Open-weight models left of the dashed line, closed-source right. Dotted line: "
            f"{threshold:g}% faithfulness threshold; thin dashed line: uniform 1/N. "
            f"Bars show each cell's {what}; a green dot and 0% = no weight (no bar); "
            "n = trials in the cell, shown where n > 1.",
            y=-0.02,
        )
    return fig


# --------------------------------------------------------------------------- Figure 3


def fig3_bimodality(
    trials: pd.DataFrame,
    threshold: float = rules.DEFAULT_THRESHOLD,
    split_point: float = rules.DEFAULT_SPLIT_POINT,
    bin_width: float = 5.0,
    model: str = "GPT-5.4",
    case: str = "CF-Cabral",
    factor: str = "F1",
) -> Figure:
    """Figure 3: histogram of the neutralized-factor weight, correct (green) vs wrong (red).

    ``trials`` is :func:`facetlab.paper.cells.fig3_bimodality` (columns
    ``weight``, ``wrong``, ``mode``). Bins are ``bin_width`` wide from 0; the
    threshold is a dotted line, the split point a dashed one; each mode is labelled
    with its n. The caption's Wilson interval is computed here.
    """
    require_table(trials, ["weight", "wrong", "mode"], "Figure 3", hint=_FROM_CELLS)
    weights = trials["weight"].astype(float).to_numpy()
    wrong = trials["wrong"].astype(bool).to_numpy()
    top = max(float(np.ceil(weights.max() / bin_width) * bin_width), split_point + bin_width)
    edges = np.arange(0.0, top + bin_width / 2, bin_width)
    good, _ = np.histogram(weights[~wrong], bins=edges)
    bad, _ = np.histogram(weights[wrong], bins=edges)
    wi = wilson(int(wrong.sum()), len(wrong))
    low = trials[trials["mode"] == "low"]
    high = trials[trials["mode"] == "high"]
    with mpl.rc_context(_style()):
        fig = Figure(figsize=(12, 7), layout="constrained")
        ax = fig.subplots()
        ax.bar(
            edges[:-1],
            good,
            width=bin_width,
            align="edge",
            color=COLORS["faithful"],
            edgecolor="white",
            label="Correct outcome (No)",
        )
        ax.bar(
            edges[:-1],
            bad,
            width=bin_width,
            align="edge",
            bottom=good,
            color=COLORS["dissociated"],
            edgecolor="white",
            label="Wrong outcome (Yes)",
        )
        peak = float(max((good + bad).max(), 1))
        ax.axvline(threshold, color="#bbbbbb", linestyle=":", linewidth=1.2)
        ax.text(
            threshold + 0.3,
            peak * 0.97,
            f"faithfulness\nthreshold ({threshold:g}%)",
            fontsize=9,
            style="italic",
            color="#666666",
            va="top",
        )
        ax.axvline(split_point, color="#999999", linestyle="--", linewidth=0.9)
        ax.text(
            split_point + 0.3,
            peak * 0.6,
            f"split at {split_point:g}\n(post hoc)",
            fontsize=8,
            color="#666666",
        )
        for group, height, color, face, name in (
            (low, 0.85, "#1e7b34", "#d5f0dc", "low mode\n(WADD-like)"),
            (high, 0.62, "#7b1e1e", "#f7d6d9", "high mode\n(LEX-like)"),
        ):
            if group.empty:
                continue
            x = float(group["weight"].astype(float).mean())
            ax.text(
                x,
                peak * height,
                f"{name}\nn={len(group)}",
                ha="center",
                va="center",
                color=color,
                bbox={"boxstyle": "round", "facecolor": face, "edgecolor": "none"},
            )
        ax.set(
            xticks=edges,
            xlim=(-0.6 * bin_width, top + bin_width / 2),
            ylim=(0, peak * 1.05),  # headroom so the tallest bar does not touch the frame
            xlabel=f"Weight assigned to neutralized factor {factor}",
            ylabel="Number of trials",
        )
        ax.yaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
        ax.legend(loc="upper right")
        ax.set_title(
            f"{model} on {case} adversarial — distribution of $w_{{{factor}}}$ (n={len(trials)})",
            fontweight="bold",
        )
        per = (
            ", ".join(
                f"{iid}: {int(g['wrong'].sum())}/{len(g)} wrong"
                for iid, g in trials.groupby("instance_id", sort=True)
            )
            if "instance_id" in trials.columns
            else ""
        )
        _caption(
            fig,
            f"Wrong-outcome rate {wi.successes}/{wi.n} = {wi.proportion:.0%} "
            f"(Wilson 95% CI [{wi.low:.0%}, {wi.high:.0%}]); {per}. "
            f"Low mode: w < {split_point:g}, {int(low['wrong'].sum())}/{len(low)} wrong; "
            f"high mode: {int(high['wrong'].sum())}/{len(high)} wrong.",
            wrap=True,
        )
    return fig


# --------------------------------------------------------------------------- Figure 4


def fig4_c2_faithfulness(c2: pd.DataFrame, vmax: float = 20.0) -> Figure:
    """Figure 4: heatmap of mean C2 residual per (model, anchor), residual lists below.

    ``c2`` is :func:`facetlab.paper.cells.fig4_c2`. Open-weight rows on top,
    closed below a dashed divider; colour scale RdYlGn reversed from 0 to ``vmax``.
    """
    require_table(
        c2,
        ["model", "anchor", "mean_residual", "residuals", "case", "n_factors"],
        "Figure 4",
        hint=_FROM_CELLS,
    )
    models, n_open = _grouped_models(c2)
    anchors = list(dict.fromkeys(c2["anchor"]))
    grid = np.full((len(models), len(anchors)), np.nan)
    cmap = mpl.colormaps["RdYlGn_r"]
    with mpl.rc_context(_style(axes__spines__top=True, axes__spines__right=True)):
        fig = Figure(figsize=(11, 7.5), layout="constrained")
        ax = fig.subplots()
        for i, model in enumerate(models):
            for j, anchor in enumerate(anchors):
                row = c2[(c2["model"] == model) & (c2["anchor"] == anchor)]
                if row.empty:
                    continue
                value = float(row["mean_residual"].iloc[0])
                grid[i, j] = value
                # text that reads on its cell: white on dark colours, dark on light ones
                red, green, blue, _ = cmap(min(value / vmax, 1.0))
                color = "white" if 0.299 * red + 0.587 * green + 0.114 * blue < 0.5 else "#1a1a1a"
                ax.text(
                    j,
                    i - 0.12,
                    f"{value:.1f}",
                    ha="center",
                    va="center",
                    fontsize=14,
                    fontweight="bold",
                    color=color,
                )
                ax.text(
                    j,
                    i + 0.22,
                    f"({row['residuals'].iloc[0]})",
                    ha="center",
                    va="center",
                    fontsize=7.5,
                    color=color,
                )
        image = ax.imshow(grid, cmap=cmap, vmin=0, vmax=vmax, aspect="auto")
        ax.set_xticks(np.arange(len(anchors) + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(len(models) + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=2)
        ax.tick_params(which="both", length=0)
        firsts = [c2[c2["anchor"] == anchor].iloc[0] for anchor in anchors]
        names = [
            f"{str(row['case']).removeprefix('CF-')} ({int(row['n_factors'])} factors)"
            for row in firsts
        ]
        ax.set_xticks(range(len(anchors)), names, fontsize=11)
        ax.set_yticks(range(len(models)), [_short(m) for m in models], fontsize=11)
        if 0 < n_open < len(models):
            ax.axhline(n_open - 0.5, color="#555555", linestyle="--", linewidth=1.8)
        bar = fig.colorbar(image, ax=ax, fraction=0.05, pad=0.03)
        bar.set_label("Mean residual weight on perturbed factor (lower = more faithful)")
        ax.set_title(
            "C2 ablation — does the model zero out a perturbed factor?",
            fontweight="bold",
            fontsize=13,
        )
        _caption(
            fig,
            "Cell: mean weight on the perturbed factor over the anchor's N perturbations (values below, factor "
            "order). Dashed line separates open-weight (top) from closed-source (bottom).",
        )
    return fig


# --------------------------------------------------------------------------- Figure 5


def fig5_asymmetry(
    points: pd.DataFrame,
    threshold: float = rules.DEFAULT_THRESHOLD,
    c2_reference: float = 2.0,
) -> Figure:
    """Figure 5: each model at (mean C2 residual, mean P3 weight on CF-Barker).

    ``points`` is :func:`facetlab.paper.cells.fig5_asymmetry`. Open-weight models
    green, closed red; dotted reference lines at ``threshold`` (y) and
    ``c2_reference`` (x, the paper's 2% line). Each label gives the trials behind the
    point (``c2_n`` / ``p3_n`` when the frame has them): a mean over one trial reads as such.
    """
    require_table(
        points,
        ["model", "c2_mean_residual", "p3_barker_mean", "weights_access"],
        "Figure 5",
        hint=_FROM_CELLS,
    )
    with mpl.rc_context(_style()):
        fig = Figure(figsize=(10, 7.5), layout="constrained")
        ax = fig.subplots()
        c2_max = float(points["c2_mean_residual"].max())
        # the x range ends just past the points plus the label column (no empty half)
        xmax = max(c2_reference * 2.0, c2_max + 3.6)
        ymax = max(30.0, float(points["p3_barker_mean"].max()) + 2)
        ax.grid(True, color="#eeeeee")
        ax.axhline(threshold, color="#bbbbbb", linestyle=":", linewidth=1)
        ax.axvline(c2_reference, color="#bbbbbb", linestyle=":", linewidth=1)
        for group, face, edge, name in (
            ("open", COLORS["open"], "#1e7b34", "Open-weight"),
            ("closed", COLORS["closed"], "#7b1e1e", "Closed-source"),
        ):
            sub = points[points["weights_access"] == group]
            ax.scatter(
                sub["c2_mean_residual"],
                sub["p3_barker_mean"],
                s=200,
                c=face,
                edgecolors=edge,
                linewidths=1.8,
                alpha=0.75,  # overlapping markers stay visible
                label=name,
                zorder=3,
            )
        # Labels: models on the floor (y near 0) stacked in a column right of the points,
        # between the floor and the threshold line; the leftmost point gets the top label and
        # each leader line leaves its label's left end, so lines neither cross nor run
        # through another label. Other models are labelled beside their point.
        stacked = points[points["p3_barker_mean"] <= 0.05 * ymax].sort_values(
            "c2_mean_residual", ascending=True
        )

        def label(row: pd.Series) -> str:
            name = _short(str(row["model"]))
            if "c2_n" in row.index and "p3_n" in row.index:
                name += f"  (C2 n={int(row['c2_n'])}, P3 n={int(row['p3_n'])})"
            return name

        def where(frame: pd.DataFrame) -> list[tuple[str, float, float]]:
            return [
                (label(row), float(row["c2_mean_residual"]), float(row["p3_barker_mean"]))
                for _, row in frame.iterrows()
            ]

        top, bottom = threshold * 0.8, threshold * 0.18
        step = (top - bottom) / max(1, len(stacked) - 1)
        for k, (text, x, y) in enumerate(where(stacked)):
            ax.annotate(
                text,
                (x, y),
                xytext=(c2_max + 0.5, top - k * step),
                va="center",
                fontsize=11,
                arrowprops={
                    "arrowstyle": "-",
                    "color": "#999999",
                    "linewidth": 0.8,
                    "shrinkA": 2,
                    "shrinkB": 7,
                    # from the label's left end: a line from its middle ran through the
                    # labels below it
                    "relpos": (0.0, 0.5),
                },
            )
        for text, x, y in where(points.drop(stacked.index)):
            ax.annotate(
                text,
                (x, y),
                xytext=(12, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize=11,
            )
        ax.text(
            0.1,
            threshold * 0.85,
            "ideal:\nfaithful on both",
            fontsize=10,
            style="italic",
            color=COLORS["grey"],
            va="top",
        )
        ax.text(
            xmax,
            ymax * 0.9,
            "worst:\nunfaithful on both",
            fontsize=10,
            style="italic",
            color=COLORS["grey"],
            ha="right",
        )
        ax.set(xlim=(-0.5, xmax + 0.3), ylim=(-1.5, ymax + 1.5))
        ax.set_xlabel(
            "Mean C2 residual weight on perturbed factors (%)\nlower = more surgical attribution updating",
            fontsize=12,
        )
        ax.set_ylabel(
            "Mean $w_{F3}$ on CF-Barker adversarial (%)\nlower = more cue-robust", fontsize=12
        )
        ax.set_title("The asymmetric faithfulness profile", fontweight="bold", fontsize=15)
        ax.legend(
            loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=12, markerscale=0.7
        )
    return fig


# --------------------------------------------------------------------------- saving

"""The study's figures: one function per figure, a study table in, a matplotlib Figure out.

Every function works on whatever models and instances the table holds (the tables of
:mod:`facetlab.analysis.study`) and draws on a fresh :class:`~matplotlib.figure.Figure`
(no pyplot state), so notebooks, ``facetlab report`` and tests share them. Names and ids
from the data are drawn literally (:func:`facetlab.figures.literal_text`): a ``$`` in a
model name never becomes math text.

>>> import pandas as pd
>>> t = pd.DataFrame({"model": ["m"], "probe": ["P3"], "accuracy": [0.5], "n": [2]})
>>> outcome_accuracy(t).axes[0].get_xlabel()
'accuracy'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from facetlab.analysis.rules import DEFAULT_THRESHOLD
from facetlab.analysis.select import select_trials
from facetlab.errors import DataError
from facetlab.figures import literal_columns, literal_text, require_table

__all__ = [
    "asymmetry",
    "c2_heatmap",
    "outcome_accuracy",
    "p1_vs_p2",
    "p3_intervals",
    "weight_distributions",
]


def _reference(ax: Axes, *, x: float | None = None, y: float | None = None) -> None:
    """A dotted reference line (threshold, 50% share)."""
    if x is not None:
        ax.axvline(x, color="#888888", linestyle=":", linewidth=1)
    if y is not None:
        ax.axhline(y, color="#888888", linestyle=":", linewidth=1)


def _size(n_rows: int, per_row: float = 0.45, minimum: float = 3.0) -> tuple[float, float]:
    return (8.0, max(minimum, 1.2 + per_row * n_rows))


def outcome_accuracy(outcomes: pd.DataFrame) -> Figure:
    """Accuracy per model and probe (bars), from the ``outcomes`` table."""
    require_table(outcomes, ["model", "probe", "accuracy"], "outcome accuracy")
    outcomes = literal_columns(outcomes, "model", "probe")
    fig = Figure(figsize=_size(outcomes["model"].nunique() * 2), layout="constrained")
    ax = fig.subplots()
    sns.barplot(data=outcomes, y="model", x="accuracy", hue="probe", orient="h", ax=ax)
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy")
    ax.set_ylabel("")
    ax.set_title("Answers matching the ground truth")
    return fig


def p1_vs_p2(p1_p2: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """Per (model, counterfactual): share of P1 trials naming the neutralized factor (x)
    against P2's mean weight on it (y). Bottom right is the contradiction: P1 names the
    factor as decisive, P2 gives it (almost) no weight."""
    require_table(
        p1_p2, ["model", "instance_id", "p1_names_neutralized", "p2_mean_weight"], "P1 vs P2"
    )
    both = p1_p2.dropna(subset=["p1_names_neutralized", "p2_mean_weight"])
    if both.empty:
        raise DataError("P1 vs P2: no counterfactual has both P1 and P2 trials")
    both = literal_columns(both, "model", "instance_id")
    fig = Figure(figsize=(8, 5.5), layout="constrained")
    ax = fig.subplots()
    # Concentric rings, one size per model: models at the same point stay visible.
    models = list(dict.fromkeys(both["model"]))
    colors = sns.color_palette(n_colors=len(models))
    markers = ["o", "s", "D", "^", "v", "P", "X"]
    instances = list(dict.fromkeys(both["instance_id"]))
    for i, model in enumerate(models):
        rows = both[both["model"] == model]
        for j, instance in enumerate(instances):
            cell = rows[rows["instance_id"] == instance]
            if cell.empty:
                continue
            ax.scatter(
                cell["p1_names_neutralized"],
                cell["p2_mean_weight"],
                s=90 + 110 * (len(models) - 1 - i),
                marker=markers[j % len(markers)],
                facecolors="none",
                edgecolors=[colors[i]],
                linewidths=2,
                label=model if j == 0 else None,
            )
    _reference(ax, y=threshold)
    _reference(ax, x=0.5)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(bottom=-2, top=max(100.0, float(both["p2_mean_weight"].max()) + 5))
    ax.set_xlabel("P1: share of trials naming the neutralized factor")
    ax.set_ylabel("P2: mean weight on the neutralized factor")
    shapes = ", ".join(f"{markers[j % len(markers)]} {i}" for j, i in enumerate(instances))
    ax.set_title(f"P1 vs P2 per counterfactual (threshold {threshold:g}; {shapes})", fontsize=10)
    ax.legend(loc="upper left", fontsize="small", frameon=False, title="model")
    return fig


def p3_intervals(p3: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """P3 cells: mean weight on the neutralized factor (left) and the share of trials
    above ``threshold`` with its Wilson 95% interval (right)."""
    cols = ["model", "instance_id", "mean_weight", "n", "n_above_threshold"]
    require_table(p3, [*cols, "wilson_low", "wilson_high"], "P3")
    labels = [
        literal_text(f"{m} · {i} (n={n})")
        for m, i, n in zip(p3["model"], p3["instance_id"], p3["n"], strict=True)
    ]
    y = np.arange(len(p3))
    fig = Figure(figsize=(11, _size(len(p3))[1]), layout="constrained")
    left, right = fig.subplots(1, 2, sharey=True)
    left.barh(y, p3["mean_weight"], color="#4c72b0")
    _reference(left, x=threshold)
    left.set_yticks(y, labels)
    left.invert_yaxis()
    left.set_xlabel("mean weight on the neutralized factor")
    share = p3["n_above_threshold"] / p3["n"]
    err = np.vstack([share - p3["wilson_low"], p3["wilson_high"] - share]).clip(min=0)
    right.errorbar(share, y, xerr=err, fmt="o", color="#c44e52", capsize=4)
    right.set_xlim(-0.05, 1.05)
    right.set_xlabel(f"share of trials above {threshold:g} (Wilson 95%)")
    fig.suptitle("P3 on the cue-free rewrites")
    return fig


def c2_heatmap(c2: pd.DataFrame) -> Figure:
    """Mean C2 residual weight: models (rows) by base instance and rewritten factor (columns)."""
    require_table(c2, ["model", "base_instance_id", "factor", "mean_residual"], "C2")
    c2 = literal_columns(c2, "model", "base_instance_id", "factor")
    bases = c2["base_instance_id"].astype(str)
    one_base = bases.nunique() == 1
    frame = c2.assign(column=c2["factor"].astype(str) if one_base else bases + " " + c2["factor"])
    order = list(dict.fromkeys(frame["column"]))
    grid = frame.pivot_table(index="model", columns="column", values="mean_residual", sort=False)
    grid = grid.reindex(columns=order)
    fig = Figure(
        figsize=(max(6.0, 0.8 * len(order) + 3), max(2.5, 0.6 * len(grid) + 1.5)),
        layout="constrained",
    )
    ax = fig.subplots()
    sns.heatmap(
        grid,
        annot=True,
        fmt=".1f",
        cmap="rocket_r",
        vmin=0,
        ax=ax,
        cbar_kws={"label": "mean residual weight"},
    )
    ax.set_xlabel(
        f"rewritten factor of {bases.iloc[0]}" if one_base else "base instance and rewritten factor"
    )
    ax.tick_params(axis="x", labelrotation=0 if one_base else 45)
    ax.set_ylabel("")
    ax.set_title("C2: weight left after a neutral rewrite (0 is faithful)")
    return fig


def asymmetry(p3: pd.DataFrame, c2: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """Each model at (mean C2 residual, mean P3 weight): does a model that drops a
    neutralized factor when asked (C2) also drop it on a cue-free rewrite (P3)?"""
    require_table(p3, ["model", "mean_weight", "n"], "asymmetry (P3)")
    require_table(c2, ["model", "mean_residual", "n"], "asymmetry (C2)")
    x = _by_model(c2, "mean_residual")
    y = _by_model(p3, "mean_weight")
    points = pd.DataFrame({"c2": x, "p3": y}).dropna()
    if points.empty:
        raise DataError(
            f"asymmetry: no model has both P3 and C2 trials "
            f"(P3: {sorted(y.index)}, C2: {sorted(x.index)})"
        )
    fig = Figure(figsize=(7.5, 5.5), layout="constrained")
    ax = fig.subplots()
    ax.scatter(points["c2"], points["p3"], s=160, color="#4c72b0", zorder=3)
    # Models at the same point share one label (one per line), not labels printed over each other.
    shared = points.round(6).reset_index(names="model").groupby(["c2", "p3"], sort=False)["model"]
    for (cx, cy), models_here in shared:
        ax.annotate(
            "\n".join(map(literal_text, models_here)),
            (cx, cy),
            xytext=(8, 4),
            textcoords="offset points",
        )
    _reference(ax, y=threshold)
    _reference(ax, x=threshold)
    top = max(30.0, float(points[["c2", "p3"]].max().max()) * 1.2)
    ax.set_xlim(-1, top)
    ax.set_ylim(-1, top)
    ax.set_xlabel("C2: mean residual weight on rewritten factors")
    ax.set_ylabel("P3: mean weight on the neutralized factor")
    ax.set_title("Asymmetry: dropping a factor when told (C2) vs when not told (P3)")
    return fig


def _by_model(table: pd.DataFrame, column: str) -> pd.Series:
    """Mean of ``column`` per model over its cells, each weighted by its trial count."""
    n = table["n"].astype(float)
    totals = (table[column].astype(float) * n).groupby(table["model"]).sum()
    return totals / n.groupby(table["model"]).sum()


POINTS_DRAWN_MAX = 10_000
"""Above this many trials :func:`weight_distributions` draws each cell's histogram
instead of one point per trial: a million points took 32 s and a 132 MB SVG, and no
eye tells 10,000 overlapping points apart anyway."""


def weight_distributions(
    trials: pd.DataFrame, models: list[str] | None = None, *, max_points: int = POINTS_DRAWN_MAX
) -> Figure:
    """Weights on the factor of interest per trial, for the (model, probe) cells with n > 1.

    P2 and P3 weigh the neutralized factor, C2 the rewritten one; a box per cell over
    its trials, so a bimodal cell shows as two clusters: one point per trial up to
    ``max_points`` trials, beyond that each cell's histogram (100 bins over the weights'
    range, scaled to the cell's own peak), which costs the same for a million trials.
    """
    frame = select_trials(trials, probes=None, models=models)
    frame = frame[frame["probe"].isin(DISTRIBUTION_PROBES) & frame["foi_weight"].notna()]
    sizes = frame.groupby(["model", "probe", "instance_id"])["foi_weight"].transform("size")
    frame = frame[sizes > 1]
    if frame.empty:
        raise DataError("no cell has more than one trial (repeats = 1): distributions need n > 1")
    fig = Figure(figsize=(9, _size(frame["model"].nunique() * 2)[1]), layout="constrained")
    ax = fig.subplots()
    if len(frame) > max_points:
        _cell_histograms(ax, frame)
        ax.set_xlabel("weight on the factor of interest (per trial)")
        ax.set_ylabel("")
        ax.set_title(
            f"Distributions where a cell has n > 1 ({len(frame):,} trials: "
            "each cell's histogram, box = quartiles)"
        )
        return fig
    data = literal_columns(frame, "model", "probe").assign(
        foi_weight=frame["foi_weight"].astype(float)
    )
    by_probe = _probe_colors(frame)
    sns.boxplot(
        data=data,
        x="foi_weight",
        y="model",
        hue="probe",
        hue_order=list(by_probe),
        palette=by_probe,
        orient="h",
        fliersize=0,
        ax=ax,
    )
    sns.stripplot(
        data=data,
        x="foi_weight",
        y="model",
        hue="probe",
        hue_order=list(by_probe),
        orient="h",
        dodge=True,
        alpha=0.6,
        size=4,
        legend=False,
        palette="dark:#333333",
        ax=ax,
    )
    ax.set_xlabel("weight on the factor of interest (per trial)")
    ax.set_ylabel("")
    ax.set_title("Distributions where a cell has n > 1")
    # beside the axes, as the histogram version has it: inside, it covered the boxes
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title="probe")
    return fig


DISTRIBUTION_PROBES = ("P2", "P3", "C2")
"""The probes of the distributions figure, in their order and with a fixed colour each
(the same in the points and the histogram versions, whichever probes a sweep has)."""


def _probe_colors(frame: pd.DataFrame) -> dict[str, Any]:
    """The probes ``frame`` has, in figure order, each with its fixed colour."""
    palette = sns.color_palette(n_colors=len(DISTRIBUTION_PROBES))
    present = set(frame["probe"])
    return {p: palette[i] for i, p in enumerate(DISTRIBUTION_PROBES) if p in present}


def _cell_histograms(ax: Axes, frame: pd.DataFrame) -> None:
    """Per (model, probe) cell: its histogram as a shaded band (a stepped violin) and
    its box, laid out as the point version lays them (models top to bottom in order of
    appearance, the probes P2, P3, C2 side by side within a model, one colour each)."""
    from matplotlib.cbook import boxplot_stats
    from matplotlib.patches import Patch

    models = list(pd.unique(frame["model"]))
    by_probe = _probe_colors(frame)
    probes, colors = list(by_probe), list(by_probe.values())
    weights = frame["foi_weight"].to_numpy(dtype=float)
    low, high = float(weights.min()), float(weights.max())
    # bins one weight point wide (at most 100 over the range), centred on whole weights,
    # with an empty bin at each end so the outline closes (one value is one bar)
    width = max(1.0, (high - low) / 100)
    edges = low + width * (np.arange(-1, int(np.ceil((high - low) / width)) + 3) - 0.5)
    centres = (edges[:-1] + edges[1:]) / 2
    band = 0.8 / len(probes)  # each probe's share of a model's row
    cells = pd.DataFrame(
        {
            "m": pd.Categorical(frame["model"], categories=models).codes,
            "p": pd.Categorical(frame["probe"], categories=probes).codes,
        }
    )
    stats: list[dict[str, Any]] = []
    positions: list[float] = []
    groups: dict[Any, Any] = cells.groupby(["m", "p"], sort=True).indices
    for (m, p), rows in sorted(groups.items()):
        values = weights[rows]
        y = m + (p - (len(probes) - 1) / 2) * band
        counts, _ = np.histogram(values, bins=edges)
        half = 0.46 * band * counts / max(1, counts.max())
        ax.fill_between(
            centres, y - half, y + half, step="mid", color=colors[p], alpha=0.55, linewidth=0
        )
        stats.append(boxplot_stats(values, whis=1.5)[0])
        positions.append(y)
    ax.bxp(
        stats,
        positions=positions,
        widths=band * 0.3,
        orientation="horizontal",
        showfliers=False,
        patch_artist=True,
        manage_ticks=False,
        boxprops={"facecolor": "none", "edgecolor": "#333333"},
        medianprops={"color": "#333333"},
        whiskerprops={"color": "#333333"},
        capprops={"color": "#333333"},
    )
    ax.set_yticks(range(len(models)), [literal_text(m) for m in models])
    ax.set_ylim(len(models) - 0.5, -0.5)  # the first model on top, as seaborn draws it
    ax.set_xlim(edges[0], edges[-1])
    ax.legend(
        handles=[
            Patch(facecolor=colors[i], alpha=0.55, label=literal_text(p))
            for i, p in enumerate(probes)
        ],
        title="probe",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )

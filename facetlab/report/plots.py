"""The study's figures: one function per figure, a study table in, a matplotlib Figure out.

Every function works on whatever models and instances the table holds (the tables of
:mod:`facetlab.analysis.study`) and draws on a fresh :class:`~matplotlib.figure.Figure`
(no pyplot state), so notebooks, ``facetlab report`` and tests share them. Names and ids
from the data are drawn literally (:func:`facetlab.figures.literal_text`): a ``$`` in a
model name never becomes math text; and wrapped at :data:`LABEL_WIDTH` characters, so a
model string of any length (``openai/...?structured_format=json_object``) neither
collapses an axis nor lets a legend take the plot's width.

>>> import pandas as pd
>>> t = pd.DataFrame({"model": ["m"], "probe": ["P3"], "accuracy": [0.5], "n": [2]})
>>> outcome_accuracy(t).axes[0].get_xlabel()
'share of answers matching the ground truth (accuracy)'
"""

import textwrap
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from facetlab.analysis.rules import DEFAULT_THRESHOLD
from facetlab.analysis.select import model_order, select_trials
from facetlab.analysis.study import DISSOCIATED, FAITHFUL, require_weights, verdict_pair
from facetlab.errors import DataError
from facetlab.figures import literal_columns, literal_text, require_table

__all__ = [
    "asymmetry",
    "c2_heatmap",
    "hint_rates",
    "outcome_accuracy",
    "p1_vs_p2",
    "p3_intervals",
    "weight_distributions",
]


LABEL_WIDTH = 28
"""Characters per line of a name drawn as a tick label, legend entry or note."""


def _label(text: object) -> str:
    """A name or id as drawn: wrapped at :data:`LABEL_WIDTH`, then literal (a ``$`` split
    from its escape would start math text)."""
    return literal_text("\n".join(textwrap.wrap(str(text), LABEL_WIDTH)) or str(text))


def _labelled(table: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """``table`` with its text ``columns`` as :func:`_label` draws them."""
    return table.assign(**{c: table[c].map(_label) for c in columns if c in table.columns})


def _reference(ax: Axes, *, x: float | None = None, y: float | None = None) -> None:
    """A dotted reference line (threshold, 50% share)."""
    if x is not None:
        ax.axvline(x, color="#888888", linestyle=":", linewidth=1)
    if y is not None:
        ax.axhline(y, color="#888888", linestyle=":", linewidth=1)


def _size(n_rows: int, per_row: float = 0.45, minimum: float = 3.0) -> tuple[float, float]:
    return (8.0, max(minimum, 1.2 + per_row * n_rows))


def _caption(fig: Figure, text: str) -> None:
    """What every mark, colour and line of ``fig`` means, under it (kept by the layout)."""
    fig.supxlabel("\n".join(textwrap.wrap(text, 130)), x=0.01, ha="left", fontsize=8)


def _bars(
    ax: Axes,
    labels: list[str],
    values: list[float],
    notes: list[str],
    colors: list[Any],
    ends: list[float] | None = None,
) -> None:
    """Horizontal bars, top to bottom, each ending in a dot with its value printed beside
    it (or beside ``ends``, e.g. past an interval drawn over the bar), so a bar of 0 is
    seen as 0 (not as a missing bar); the caller sets the x range (start it below 0: a dot
    at 0 then stands off the axis line)."""
    y = np.arange(len(values))
    ax.barh(y, values, color=colors, height=0.8)
    ax.scatter(values, y, s=28, c=[c if c != "none" else "white" for c in colors],
               edgecolors="#222222", linewidths=0.8, zorder=3)  # fmt: skip
    for yi, end, note in zip(y, ends or values, notes, strict=True):
        ax.annotate(note, (end, yi), xytext=(7, 0), textcoords="offset points", va="center",
                    fontsize=8)  # fmt: skip
    ax.set_yticks(y, labels)
    ax.set_ylim(len(values) - 0.5, -0.5)


def outcome_accuracy(outcomes: pd.DataFrame) -> Figure:
    """Accuracy per model and probe (bars with their values), from the ``outcomes`` table;
    C2 answers without an expected answer are a decision-change rate, drawn apart."""
    require_table(outcomes, ["model", "probe", "accuracy", "n"], "outcome accuracy")
    frame = _labelled(outcomes, "model", "probe")
    change = frame.get("decision_change", pd.Series(np.nan, index=frame.index))
    panels = [
        (frame[frame["accuracy"].notna()], "accuracy",
         "share of answers matching the ground truth (accuracy)"),
        (frame[change.notna()].assign(accuracy=change[change.notna()]), "decision change",
         "C2 without an expected answer: share of answers that differ from the unperturbed "
         "case's (a decision change; a rewrite may legitimately flip it)"),
    ]  # fmt: skip
    panels = [panel for panel in panels if not panel[0].empty]
    if not panels:
        raise DataError("outcome accuracy: no probe has a scored yes/no answer")
    palette = _probe_colors(frame["probe"])
    rows = [len(t) for t, _, _ in panels]
    fig = Figure(figsize=(8.5, 1.6 + 0.32 * sum(rows) + 0.6 * len(rows)), layout="constrained")
    axes = fig.subplots(len(panels), 1, height_ratios=rows, squeeze=False)[:, 0]
    for ax, (t, _, xlabel) in zip(axes, panels, strict=True):
        _bars(
            ax,
            [f"{m} · {p}" for m, p in zip(t["model"], t["probe"], strict=True)],
            t["accuracy"].astype(float).tolist(),
            [f"{v:.2f} (n={n})" for v, n in zip(t["accuracy"], t["n"], strict=True)],
            [palette.get(p, "#999999") for p in t["probe"]],  # a probe added later: grey
        )
        ax.set(xlim=(-0.03, 1.18), xlabel=xlabel)
    fig.suptitle("Answers per model and probe")
    _caption(
        fig,
        "Bar colour: probe (P1 names a factor and has no yes/no answer). Each bar ends in a "
        "dot with its value and trial count beside it, so 0 shows as a dot at 0. Unparsed "
        "answers count as not correct.",
    )
    return fig


def p1_vs_p2(p1_p2: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """Per (model, counterfactual): share of P1 trials naming the neutralized factor (x)
    against P2's mean weight on it (y). Bottom right is the contradiction, P1 dissociated
    and P2 faithful: P1 names the factor as decisive, P2 gives it (almost) no weight."""
    require_table(
        p1_p2, ["model", "instance_id", "p1_names_neutralized", "p2_mean_weight"], "P1 vs P2"
    )
    both = p1_p2.dropna(subset=["p1_names_neutralized", "p2_mean_weight"])
    if both.empty:
        raise DataError(
            "P1 vs P2: no counterfactual has both a P1 share and a P2 weight (P2 trials "
            "missing or unparsed; see the P1 vs P2 table)"
        )
    both = _labelled(both, "model", "instance_id")
    fig = Figure(figsize=(8.5, 6.2), layout="constrained")
    ax = fig.subplots()
    models = list(dict.fromkeys(both["model"]))
    colors = sns.color_palette(n_colors=len(models))
    markers = ["o", "s", "D", "^", "v", "P", "X"]
    instances = list(dict.fromkeys(both["instance_id"]))
    for i, model in enumerate(models):
        rows = both[both["model"] == model]
        for j, instance in enumerate(instances):
            cell = rows[rows["instance_id"] == instance]
            ax.scatter(
                cell["p1_names_neutralized"],
                cell["p2_mean_weight"],
                s=90 + 110 * (len(models) - 1 - i),  # nested rings: see the caption
                marker=markers[j % len(markers)],
                facecolors="none",
                edgecolors=[colors[i]],
                linewidths=2,
            )
    _reference(ax, y=threshold)
    _reference(ax, x=0.5)
    top = max(100.0, float(both["p2_mean_weight"].max()) + 5)
    for x, y, text, ha in (  # each quadrant's reading in the table's verdict words
        (0.52, threshold / 2, verdict_pair(DISSOCIATED, FAITHFUL), "left"),
        (0.52, top - 3, verdict_pair(DISSOCIATED, DISSOCIATED), "left"),
        (0.48, top - 3, verdict_pair(FAITHFUL, DISSOCIATED), "right"),
        (0.48, threshold / 2, verdict_pair(FAITHFUL, FAITHFUL), "right"),
    ):
        ax.text(x, y, text, ha=ha, va="center", fontsize=8, color="#777777")
    ax.set(
        xlim=(-0.05, 1.05),
        ylim=(-2, top),
        xlabel="P1: share of trials naming the neutralized factor",
        ylabel="P2: mean weight on the neutralized factor",
        title=f"P1 vs P2 per counterfactual (threshold {threshold:g})",
    )
    handles = [Line2D([], [], marker="o", linestyle="none", markerfacecolor="none",
                      markeredgecolor=c, markeredgewidth=2, label=m)
               for m, c in zip(models, colors, strict=True)]  # fmt: skip
    shapes = [Line2D([], [], marker=markers[j % len(markers)], linestyle="none",
                     markerfacecolor="none", markeredgecolor="#333333", label=inst)
              for j, inst in enumerate(instances)]  # fmt: skip
    header = Line2D([], [], linestyle="none", label="shape: counterfactual")
    fig.legend(handles=[*handles, header, *shapes], title="colour: model", fontsize="small",
               loc="outside right upper", frameon=False)  # fmt: skip
    _caption(
        fig,
        f"One mark per (model, counterfactual). Dotted: the threshold {threshold:g} (P2 is "
        f"{DISSOCIATED} above it) and half of the P1 trials (P1 is {DISSOCIATED} where the "
        "neutralized factor is the one named most: right of it, or left of it while it still "
        "leads; the table's verdict_p1 says which). Ring size encodes nothing: rings of different sizes only "
        "keep models that land on the same point visible (the largest behind).",
    )
    return fig


def p3_intervals(p3: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """P3 cells: mean weight on the neutralized factor (left) and the share of trials
    above ``threshold`` with its Wilson 95% interval (right)."""
    cols = ["model", "instance_id", "mean_weight", "n", "n_above_threshold"]
    require_table(p3, [*cols, "wilson_low", "wilson_high"], "P3")
    labels = [
        f"{_label(m)} · {_label(i)} (n={n})"
        for m, i, n in zip(p3["model"], p3["instance_id"], p3["n"], strict=True)
    ]
    means = p3["mean_weight"].astype(float)
    y = np.arange(len(p3))
    fig = Figure(figsize=(11, _size(len(p3))[1] + 0.6), layout="constrained")
    left, right = fig.subplots(1, 2, sharey=True)
    _bars(
        left,
        labels,
        means.fillna(0.0).tolist(),
        [f"{v:.1f}" if v == v else "no parsed weight" for v in means],
        ["#4c72b0" if v == v else "none" for v in means],
    )
    _reference(left, x=threshold)
    left.set(xlim=(-3, 118), xlabel="mean weight on the neutralized factor")
    share = p3["n_above_threshold"] / p3["n"].where(p3["n"] > 0)
    err = np.vstack([share - p3["wilson_low"], p3["wilson_high"] - share]).clip(min=0)
    right.errorbar(share, y, xerr=np.nan_to_num(err), fmt="o", color="#c44e52", capsize=4)
    right.set(xlim=(-0.05, 1.05), xlabel=f"share of trials above {threshold:g} (Wilson 95%)")
    fig.suptitle("P3 on the cue-free rewrites")
    _caption(
        fig,
        f"Left: mean weight per (model, rewrite), a dot at the bar's end with its value (0 "
        f"shows as a dot at 0); dotted: the threshold {threshold:g}. Right: the share of trials above "
        "it (dot) with its Wilson 95% interval (bar). n: trials that gave a weight.",
    )
    return fig


def c2_heatmap(c2: pd.DataFrame) -> Figure:
    """Mean C2 residual weight: models (rows) by base instance and rewritten factor (columns)."""
    require_table(c2, ["model", "base_instance_id", "factor", "mean_residual"], "C2")
    if c2["mean_residual"].isna().all():
        raise DataError("C2: no rewritten factor has a parsed weight (every reply unparsed)")
    c2 = _labelled(c2, "model", "base_instance_id", "factor")
    bases = c2["base_instance_id"].astype(str)
    one_base = bases.nunique() == 1
    frame = c2.assign(column=c2["factor"].astype(str) if one_base else bases + " " + c2["factor"])
    order = list(dict.fromkeys(frame["column"]))
    grid = frame.pivot_table(
        index="model", columns="column", values="mean_residual", sort=False, dropna=False
    )
    grid = grid.reindex(columns=order)
    fig = Figure(
        figsize=(max(6.0, 0.8 * len(order) + 3), max(3.0, 0.6 * len(grid) + 2.2)),
        layout="constrained",
    )
    # a canvas that keeps its renderer: without one seaborn's tick sizing made a new
    # figure-sized one per label (~600 MB for 76 columns)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    sns.heatmap(
        grid,
        annot=True,
        fmt=".1f",
        cmap="rocket_r",
        vmin=0,
        vmax=100,  # the same colours in every report: weights are percentage points
        ax=ax,
        cbar_kws={"label": "mean residual weight (0-100)"},
    )
    ax.set_xlabel(
        f"rewritten factor of {bases.iloc[0]}" if one_base else "base instance and rewritten factor"
    )
    ax.tick_params(axis="x", labelrotation=0 if one_base else 45)
    ax.set(ylabel="", title="C2: weight left after a neutral rewrite (0 is faithful)")
    _caption(
        fig,
        "Each cell: a model's mean weight on a factor after that factor's text was rewritten "
        "to point neither way (value printed; colour on a fixed 0-100 scale). A blank cell: "
        "no reply gave a weight.",
    )
    return fig


def asymmetry(p3: pd.DataFrame, c2: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """Each model at (C2 residual, P3 weight): does a model that drops a neutralized factor
    when asked (C2) also drop it on a cue-free rewrite (P3)? A dot at the mean over cells
    (weighted by trials), a ring at its highest cell, joined: a mean never hides a factor."""
    require_table(p3, ["model", "mean_weight", "n"], "asymmetry (P3)")
    require_table(c2, ["model", "mean_residual", "n"], "asymmetry (C2)")
    points = pd.DataFrame(
        {
            "c2": _by_model(c2, "mean_residual"),
            "p3": _by_model(p3, "mean_weight"),
            "c2_max": c2.groupby("model")["mean_residual"].max(),
            "p3_max": p3.groupby("model")["mean_weight"].max(),
        }
    ).dropna()
    if points.empty:
        raise DataError(
            f"asymmetry: no model has both a P3 and a C2 weight "
            f"(P3: {sorted(set(p3['model']))}, C2: {sorted(set(c2['model']))})"
        )
    fig = Figure(figsize=(8, 6.2), layout="constrained")
    ax = fig.subplots()
    for _, r in points.iterrows():
        xs, ys = [float(r["c2"]), float(r["c2_max"])], [float(r["p3"]), float(r["p3_max"])]
        ax.plot(xs, ys, color="#4c72b0", linewidth=1, zorder=2)
    ax.scatter(points["c2_max"], points["p3_max"], s=160, facecolors="none",
               edgecolors="#4c72b0", linewidths=2, zorder=3, label="highest cell")  # fmt: skip
    ax.scatter(points["c2"], points["p3"], s=70, color="#4c72b0", zorder=4,
               label="mean over cells (by trials)")  # fmt: skip
    _reference(ax, y=threshold)
    _reference(ax, x=threshold)
    top = max(30.0, float(points.max().max()) * 1.15)
    ax.set(xlim=(-1, top), ylim=(-1, top))
    _labels(ax, points)  # placed once the limits are final
    ax.set(
        xlabel="C2: residual weight on a rewritten factor",
        ylabel="P3: weight on the neutralized factor (cue-free rewrite)",
        title="Asymmetry: dropping a factor when told (C2) vs when not told (P3)",
    )
    ax.legend(loc="upper right", fontsize="small", frameon=False)
    _caption(
        fig,
        "Per model: the dot is the mean over its C2 cells (base instance, factor) and P3 cells "
        "(rewrite), weighted by trials; the ring is its highest C2 cell and highest P3 cell; a "
        "line from dot to ring means one factor or rewrite carries a signal the mean dilutes. "
        f"Dotted: the threshold {threshold:g}.",
    )
    return fig


HINT_RATES = {  # label, the count the rate is a share of, why there is nothing to rate
    "excess_switch_rate": ("influence beyond chance", "pairs", "no pair of replies"),
    "raw_switch_rate": ("raw switch rate", "eligible", "no eligible pair"),
    "verbalized_answer_rate": ("answer says so", "switched", "no switch"),
    "verbalized_thinking_rate": ("thinking says so", "with_thinking", "no thinking text"),
}
_AMBIGUOUS = {
    "verbalized_answer_rate": "ambiguous_answer",
    "verbalized_thinking_rate": "ambiguous_thinking",
}


def hint_rates(hint: pd.DataFrame) -> Figure:
    """Per model (a panel each) and hint kind: the hint's influence beyond chance (the
    excess switch rate, Newcombe interval), the raw switch rate, then among switched trials
    the shares whose answer and whose thinking text admit the hint, corrected for the
    detector's measured error (intervals that include it), with the share of ambiguous
    texts (named the hint and denied it) as its own mark (the ``hint`` table of
    :mod:`facetlab.analysis.hints`)."""
    counts = [count for _, count, _ in HINT_RATES.values()]
    require_table(hint, ["model", "hint_kind", "switched", *HINT_RATES, *counts], "hint")
    frame = literal_columns(hint, "model", "hint_kind")
    models = list(dict.fromkeys(frame["model"]))
    fig = Figure(figsize=(8.5, 1.6 + 0.96 * len(frame) + 0.6 * len(models)), layout="constrained")
    axes = fig.subplots(len(models), 1, sharex=True, squeeze=False)[:, 0]
    for ax, model in zip(axes, models, strict=True):
        cell = frame[frame["model"] == model]
        bars = [_hint_bar(row, rate) for _, row in cell.iterrows() for rate in HINT_RATES]
        labels, values, notes, colors, lows, highs, odd = (list(x) for x in zip(*bars, strict=True))
        _bars(ax, labels, values, notes, colors, ends=np.fmax(values, highs).tolist())
        at, low, high = np.array(values), np.array(lows), np.array(highs)  # n/a: NaN, not drawn
        ax.errorbar(at, np.arange(len(bars)), xerr=np.vstack([at - low, high - at]).clip(min=0),
                    fmt="none", ecolor="#333333", capsize=3, zorder=4)  # fmt: skip
        ax.scatter(odd, np.arange(len(bars)), marker="D", s=30, facecolors="none",
                   edgecolors="#b2182b", linewidths=1.2, zorder=5)  # fmt: skip
        ax.axvline(0, color="#999999", linewidth=0.6)
        ax.set(
            xlim=(min(-0.1, float(np.nanmin(np.append(low, 0.0))) - 0.05), 1.3),
            xticks=np.linspace(0, 1, 6),
        )
        ax.set_title(model, fontsize=9, loc="left")
    axes[-1].set_xlabel("rate (95% interval; verbalisation: with the detector's error)")
    fig.suptitle("H1: does a planted hint move the reply beyond chance, and does the reply say so?")
    _caption(
        fig,
        "One panel per model; per hint kind four bars. Influence beyond chance (headline): "
        "P(hinted reply gives the hint's target) minus P(the control reply of the same instance "
        "and repeat gives it), Newcombe paired 95% interval; near 0 the hint moved nothing, "
        "whatever the raw rate. Raw switch rate: share of eligible pairs (the control's own "
        "answer was not the target) whose hinted reply gives it, Wilson interval; inflated by "
        "any instability of the model. Answer / thinking says so: among switched trials, the "
        "share whose answer / thinking text admits the hint, corrected for the detector's "
        "sensitivity and specificity measured on held-out labels (Rogan-Gladen), with intervals "
        "that include that error. Red open diamond: share of those texts that name the hint and "
        "deny it (ambiguous; drawn when there are any), never counted as said. Each bar ends in a "
        "dot, so 0 shows as a dot "
        "at 0. n/a (empty dot): nothing to rate (no switch, or no thinking text returned), never "
        "a 0.",
    )
    return fig


def _hint_bar(row: pd.Series, rate: str) -> tuple[str, float, str, str, float, float, float]:
    """One bar of :func:`hint_rates`: label, value (0 if none), note, colour, interval, and
    the ambiguous share (NaN: none drawn)."""
    label, count, why = HINT_RATES[rate]
    stem = rate.replace("excess_switch_rate", "excess_switch")  # its interval's columns
    value, low, high = (float(row[c]) for c in (rate, f"{stem}_low", f"{stem}_high"))
    label = f"{row['hint_kind']} · {label}"
    odd = float("nan")
    if rate in _AMBIGUOUS and _AMBIGUOUS[rate] in row and row[count] and row[_AMBIGUOUS[rate]]:
        odd = float(row[_AMBIGUOUS[rate]]) / float(row[count])
    if value != value:  # nothing to rate: an empty dot at 0, said so beside it, no interval
        why = (
            why
            if rate in ("excess_switch_rate", "raw_switch_rate") or row["switched"]
            else "no switch"
        )
        return label, 0.0, f"n/a: {why}", "none", low, high, float("nan")
    color = f"C{list(HINT_RATES).index(rate)}"
    return label, value, f"{value:.2f} (n={int(row[count])})", color, low, high, odd


def _labels(ax: Axes, points: pd.DataFrame) -> None:
    """Model names beside their dots: models at the same point share one label, and a
    label that would overlap one placed before moves up above it."""
    shared = points.round(6).reset_index(names="model").groupby(["c2", "p3"], sort=False)["model"]
    to_points = 72.0 / ax.figure.dpi
    placed: list[tuple[float, float, float]] = []  # x, bottom, top of each label, in points
    for (cx, cy), names in sorted(shared, key=lambda g: (g[0][1], g[0][0])):
        x, y = ax.transData.transform((float(cx), float(cy))) * to_points  # type: ignore[arg-type]
        height, dy = 11.0 * sum(_label(n).count("\n") + 1 for n in names), 4.0
        for px, bottom, top in sorted(placed, key=lambda p: p[1]):
            if abs(x - px) < 120 and y + dy < top and bottom < y + dy + height:
                dy = top - y + 2
        placed.append((x, y + dy, y + dy + height))
        ax.annotate("\n".join(map(_label, names)), (cx, cy), xytext=(8, dy),
                    textcoords="offset points", fontsize=9, va="bottom")  # fmt: skip


def _by_model(table: pd.DataFrame, column: str) -> pd.Series:
    """Mean of ``column`` per model over its cells, each weighted by its trial count."""
    table = table[table[column].notna()]
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
    frame = frame[frame["probe"].isin(DISTRIBUTION_PROBES)]
    require_weights(frame, "P2, P3 or C2")
    frame = frame[frame["foi_weight"].notna()]
    sizes = frame.groupby(["model", "probe", "instance_id"])["foi_weight"].transform("size")
    frame = frame[sizes > 1]
    rank = {m: i for i, m in enumerate(model_order(frame, models))}  # as the other figures
    frame = frame.iloc[np.argsort(frame["model"].map(rank).to_numpy(), kind="stable")]
    if frame.empty:
        raise DataError("no cell has more than one trial (repeats = 1): distributions need n > 1")
    fig = Figure(figsize=(9, _size(frame["model"].nunique() * 2)[1]), layout="constrained")
    ax = fig.subplots()
    if len(frame) > max_points:
        _cell_histograms(ax, frame)
        ax.set(
            xlabel="weight on the factor of interest (per trial)",
            ylabel="",
            title=f"Distributions where a cell has n > 1 ({len(frame):,} trials: "
            "each cell's histogram, box = quartiles)",
        )
        _caption(fig, _DISTRIBUTION_CAPTION + " Shaded: each cell's histogram, scaled to its peak.")
        return fig
    data = _labelled(frame, "model", "probe").assign(foi_weight=frame["foi_weight"].astype(float))
    by_probe = _probe_colors(frame["probe"])
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
        palette=by_probe,
        edgecolor="#222222",
        linewidth=0.5,
        ax=ax,
    )
    ax.set(
        xlabel="weight on the factor of interest (per trial)",
        ylabel="",
        title="Distributions where a cell has n > 1",
    )
    _caption(fig, _DISTRIBUTION_CAPTION + " Points: one per trial, in the probe's colour.")
    # beside the axes, as the histogram version has it: inside, it covered the boxes
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title="probe")
    return fig


_DISTRIBUTION_CAPTION = (
    "Weight on the factor of interest: P2 and P3 on the neutralized factor, C2 on the "
    "rewritten one. Per model and probe, trials pooled over instances and factors (cells of "
    "one trial left out). Box: quartiles and median; whiskers: 1.5 interquartile ranges."
)

PROBE_ORDER = ("P2", "P3", "C2", "P1", "C0", "C3", "ANCHOR")
"""The probes in the figures' order, each with its fixed colour in every figure (the
distributions figure draws the first three)."""
DISTRIBUTION_PROBES = PROBE_ORDER[:3]


def _probe_colors(probes: pd.Series) -> dict[str, Any]:
    """The probes present, in figure order, each with its fixed colour."""
    palette = sns.color_palette(n_colors=len(PROBE_ORDER))
    present = set(probes.astype(str))
    return {p: palette[i] for i, p in enumerate(PROBE_ORDER) if p in present}


def _cell_histograms(ax: Axes, frame: pd.DataFrame) -> None:
    """Per (model, probe) cell: its histogram as a shaded band (a stepped violin) and
    its box, laid out as the point version lays them (models top to bottom in the
    frame's order: the caller's, else sorted; the probes P2, P3, C2 side by side within
    a model, one colour each)."""
    from matplotlib.cbook import boxplot_stats
    from matplotlib.patches import Patch

    models = list(pd.unique(frame["model"]))
    by_probe = _probe_colors(frame["probe"])
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
    ax.set_yticks(range(len(models)), [_label(m) for m in models])
    # ylim reversed: the first model on top, as seaborn draws it
    ax.set(ylim=(len(models) - 0.5, -0.5), xlim=(edges[0], edges[-1]))
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

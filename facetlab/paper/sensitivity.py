"""Which headline conclusions of the paper survive other analysis settings?

The paper fixes two analyst choices: the faithfulness threshold (neutralized
weight ≤ 10 is faithful) and the bimodality split point (wF1 < 20 is the low
mode, chosen after seeing the data). This module re-derives the three headline
conclusions over a range of each setting:

* ``p1_p2_contradiction`` (threshold): P1 and P2 disagree more than chance, mostly
  as "P1 dissociated, P2 faithful" — McNemar exact p < ``alpha`` and more
  discordant pairs in that direction than in the other (``detail`` says whether
  the disagreement is *entirely* one-directional, as the paper reports at 10);
* ``open_closed_asymmetry`` (threshold): closed models dissociate on CF-Barker P3
  (some closed mean weight above the threshold, no open one) *and* open models
  fail C2 more often (share of C2 residuals above the threshold higher for open
  than for closed models);
* ``bimodality`` (split point): the wrong outcomes separate by mode — Fisher
  exact p < ``alpha`` on low/high mode × wrong/correct.

Every number comes from :mod:`facetlab.paper.cells` and
:mod:`facetlab.analysis.stats` (the same frames and tests as the paper's tables).

>>> from facetlab.records import load_trials                       # doctest: +SKIP
>>> table = sensitivity_table(load_trials())                       # doctest: +SKIP
>>> table.query("conclusion == 'bimodality'")[["value", "holds"]]  # doctest: +SKIP
"""

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from facetlab.analysis import rules, stats
from facetlab.errors import ConfigError
from facetlab.paper import cells

__all__ = [
    "CONCLUSIONS",
    "DEFAULT_SPLITS",
    "DEFAULT_THRESHOLDS",
    "SENSITIVITY_COLUMNS",
    "asymmetry_at",
    "bimodality_at",
    "p1_p2_at",
    "sensitivity_figure",
    "sensitivity_table",
    "summary",
    "sweep_tag",
]

DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(float(t) for t in range(5, 21))
"""Thresholds swept by default: 5–20 percentage points."""

DEFAULT_SPLITS: tuple[float, ...] = tuple(float(s) for s in range(15, 31))
"""Bimodality split points swept by default: 15–30."""

CONCLUSIONS: dict[str, str] = {
    "p1_p2_contradiction": "threshold",
    "open_closed_asymmetry": "threshold",
    "bimodality": "split_point",
}
"""Each headline conclusion and the setting it depends on."""

SENSITIVITY_COLUMNS: tuple[str, ...] = (
    "conclusion",
    "parameter",
    "value",
    "is_paper_setting",
    "holds",
    "statistic",
    "p_value",
    "detail",
)
"""Columns of :func:`sensitivity_table` (and of ``paper/tables/sensitivity.csv``)."""


def _row(
    conclusion: str,
    value: float,
    holds: bool,
    statistic: float,
    p_value: float,
    detail: str,
    paper_value: float,
) -> dict[str, object]:
    return {
        "conclusion": conclusion,
        "parameter": CONCLUSIONS[conclusion],
        "value": float(value),
        "is_paper_setting": bool(value == paper_value),
        "holds": bool(holds),
        "statistic": float(statistic),
        "p_value": float(p_value),
        "detail": detail,
    }


def p1_p2_at(
    trials: pd.DataFrame,
    threshold: float,
    alpha: float = 0.05,
    matrix: pd.DataFrame | None = None,
) -> dict[str, object]:
    """The P1 vs P2 contradiction at one threshold (McNemar exact on the paired verdicts).

    ``matrix`` is :func:`cells.fig1_p1_p2` at any threshold (a sweep builds it once):
    only the P2 verdicts depend on the threshold, and they are recomputed here.
    """
    if matrix is None:
        matrix = cells.fig1_p1_p2(trials, threshold=threshold)
    matrix = matrix.assign(
        p2_faithful=[rules.weighted_faithful(float(w), threshold) for w in matrix["p2_weight"]]
    )
    mc = stats.mcnemar_exact(
        matrix["p1_faithful"].astype(bool).tolist(), matrix["p2_faithful"].astype(bool).tolist()
    )
    holds = mc.p_value < alpha and mc.b > mc.c
    p2_faithful = int(matrix["p2_faithful"].astype(bool).sum())
    direction = "entirely one-directional" if mc.c == 0 else "not entirely one-directional"
    detail = (
        f"P2 faithful {p2_faithful}/{len(matrix)}; discordant P1-only dissociated {mc.b}, "
        f"P2-only dissociated {mc.c} ({direction}); McNemar exact p = {mc.p_value:.2g}"
    )
    return _row(
        "p1_p2_contradiction",
        threshold,
        holds,
        float(mc.b),
        mc.p_value,
        detail,
        rules.DEFAULT_THRESHOLD,
    )


def asymmetry_at(
    trials: pd.DataFrame, threshold: float, points: pd.DataFrame | None = None
) -> dict[str, object]:
    """The open-vs-closed asymmetry at one threshold (CF-Barker P3 means and C2 residuals).

    ``statistic`` is the difference of C2 above-threshold shares (open minus closed);
    ``p_value`` is the cell-level Fisher test on CF-Barker (closed/open × mean above
    the threshold or not). At the paper's threshold it is the paper's own §4.7 test
    instead (dissociated = mean ≥ :data:`rules.DEFAULT_DISSOCIATION`), so the cell marked
    "paper's setting" shows the paper's p-value; the detail gives both. ``points`` is
    :func:`cells.fig5_asymmetry` (independent of the threshold; a sweep builds it once).
    """
    if points is None:
        points = cells.fig5_asymmetry(trials)
    closed = points["weights_access"] == "closed"
    above = points["p3_barker_mean"].astype(float) > threshold
    p3_closed, p3_open = int((above & closed).sum()), int((above & ~closed).sum())
    c2 = cells.paper_trials(trials, "C2")
    c2_closed = c2["weights_access"] == "closed"
    c2_above = c2["weight"].astype(float) > threshold
    share_closed = float(c2_above[c2_closed].mean())
    share_open = float(c2_above[~c2_closed].mean())
    holds = p3_closed > 0 and p3_open == 0 and share_open > share_closed
    fisher = stats.group_fisher(
        points["p3_barker_mean"].astype(float).tolist(),
        closed.tolist(),
        dissociation=np.nextafter(threshold, np.inf),  # "above the threshold" = mean > t
    )
    detail = (
        f"CF-Barker P3 mean > {threshold:g}: closed {p3_closed}/{int(closed.sum())}, "
        f"open {p3_open}/{int((~closed).sum())}; C2 residual > {threshold:g}: "
        f"closed {share_closed:.0%}, open {share_open:.0%}; "
        f"Fisher on mean > {threshold:g}: p = {fisher.p_value:.2g}"
    )
    p_value = fisher.p_value
    if threshold == rules.DEFAULT_THRESHOLD:
        paper = stats.group_fisher(points["p3_barker_mean"].astype(float).tolist(), closed.tolist())
        p_value = paper.p_value
        detail += (
            f"; shown: the paper's §4.7 test (dissociated = mean ≥ "
            f"{rules.DEFAULT_DISSOCIATION:g}): p = {paper.p_value:.3g}"
        )
    return _row(
        "open_closed_asymmetry",
        threshold,
        holds,
        share_open - share_closed,
        p_value,
        detail,
        rules.DEFAULT_THRESHOLD,
    )


def bimodality_at(
    trials: pd.DataFrame, split_point: float, alpha: float = 0.05
) -> dict[str, object]:
    """The GPT-5.4 CF-Cabral bimodality at one split point (Fisher exact, mode × outcome)."""
    frame = cells.fig3_bimodality(trials, split_point=split_point)
    weights = frame["weight"].astype(float).tolist()
    fisher = stats.bimodality_fisher(weights, frame["wrong"].astype(bool).tolist(), split_point)
    (low_wrong, low_right), (high_wrong, high_right) = fisher.table
    separated = low_wrong == 0 and high_right == 0
    holds = fisher.p_value < alpha
    detail = (
        f"low mode {low_wrong + low_right} ({low_wrong} wrong), high mode "
        f"{high_wrong + high_right} ({high_wrong} wrong); "
        f"{'perfect' if separated else 'imperfect'} separation; Fisher p = {fisher.p_value:.2g}"
    )
    return _row(
        "bimodality",
        split_point,
        holds,
        float(high_wrong + high_right),
        fisher.p_value,
        detail,
        rules.DEFAULT_SPLIT_POINT,
    )


def sweep_tag(
    thresholds: Iterable[float], split_points: Iterable[float], alpha: float = 0.05
) -> str | None:
    """``None`` for the default sweep (whose outputs are committed), else a folder name.

    >>> sweep_tag(range(5, 21), range(15, 31)) is None
    True
    >>> sweep_tag(range(5, 16), range(15, 31))
    'sweep-t5-15-s15-30-a0.05'
    """
    ts = _check_range(list(thresholds), "thresholds")
    ss = _check_range(list(split_points), "split_points")
    return (
        None
        if ts == list(DEFAULT_THRESHOLDS) and ss == list(DEFAULT_SPLITS) and alpha == 0.05
        else f"sweep-t{ts[0]:g}-{ts[-1]:g}-s{ss[0]:g}-{ss[-1]:g}-a{alpha:g}"
    )


def _check_range(values: Sequence[float], name: str) -> list[float]:
    out = [float(v) for v in values]
    if not out:
        raise ConfigError(f"{name}: the sweep needs at least one value")
    if any(v < 0 or v > 100 for v in out):
        raise ConfigError(f"{name}: values must lie in [0, 100] percentage points, got {out}")
    return sorted(set(out))


_TEXT_COLUMNS = ("prompt", "raw_response", "direct_probe_response")


def sensitivity_table(
    trials: pd.DataFrame,
    thresholds: Iterable[float] = DEFAULT_THRESHOLDS,
    split_points: Iterable[float] = DEFAULT_SPLITS,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """One row per (conclusion, setting value); columns :data:`SENSITIVITY_COLUMNS`."""
    ts = _check_range(list(thresholds), "thresholds")
    ss = _check_range(list(split_points), "split_points")
    # the sweep re-selects the same trials many times: without the long text columns
    # (prompts, replies) each selection copies a fraction of the bytes
    slim = trials.drop(columns=[c for c in _TEXT_COLUMNS if c in trials.columns])
    matrix, points = cells.fig1_p1_p2(slim), cells.fig5_asymmetry(slim)
    rows = [
        *(p1_p2_at(slim, t, alpha, matrix) for t in ts),
        *(asymmetry_at(slim, t, points) for t in ts),
        *(bimodality_at(slim, s, alpha) for s in ss),
    ]
    return pd.DataFrame(rows, columns=list(SENSITIVITY_COLUMNS))


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per conclusion: does it hold at the paper's setting, and over which values?

    Columns: ``conclusion, parameter, at_paper_setting, holds_for, fails_for``
    (value lists as text, e.g. ``"5-19"``).
    """
    return pd.DataFrame(
        {
            "conclusion": conclusion,
            "parameter": group["parameter"].iloc[0],
            "at_paper_setting": bool(group.loc[group["is_paper_setting"], "holds"].all())
            if group["is_paper_setting"].any()
            else None,
            "holds_for": _ranges(group.loc[group["holds"], "value"]),
            "fails_for": _ranges(group.loc[~group["holds"], "value"]),
        }
        for conclusion, group in table.groupby("conclusion", sort=False)
    )


def _ranges(values: Iterable[float]) -> str:
    """``[5, 6, 7, 9]`` → ``"5-7, 9"`` (integers), for short summaries."""
    nums = sorted(float(v) for v in values)
    if not nums:
        return "none"
    parts: list[str] = []
    start = prev = nums[0]
    for v in [*nums[1:], float("inf")]:
        if v - prev == 1:
            prev = v
            continue
        parts.append(f"{start:g}" if start == prev else f"{start:g}-{prev:g}")
        start = prev = v
    return ", ".join(parts)


_LABELS = {
    "p1_p2_contradiction": "P1 vs P2\ncontradiction",
    "open_closed_asymmetry": "open vs closed\nasymmetry",
    "bimodality": "bimodality\n(Fisher)",
}


def sensitivity_figure(table: pd.DataFrame, alpha: float = 0.05) -> Figure:
    """Two panels: conclusions vs threshold (left) and vs split point (right).

    Each cell is green where the conclusion holds with p < ``alpha``, amber where it
    holds descriptively but p ≥ ``alpha``, red where it fails; the text is the test's
    p-value; the paper's setting is outlined in black.
    """
    fig = Figure(figsize=(15, 4.2))
    axes = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.0]})
    for ax, parameter, title in (
        (axes[0], "threshold", "faithfulness threshold (pp)"),
        (axes[1], "split_point", "bimodality split point (wF1)"),
    ):
        part = table[table["parameter"] == parameter]
        names = [
            c for c in CONCLUSIONS if CONCLUSIONS[c] == parameter and c in set(part["conclusion"])
        ]
        values = sorted(set(part["value"]))
        for row_i, name in enumerate(names):
            for col_i, value in enumerate(values):
                hit = part[(part["conclusion"] == name) & (part["value"] == value)]
                if hit.empty:
                    continue
                rec = hit.iloc[0]
                significant = float(rec["p_value"]) < alpha
                color = ("#2ecc71" if significant else "#f1c40f") if rec["holds"] else "#e74c3c"
                edge = "black" if rec["is_paper_setting"] else "white"
                ax.add_patch(
                    _rect(col_i, row_i, color, edge, 2.0 if rec["is_paper_setting"] else 0.8)
                )
                ax.text(
                    col_i + 0.5,
                    row_i + 0.5,
                    p_text(float(rec["p_value"])),
                    ha="center",
                    va="center",
                    fontsize=7.5,
                )
        ax.set(xlim=(0, len(values)), ylim=(0, len(names)), xlabel=title)
        ax.set_xticks([i + 0.5 for i in range(len(values))], [f"{v:g}" for v in values], fontsize=8)
        ax.set_yticks([i + 0.5 for i in range(len(names))], [_LABELS[n] for n in names], fontsize=9)
        ax.invert_yaxis()
        ax.tick_params(length=0)
        ax.spines[:].set_visible(False)
    fig.suptitle(
        f"Which headline conclusions hold? green = holds and p < α = {alpha:g}; amber = holds "
        f"descriptively, p ≥ {alpha:g}; red = fails (cell text = p-value; black outline = the "
        "paper's setting)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def p_text(p: float) -> str:
    """A p-value in at most five characters, readable in a small cell.

    >>> [p_text(p) for p in (0.0002, 0.0031, 0.049, 0.5, 1.0)]
    ['<.001', '.003', '.049', '.50', '1']
    """
    if p < 0.001:
        return "<.001"
    if p >= 0.995:
        return "1"
    return (f"{p:.3f}" if p < 0.1 else f"{p:.2f}").removeprefix("0")


def _rect(x: float, y: float, color: str, edge: str, width: float) -> Rectangle:
    return Rectangle((x, y), 1, 1, facecolor=color, edgecolor=edge, linewidth=width)

"""The rows of the paper's ``stats.csv``: every test and interval the paper reports.

Built on the generic tests of :mod:`facetlab.analysis.stats` and the paper frames of
:mod:`facetlab.paper.cells`.
"""

import pandas as pd

from facetlab.analysis import rules
from facetlab.analysis.stats import (
    WilsonInterval,
    bimodality_fisher,
    group_fisher,
    mcnemar_exact,
    wilson,
)
from facetlab.paper import cells

__all__ = ["STATS_COLUMNS", "stats_table"]

STATS_COLUMNS = ("test", "statistic", "statistic_name", "p_value", "n", "detail")
"""Required columns of ``stats.csv`` (more follow: ``ci_low``, ``ci_high``, ``table``)."""


def _fmt_table(table: tuple[tuple[int, int], tuple[int, int]]) -> str:
    return f"[[{table[0][0]}, {table[0][1]}], [{table[1][0]}, {table[1][1]}]]"


def stats_table(
    trials: pd.DataFrame,
    threshold: float = rules.DEFAULT_THRESHOLD,
    split_point: float = rules.DEFAULT_SPLIT_POINT,
    dissociation: float = rules.DEFAULT_DISSOCIATION,
) -> pd.DataFrame:
    """Rows of ``stats.csv``: every test and interval the paper reports, from ``trials``.

    Columns: ``test, statistic, statistic_name, p_value, n, detail, ci_low, ci_high,
    table``; ``statistic_name`` says what ``statistic`` is (``min(b, c)`` of McNemar's
    discordant pairs, a Fisher odds ratio, or a Wilson row's observed proportion).
    Tests: ``mcnemar_p1_p2`` (Section 4.7), ``fisher_bimodality`` (exploratory),
    ``fisher_open_closed_barker`` (descriptive), and Wilson intervals
    ``wilson_bimodality_combined`` and one ``wilson_p3:<model>:<instance>`` per
    Table 2 cell with n ≥ 5 plus the second wording.
    """
    matrix = cells.fig1_p1_p2(trials, threshold=threshold)
    mc = mcnemar_exact(matrix["p1_faithful"].tolist(), matrix["p2_faithful"].tolist())
    bim = cells.fig3_bimodality(trials, split_point=split_point)
    fb = bimodality_fisher(bim["weight"].tolist(), bim["wrong"].tolist(), split_point)
    t2 = cells.table2_p3(trials)
    barker = t2[t2["case"] == "CF-Barker"]
    fo = group_fisher(
        barker["mean_weight"].tolist(),
        (barker["weights_access"] == "closed").tolist(),
        dissociation,
    )
    wrong = [bool(x) for x in bim["wrong"]]
    rows: list[dict[str, object]] = [
        {
            "test": "mcnemar_p1_p2",
            "statistic": mc.statistic,
            "statistic_name": "min(b, c), discordant pairs (exact McNemar)",
            "p_value": mc.p_value,
            "n": mc.n,
            "detail": (
                f"paired (model, case) verdicts P1 vs P2 at threshold {threshold:g}: "
                f"P1 dissociated & P2 faithful = {mc.b}, P1 faithful & P2 dissociated = {mc.c}, "
                f"both faithful = {mc.both_faithful}, both dissociated = {mc.both_unfaithful}; "
                "exact binomial, two-sided"
            ),
            "table": _fmt_table(((mc.both_faithful, mc.c), (mc.b, mc.both_unfaithful))),
        },
        {
            "test": "fisher_bimodality",
            "statistic": fb.odds_ratio,
            "statistic_name": "odds ratio (Fisher exact)",
            "p_value": fb.p_value,
            "n": fb.n,
            "detail": (
                f"GPT-5.4 CF-Cabral adversarial trials, rows low (w < {split_point:g}) / high mode, "
                "columns wrong / correct outcome; two-sided, exploratory (post-hoc split)"
            ),
            "table": _fmt_table(fb.table),
        },
        {
            "test": "fisher_open_closed_barker",
            "statistic": fo.odds_ratio,
            "statistic_name": "odds ratio (Fisher exact)",
            "p_value": fo.p_value,
            "n": fo.n,
            "detail": (
                f"CF-Barker P3 cells, rows closed / open weights, columns mean w >= {dissociation:g} "
                "(dissociated) / below; two-sided, descriptive"
            ),
            "table": _fmt_table(fo.table),
        },
        _wilson_row(
            "wilson_bimodality_combined",
            wilson(sum(wrong), len(wrong)),
            "GPT-5.4 CF-Cabral, all adversarial wordings",
        ),
    ]
    rows += [
        _wilson_row(
            f"wilson_bimodality:{instance_id}",
            wilson(int(group["wrong"].astype(bool).sum()), len(group)),
            f"GPT-5.4 on {instance_id}",
        )
        for instance_id, group in bim.groupby("instance_id", sort=True)
    ]
    rows += [
        _wilson_row(
            f"wilson_p3:{model}:{instance_id}",
            wilson(int(n_wrong), int(n)),
            f"P3 wrong outcomes, {model} on {instance_id}",
        )
        for model, instance_id, n, n_wrong in zip(
            t2["model"], t2["instance_id"], t2["n"], t2["wrong"], strict=True
        )
        if int(n) >= 5
    ]
    return pd.DataFrame(rows, columns=[*STATS_COLUMNS, "ci_low", "ci_high", "table"])


def _wilson_row(test: str, wi: WilsonInterval, what: str) -> dict[str, object]:
    return {
        "test": test,
        "statistic": wi.proportion,
        "statistic_name": "proportion wrong",
        "p_value": float("nan"),
        "n": wi.n,
        "detail": f"{what}: wrong outcomes {wi.successes}/{wi.n}, Wilson 95% (z = 1.96, no correction)",
        "ci_low": wi.low,
        "ci_high": wi.high,
        "table": "",
    }

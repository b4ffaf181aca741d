"""The paper's statistics, computed with statsmodels and scipy (no hand-written formulas).

* :func:`wilson` — Wilson score interval for a proportion (z = 1.96, no continuity
  correction), via ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.
* :func:`mcnemar_exact` — McNemar's exact (binomial) test on paired boolean verdicts,
  via ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``.
* :func:`fisher_exact` — two-sided Fisher exact test on a 2×2 table, via ``scipy.stats``.

Each returns a small frozen dataclass (the paper's ``stats.csv`` is built from them by
:mod:`facetlab.paper.stats_table`). scipy and statsmodels are
imported inside the functions that call them, so importing this module (as every
notebook kernel does) stays cheap.

>>> w = wilson(7, 22)
>>> round(w.low, 2), round(w.high, 2)
(0.16, 0.53)
>>> m = mcnemar_exact([False] * 13 + [True] * 11, [True] * 24)
>>> (m.b, m.c, round(m.p_value, 6))
(13, 0, 0.000244)
"""

from collections.abc import Sequence
from dataclasses import dataclass

from facetlab.analysis import rules
from facetlab.errors import DataError


@dataclass(frozen=True)
class WilsonInterval:
    """A Wilson score interval for ``successes / n`` at ``confidence``."""

    successes: int
    n: int
    proportion: float
    low: float
    high: float
    confidence: float = 0.95

    def __str__(self) -> str:
        return (
            f"{self.successes}/{self.n} = {self.proportion:.0%} [{self.low:.0%}, {self.high:.0%}]"
        )


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's exact test on paired verdicts.

    ``b`` counts pairs unfaithful under the first probe and faithful under the second,
    ``c`` the reverse; ``statistic`` is statsmodels' exact statistic ``min(b, c)``.
    """

    statistic: float
    p_value: float
    n: int
    b: int
    c: int
    both_faithful: int
    both_unfaithful: int


@dataclass(frozen=True)
class FisherResult:
    """Two-sided Fisher exact test on ``table`` = ((a, b), (c, d))."""

    odds_ratio: float
    p_value: float
    table: tuple[tuple[int, int], tuple[int, int]]

    @property
    def n(self) -> int:
        """Total count of the table."""
        return sum(sum(row) for row in self.table)


def wilson(successes: int, n: int, confidence: float = 0.95) -> WilsonInterval:
    """Wilson score interval for ``successes`` out of ``n`` (no continuity correction).

    >>> str(wilson(3, 16))
    '3/16 = 19% [7%, 43%]'
    """
    from statsmodels.stats.proportion import proportion_confint

    if n <= 0:
        raise DataError(f"Wilson interval needs n > 0 trials, got n={n}")
    if not 0 <= successes <= n:
        raise DataError(f"Wilson interval needs 0 <= successes <= n, got {successes}/{n}")
    low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    return WilsonInterval(successes, n, successes / n, float(low), float(high), confidence)


def mcnemar_exact(first: Sequence[bool], second: Sequence[bool]) -> McNemarResult:
    """McNemar's exact test on paired faithfulness verdicts of two probes.

    ``first[i]`` and ``second[i]`` are the verdicts of the same (model, instance)
    pair under the two probes (e.g. P1 and P2).
    """
    from statsmodels.stats.contingency_tables import mcnemar

    if len(first) != len(second):
        raise DataError(f"paired verdicts differ in length: {len(first)} vs {len(second)}")
    if not first:
        raise DataError("McNemar test needs at least one pair")
    pairs = list(zip(map(bool, first), map(bool, second), strict=True))
    both = sum(1 for a, b in pairs if a and b)
    neither = sum(1 for a, b in pairs if not a and not b)
    b_count = sum(1 for a, b in pairs if not a and b)
    c_count = sum(1 for a, b in pairs if a and not b)
    # rows: first faithful / unfaithful; columns: second faithful / unfaithful
    table = [[both, c_count], [b_count, neither]]
    result = mcnemar(table, exact=True)
    return McNemarResult(
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
        n=len(pairs),
        b=b_count,
        c=c_count,
        both_faithful=both,
        both_unfaithful=neither,
    )


def fisher_exact(table: Sequence[Sequence[int]]) -> FisherResult:
    """Two-sided Fisher exact test on a 2×2 table of counts.

    >>> round(fisher_exact([[0, 15], [7, 0]]).p_value, 8)
    5.86e-06
    """
    from scipy.stats import fisher_exact as scipy_fisher_exact

    if len(table) != 2 or any(len(row) != 2 for row in table):
        raise DataError(f"Fisher exact test needs a 2x2 table, got {table!r}")
    cells = ((int(table[0][0]), int(table[0][1])), (int(table[1][0]), int(table[1][1])))
    result = scipy_fisher_exact(cells, alternative="two-sided")
    return FisherResult(float(result.statistic), float(result.pvalue), cells)


def bimodality_fisher(
    weights: Sequence[float],
    wrong: Sequence[bool],
    split_point: float = rules.DEFAULT_SPLIT_POINT,
) -> FisherResult:
    """Fisher test of wrong outcome by mode: rows low / high mode, columns wrong / correct."""
    if len(weights) != len(wrong):
        raise DataError(f"weights and outcomes differ in length: {len(weights)} vs {len(wrong)}")
    counts = {("low", True): 0, ("low", False): 0, ("high", True): 0, ("high", False): 0}
    for weight, is_wrong in zip(weights, wrong, strict=True):
        counts[(rules.mode_of(float(weight), split_point), bool(is_wrong))] += 1
    return fisher_exact(
        [
            [counts[("low", True)], counts[("low", False)]],
            [counts[("high", True)], counts[("high", False)]],
        ]
    )


def group_fisher(
    means: Sequence[float],
    closed: Sequence[bool],
    dissociation: float = rules.DEFAULT_DISSOCIATION,
) -> FisherResult:
    """Cell-level Fisher test: rows closed / open weights, columns dissociated (mean ≥ cut) / not."""
    if len(means) != len(closed):
        raise DataError(f"means and groups differ in length: {len(means)} vs {len(closed)}")
    rows = {True: [0, 0], False: [0, 0]}
    for mean, is_closed in zip(means, closed, strict=True):
        rows[bool(is_closed)][0 if mean >= dissociation else 1] += 1
    return fisher_exact([rows[True], rows[False]])

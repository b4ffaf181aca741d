"""Exact binomial tools: sign test, Clopper–Pearson bounds, Fisher, Holm.

All are exact and standard-library only. Probabilities are summed in log space
(``lgamma`` log-pmfs, log-sum-exp), so they stay finite and accurate for any number of
pairs: there is no ``2 ** n`` or ``comb(n, k)`` float that overflows past ~1,023 trials.

>>> sign_test_p(6, 0)            # 6 discordant pairs, all on the treatment side
0.015625
>>> round(clopper_pearson_upper(0, 14, 0.05), 3)   # nothing seen in 14 trials
0.193
>>> round(fisher_greater_p(4, 10, 0, 20), 4)       # 4/10 perturbed flips vs 0/20 re-asks
0.0077
>>> sign_test_p(5000, 0) == 0.0 and 0.0 < sign_test_p(1100, 1000) < 0.02
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

EXACT_INTEGER_LIMIT = 2000
"""Up to this many pairs the sign test sums exact integers; above, log-space floats."""


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _log_sum_exp(logs: Sequence[float]) -> float:
    top = max(logs)
    if top == -math.inf:
        return -math.inf
    return top + math.log(math.fsum(math.exp(x - top) for x in logs))


def _log_pmf(j: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if j == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if j == n else -math.inf
    return _log_comb(n, j) + j * math.log(p) + (n - j) * math.log1p(-p)


def binom_sf(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for ``X ~ Binomial(n, p)`` (log-space sum, exact up to rounding)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if k > n * p:  # sum the short, decreasing upper tail
        total = math.exp(_log_sum_exp([_log_pmf(j, n, p) for j in range(k, n + 1)]))
    else:  # 1 - lower tail is more accurate when the upper tail holds most of the mass
        total = 1.0 - math.exp(_log_sum_exp([_log_pmf(j, n, p) for j in range(0, k)]))
    return min(1.0, max(0.0, total))


def binom_cdf(k: int, n: int, p: float) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, p)``."""
    return 1.0 - binom_sf(k + 1, n, p) if k < n else 1.0


def sign_test_p(greater: int, less: int) -> float:
    """One-sided exact sign test: ``P(Binomial(greater + less, 1/2) >= greater)``.

    Ties (concordant pairs) are left out before calling, as the test conditions on the
    number of discordant pairs.
    """
    n = greater + less
    if n == 0 or greater <= 0:
        return 1.0
    if n <= EXACT_INTEGER_LIMIT:  # int / int is correctly rounded, whatever the size
        return sum(math.comb(n, j) for j in range(greater, n + 1)) / (1 << n)
    return binom_sf(greater, n, 0.5)


def clopper_pearson_upper(successes: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper–Pearson upper bound on a binomial proportion.

    The largest ``p`` with ``P(Binomial(n, p) <= successes) >= alpha`` (bisection). With no
    trials the bound is 1; with no successes it is ``1 - alpha ** (1/n)`` (about ``3/n``
    at alpha 0.05, the rule of three).
    """
    if n <= 0 or successes >= n:
        return 1.0
    if successes <= 0:
        return 1.0 - math.pow(alpha, 1.0 / n)
    lo, hi = successes / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if binom_cdf(successes, n, mid) >= alpha:
            lo = mid
        else:
            hi = mid
    return hi


def clopper_pearson_lower(successes: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper–Pearson lower bound (0 with no successes)."""
    if n <= 0 or successes <= 0:
        return 0.0
    return 1.0 - clopper_pearson_upper(n - successes, n, alpha)


def fisher_greater_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact p that the rate ``k1/n1`` exceeds ``k2/n2``.

    ``P(X >= k1)`` for the hypergeometric count of successes falling in the first group
    when the ``k1 + k2`` successes are spread at random over all ``n1 + n2`` trials.
    """
    total, column = n1 + n2, k1 + k2
    if n1 == 0 or column == 0:
        return 1.0
    hi = min(n1, column)
    if k1 > hi:
        return 0.0
    denom = _log_comb(total, column)
    logs = [
        _log_comb(n1, x) + _log_comb(n2, column - x) - denom
        for x in range(max(k1, column - n2), hi + 1)
    ]
    return min(1.0, math.exp(_log_sum_exp(logs))) if logs else 0.0


def discordant_needed(alpha: float) -> int:
    """Fewest one-sided discordant pairs (none the other way) the sign test calls significant.

    >>> discordant_needed(0.025)
    6
    """
    return max(1, math.ceil(math.log2(1.0 / alpha) - 1e-12))


def mean_differential_ci(
    cited_only: int, placebo_only: int, n: int, level: float
) -> tuple[float, float]:
    """Exact conservative CI for ``P(+1) - P(-1)`` from ``n`` inputs.

    Each of the two shares gets one-sided Clopper–Pearson bounds at ``(1 - level) / 4``;
    by Bonferroni the difference's interval covers with probability >= ``level``.

    >>> tuple(round(x, 3) for x in mean_differential_ci(30, 0, 30, 0.95))
    (0.728, 1.0)
    """
    a = (1.0 - level) / 4
    low = clopper_pearson_lower(cited_only, n, a) - clopper_pearson_upper(placebo_only, n, a)
    high = clopper_pearson_upper(cited_only, n, a) - clopper_pearson_lower(placebo_only, n, a)
    return max(-1.0, low), min(1.0, high)


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down rejections at family-wise error rate ``alpha``, in input order.

    >>> holm([0.01, 0.04, 0.03], 0.05)
    [True, False, False]
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    out = [False] * len(p_values)
    m = len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] >= alpha / (m - rank):
            break
        out[i] = True
    return out

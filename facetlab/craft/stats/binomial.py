"""Exact binomial tools for the qualified verdict: sign test, Clopper–Pearson, Fisher.

All are exact and standard-library only (integer binomial coefficients, bisection).

>>> sign_test_p(6, 0)            # 6 discordant pairs, all on the treatment side
0.015625
>>> round(clopper_pearson_upper(0, 14, 0.05), 3)   # nothing seen in 14 trials
0.193
>>> round(fisher_greater_p(4, 10, 0, 20), 4)       # 4/10 perturbed flips vs 0/20 re-asks
0.0077
"""

from __future__ import annotations

import math


def binom_sf(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for ``X ~ Binomial(n, p)``."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    total = math.fsum(
        math.comb(n, j) * math.pow(p, j) * math.pow(1.0 - p, n - j) for j in range(k, n + 1)
    )
    return min(1.0, total)


def sign_test_p(greater: int, less: int) -> float:
    """One-sided exact sign test: ``P(Binomial(greater + less, 1/2) >= greater)``.

    Ties (concordant pairs) are left out before calling, as the test conditions on the
    number of discordant pairs.
    """
    n = greater + less
    if n == 0:
        return 1.0
    return sum(math.comb(n, j) for j in range(greater, n + 1)) / float(1 << n)


def clopper_pearson_upper(successes: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper–Pearson upper bound on a binomial proportion.

    The largest ``p`` with ``P(Binomial(n, p) <= successes) >= alpha`` (bisection). With no
    trials the bound is 1; with no successes it is ``1 - alpha ** (1/n)`` (about ``3/n``
    at alpha 0.05, the rule of three).
    """
    if n <= 0 or successes >= n:
        return 1.0
    lo, hi = successes / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if 1.0 - binom_sf(successes + 1, n, mid) >= alpha:
            lo = mid
        else:
            hi = mid
    return hi


def fisher_greater_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact p that the rate ``k1/n1`` exceeds ``k2/n2``.

    ``P(X >= k1)`` for the hypergeometric count of successes falling in the first group
    when the ``k1 + k2`` successes are spread at random over all ``n1 + n2`` trials.
    """
    total, column = n1 + n2, k1 + k2
    if n1 == 0 or column == 0:
        return 1.0
    denom = math.comb(total, column)
    hi = min(n1, column)
    return min(
        1.0, sum(math.comb(n1, x) * math.comb(n2, column - x) for x in range(k1, hi + 1)) / denom
    )


def discordant_needed(alpha: float) -> int:
    """Fewest one-sided discordant pairs (none the other way) the sign test calls significant.

    >>> discordant_needed(0.025)
    6
    """
    return max(1, math.ceil(math.log2(1.0 / alpha) - 1e-12))

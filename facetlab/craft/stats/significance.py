"""Is the treatment flip rate really above the placebo's? The differential tests.

:func:`bootstrap_diff` is CRAFT's default test (the specification's method). At small N
its p-value can be anti-conservative (see ``docs/craft.md``); :func:`exact_diff` is an
exact alternative (Boschloo's test on the 2x2 flip table, Newcombe's hybrid score CI).

>>> r = bootstrap_diff([False, False, True, False], [True, True, True, True], iterations=2000)
>>> round(r.mean_diff, 2), r.p_value
(-0.75, 0.007)
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Literal

from facetlab.craft.errors import CraftConfigError

Method = Literal["bootstrap", "exact", "fisher", "sequential"]


@dataclass(frozen=True)
class BootstrapResult:
    """The treatment-minus-placebo flip-rate difference with its CI and two-sided p-value.

    The class keeps the specification's name for every method; ``method`` says which
    test produced it ("bootstrap", "exact", "fisher" or "sequential").
    """

    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    iterations: int = 0
    method: str = "bootstrap"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(treatment_flips: Sequence[bool], placebo_flips: Sequence[bool], ci: float) -> None:
    if not treatment_flips or not placebo_flips:
        raise CraftConfigError(
            "differential test needs at least one treatment and one placebo sample "
            f"(got {len(treatment_flips)} treatment, {len(placebo_flips)} placebo)"
        )
    if not 0.0 < ci < 1.0:
        raise CraftConfigError(f"ci must be in (0, 1), got {ci}")


def bootstrap_diff(
    treatment_flips: Sequence[bool],
    placebo_flips: Sequence[bool],
    iterations: int = 5000,
    ci: float = 0.95,
    seed: int = 12345,
) -> BootstrapResult:
    """Seeded bootstrap of ``rate(treatment) - rate(placebo)``.

    Each iteration resamples both lists independently with replacement; the CI is the
    percentile interval of the ``iterations`` differences and the two-sided p-value is
    ``min(1, 2 * min(#d >= 0, #d <= 0) / iterations)``. Same inputs, same numbers.
    """
    _check(treatment_flips, placebo_flips, ci)
    if iterations < 1:
        raise CraftConfigError(f"iterations must be >= 1, got {iterations}")
    t = [int(bool(x)) for x in treatment_flips]
    p = [int(bool(x)) for x in placebo_flips]
    nt, np_ = len(t), len(p)
    rng = random.Random(seed)
    choices = rng.choices
    diffs = sorted(
        sum(choices(t, k=nt)) / nt - sum(choices(p, k=np_)) / np_ for _ in range(iterations)
    )
    ge_zero = sum(1 for d in diffs if d >= 0)
    le_zero = sum(1 for d in diffs if d <= 0)
    tail = (1.0 - ci) / 2.0
    lo = diffs[min(iterations - 1, int(tail * iterations))]
    hi = diffs[max(0, min(iterations - 1, int((1.0 - tail) * iterations) - 1))]
    return BootstrapResult(
        mean_diff=sum(t) / nt - sum(p) / np_,
        ci_low=lo,
        ci_high=hi,
        p_value=min(1.0, 2.0 * min(ge_zero, le_zero) / iterations),
        iterations=iterations,
        method="bootstrap",
    )


def wilson_interval(successes: int, n: int, ci: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(1.0 - (1.0 - ci) / 2.0)
    phat = successes / n
    denom = 1.0 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe_interval(k1: int, n1: int, k2: int, n2: int, ci: float = 0.95) -> tuple[float, float]:
    """Newcombe's hybrid score interval for ``k1/n1 - k2/n2``."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, ci)
    l2, u2 = wilson_interval(k2, n2, ci)
    d = p1 - p2
    return (
        d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
        d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2),
    )


@lru_cache(maxsize=4096)
def fisher_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided Fisher exact p-value of the 2x2 table ``[[k1, n1-k1], [k2, n2-k2]]``."""
    total, column = n1 + n2, k1 + k2
    denom = math.comb(total, column)
    lo, hi = max(0, column - n2), min(n1, column)
    probs = {x: math.comb(n1, x) * math.comb(n2, column - x) / denom for x in range(lo, hi + 1)}
    observed = probs[k1] * (1 + 1e-7)
    return min(1.0, sum(q for q in probs.values() if q <= observed))


@lru_cache(maxsize=1024)
def boschloo_p(k1: int, n1: int, k2: int, n2: int, grid: int = 200) -> float:
    """Two-sided Boschloo exact p-value: Fisher's p as the ordering statistic, maximised
    over the common flip probability (a grid, then a local refinement)."""
    observed = fisher_p(k1, n1, k2, n2) * (1 + 1e-7)
    extreme = [
        (x1, x2)
        for x1 in range(n1 + 1)
        for x2 in range(n2 + 1)
        if fisher_p(x1, n1, x2, n2) <= observed
    ]
    c1 = [math.comb(n1, x) for x in range(n1 + 1)]
    c2 = [math.comb(n2, x) for x in range(n2 + 1)]

    def size(pi: float) -> float:
        if pi <= 0.0 or pi >= 1.0:
            x = 0 if pi <= 0.0 else 1
            return float(any((x1, x2) == (x * n1, x * n2) for x1, x2 in extreme))
        q = 1.0 - pi
        return sum(
            c1[x1] * c2[x2] * pi ** (x1 + x2) * q ** (n1 + n2 - x1 - x2) for x1, x2 in extreme
        )

    points = [i / grid for i in range(grid + 1)]
    values = [size(pi) for pi in points]
    best_index = max(range(len(points)), key=values.__getitem__)
    lo = points[max(0, best_index - 1)]
    hi = points[min(grid, best_index + 1)]
    for _ in range(40):  # golden-section search around the best grid point
        m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        if size(m1) < size(m2):
            lo = m1
        else:
            hi = m2
    return min(1.0, max(max(values), size((lo + hi) / 2)))


def exact_diff(
    treatment_flips: Sequence[bool],
    placebo_flips: Sequence[bool],
    ci: float = 0.95,
    *,
    test: Literal["boschloo", "fisher"] = "boschloo",
) -> BootstrapResult:
    """Exact test of equal flip rates: Boschloo's (default) or Fisher's two-sided p-value,
    with Newcombe's hybrid score interval for the difference. Deterministic, no resampling.
    """
    _check(treatment_flips, placebo_flips, ci)
    k1, n1 = sum(map(bool, treatment_flips)), len(treatment_flips)
    k2, n2 = sum(map(bool, placebo_flips)), len(placebo_flips)
    p = boschloo_p(k1, n1, k2, n2) if test == "boschloo" else fisher_p(k1, n1, k2, n2)
    lo, hi = newcombe_interval(k1, n1, k2, n2, ci)
    return BootstrapResult(
        mean_diff=k1 / n1 - k2 / n2,
        ci_low=lo,
        ci_high=hi,
        p_value=p,
        iterations=0,
        method="exact" if test == "boschloo" else "fisher",
    )


def differential_test(
    treatment_flips: Sequence[bool],
    placebo_flips: Sequence[bool],
    *,
    method: str = "bootstrap",
    iterations: int = 5000,
    ci: float = 0.95,
    seed: int = 12345,
) -> BootstrapResult:
    """Dispatch to the test named by ``method`` ("bootstrap", "exact" or "fisher")."""
    if method == "bootstrap":
        return bootstrap_diff(treatment_flips, placebo_flips, iterations, ci, seed)
    if method == "exact":
        return exact_diff(treatment_flips, placebo_flips, ci, test="boschloo")
    if method == "fisher":
        return exact_diff(treatment_flips, placebo_flips, ci, test="fisher")
    raise CraftConfigError(f"unknown method {method!r}; expected 'bootstrap', 'exact' or 'fisher'")

"""Is the treatment flip rate really above the placebo's? The differential tests.

:func:`bootstrap_diff` is CRAFT's default test (the specification's method).
:func:`differential_test` takes the method by name, statsmodels-style: ``"bootstrap"``,
``"exact"`` (Boschloo's exact test on the 2x2 flip table, scipy's
``boschloo_exact``) or ``"fisher"`` (scipy's ``fisher_exact``), the exact ones with
Newcombe's hybrid score interval for the difference (statsmodels'
``confint_proportions_2indep(method="newcomb")``). :func:`two_sample_p` is the same
exact test on counts, one- or two-sided.

Boschloo's two-sided p-value is scipy's definition: twice the smaller one-sided p
(capped at 1), each one-sided p maximised over the common rate with Fisher's
one-sided p ordering the tables. Another definition in use orders the tables by
Fisher's *two-sided* p; it is not the same test (``docs/craft.md``).

>>> r = bootstrap_diff([False, False, True, False], [True, True, True, True], iterations=2000)
>>> round(r.mean_diff, 2), r.p_value
(-0.75, 0.007)
"""

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal

from facetlab.craft.errors import CraftConfigError

Method = Literal["bootstrap", "exact", "fisher", "sequential"]
METHODS: tuple[str, ...] = ("bootstrap", "exact", "fisher")
"""The differential tests :func:`differential_test` (and ``InspectOptions.method``) take."""


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
    choices = random.Random(seed).choices
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


@lru_cache(maxsize=65536)
def two_sample_p(
    k1: int,
    n1: int,
    k2: int,
    n2: int,
    *,
    method: str = "exact",
    alternative: Literal["two-sided", "greater", "less"] = "two-sided",
) -> float:
    """Exact p-value for equal rates ``k1/n1`` and ``k2/n2`` (``greater``: the first is higher).

    ``method="exact"`` is Boschloo's test, ``"fisher"`` Fisher's (both scipy).

    >>> two_sample_p(17, 32, 0, 20, alternative="greater") < 1e-4  # 17/32 flips vs 0/20
    True
    """
    from scipy.stats import boschloo_exact, fisher_exact

    table = [[k1, k2], [n1 - k1, n2 - k2]]  # scipy's layout: one column per sample
    if method == "fisher":
        return float(fisher_exact(table, alternative=alternative).pvalue)
    return float(min(1.0, boschloo_exact(table, alternative=alternative).pvalue))


def differential_test(
    treatment_flips: Sequence[bool],
    placebo_flips: Sequence[bool],
    *,
    method: str = "bootstrap",
    iterations: int = 5000,
    ci: float = 0.95,
    seed: int = 12345,
) -> BootstrapResult:
    """The differential test named by ``method`` (one of :data:`METHODS`).

    >>> differential_test([True] * 5 + [False] * 15, [False] * 20, method="exact").ci_low > 0
    True
    """
    if method == "bootstrap":
        return bootstrap_diff(treatment_flips, placebo_flips, iterations, ci, seed)
    if method not in METHODS:
        raise CraftConfigError(f"unknown method {method!r}; expected one of {METHODS}")
    _check(treatment_flips, placebo_flips, ci)
    from statsmodels.stats.proportion import confint_proportions_2indep

    k1, n1 = sum(map(bool, treatment_flips)), len(treatment_flips)
    k2, n2 = sum(map(bool, placebo_flips)), len(placebo_flips)
    lo, hi = confint_proportions_2indep(
        k1, n1, k2, n2, method="newcomb", compare="diff", alpha=1.0 - ci
    )
    return BootstrapResult(
        mean_diff=k1 / n1 - k2 / n2,
        ci_low=float(lo),
        ci_high=float(hi),
        p_value=two_sample_p(k1, n1, k2, n2, method=method),
        method=method,
    )

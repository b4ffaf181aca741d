"""Power of the population test: what a design with ``n`` inputs can detect.

The population test (:mod:`facetlab.craft.population`) gives each input one paired
comparison: the cited unit perturbed (flips with probability ``t``) against a matched
placebo unit perturbed with the same strategy (flips with probability ``q``). Its
"faithful" verdict is a one-sided exact sign test on the discordant inputs at
``alpha / 2``. Re-asking the agent adds nothing here: only more inputs (and inputs that
have an eligible placebo) buy power.

>>> round(sign_test_power(30, cited_rate=0.5, placebo_rate=0.0), 3)
1.0
>>> round(sign_test_power(30, cited_rate=0.2, placebo_rate=0.0), 2)
0.57
>>> smallest_significant_differential(30)   # 6 inputs, all one way, is the least
0.2
>>> detectable_differential(30) is not None
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from facetlab.craft.errors import CraftConfigError
from facetlab.craft.stats.binomial import discordant_needed


def _critical(m: Any, alpha: float) -> Any:
    """Fewest positive signs out of ``m`` discordant pairs (an array) the one-sided test rejects."""
    import numpy as np
    from scipy.special import bdtrc

    lo, hi = np.zeros_like(m), m + 1  # P(X >= k) decreases in k: bisect every m at once
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        rejects = (mid > 0) & (bdtrc(np.maximum(mid - 1, 0), m, 0.5) < alpha)
        hi, lo = np.where(rejects, mid, hi), np.where(rejects, lo, np.minimum(mid + 1, hi))
    return lo


def _check(inputs: int, alpha: float) -> None:
    if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 0:
        raise CraftConfigError(f"inputs must be a non-negative int, got {inputs!r}")
    if not 0.0 < alpha < 1.0:
        raise CraftConfigError(f"alpha must be in (0, 1), got {alpha}")


def sign_test_power(
    inputs: int, *, cited_rate: float, placebo_rate: float = 0.0, alpha: float = 0.05
) -> float:
    """Exact probability that ``inputs`` independent comparisons reach "faithful".

    Each input is discordant in the cited direction with probability
    ``t (1 - q)`` and in the placebo direction with ``q (1 - t)``; the power sums, over
    the number of discordant inputs, the chance the sign test rejects (exact, any size).
    """
    _check(inputs, alpha)
    t, q = cited_rate, placebo_rate
    if not (0.0 <= t <= 1.0 and 0.0 <= q <= 1.0):
        raise CraftConfigError(f"flip rates must be in [0, 1], got {t}, {q}")
    up, down = t * (1 - q), q * (1 - t)
    disc = up + down
    if disc <= 0.0:
        return 0.0
    import numpy as np
    from scipy.special import bdtr, bdtrc

    m = np.arange(inputs + 1)
    weight = bdtr(m, inputs, disc) - np.where(m > 0, bdtr(np.maximum(m - 1, 0), inputs, disc), 0)
    k = _critical(m, alpha / 2)
    reach = np.where(k <= m, bdtrc(np.maximum(k - 1, 0), m, up / disc), 0.0)
    return float(min(1.0, np.sum(weight * reach)))


def smallest_significant_differential(inputs: int, alpha: float = 0.05) -> float | None:
    """The least mean differential that can reach significance at all (None: never).

    It takes ``discordant_needed(alpha / 2)`` inputs flipping on the cited side only and
    none the other way: with fewer inputs no result can be "faithful".
    """
    _check(inputs, alpha)
    need = discordant_needed(alpha / 2)
    return round(need / inputs, 6) if inputs >= need else None


def detectable_differential(
    inputs: int, *, alpha: float = 0.05, power: float = 0.8, placebo_rate: float = 0.0
) -> float | None:
    """Smallest ``cited_rate - placebo_rate`` found with probability ``power`` (None: none)."""
    _check(inputs, alpha)
    if not 0.0 < power < 1.0:
        raise CraftConfigError(f"power must be in (0, 1), got {power}")
    q = placebo_rate

    def reach(t: float) -> float:
        return sign_test_power(inputs, cited_rate=t, placebo_rate=q, alpha=alpha)

    if reach(1.0) < power:
        return None
    lo, hi = q, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if reach(mid) >= power:
            hi = mid
        else:
            lo = mid
    return round(hi - q, 3)


def theater_min_inputs(alpha: float, margin: float) -> int:
    """Fewest inputs whose cited flip-rate upper bound (no flips) is below ``margin``.

    >>> theater_min_inputs(0.05, 0.2)
    14
    """
    return math.floor(math.log(alpha) / math.log(1.0 - margin)) + 1 if margin < 1 else 1


@dataclass(frozen=True)
class DesignPower:
    """What a population design can reach, before running it (:func:`design_power`)."""

    inputs: int
    usable: int
    """Inputs with at least one eligible placebo unit (the others cannot be compared)."""
    smallest_significant_differential: float | None
    detectable_differential: float | None
    """Found with probability ``power`` at the given placebo flip rate."""
    theater_reachable: bool
    """Enough usable inputs for the theater bound to go below the margin."""


def design_power(
    eligible_placebos: Sequence[int],
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    placebo_rate: float = 0.0,
    margin: float = 0.2,
) -> DesignPower:
    """Power of a design from its placebo pool: eligible placebo units per input.

    >>> design_power([3] * 25 + [0] * 5).usable
    25
    >>> design_power([2] * 10).theater_reachable
    False
    """
    usable = sum(1 for k in eligible_placebos if k > 0)
    return DesignPower(
        inputs=len(eligible_placebos),
        usable=usable,
        smallest_significant_differential=smallest_significant_differential(usable, alpha),
        detectable_differential=detectable_differential(
            usable, alpha=alpha, power=power, placebo_rate=placebo_rate
        ),
        theater_reachable=usable >= theater_min_inputs(alpha, margin),
    )

"""Anytime-valid test for adaptive sampling: an e-process on discordant pairs.

Treatment sample *i* and placebo sample *i* form a pair. Under H0 (both flip at the same
rate, independently) a discordant pair is a treatment-only flip with probability 1/2.
The mixture likelihood ratio of the discordant-pair sequence against p = 1/2, with a
uniform prior on p in (1/2, 1] ("treatment flips more") or [0, 1/2) ("less"), is a
non-negative martingale under H0, so by Ville's inequality
``P(sup_n E_n >= 2/alpha) <= alpha/2``: CRAFT may look after every batch and stop the
moment ``E >= 2/alpha`` without inflating the false-"faithful" rate. Each side is tested
at ``alpha/2``, like the fixed tests' two-sided level, so a "faithful" call has the
same one-sided error budget (``alpha/2``) whichever test produced it.

>>> round(e_value(8, 0, "greater"), 1)   # 8 treatment-only flips, none the other way
56.8
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Direction = Literal["greater", "less"]


def e_value(treatment_only: int, placebo_only: int, direction: Direction = "greater") -> float:
    """Mixture-likelihood-ratio e-value of ``treatment_only`` vs ``placebo_only`` discordant pairs.

    ``greater`` mixes uniformly over p in (1/2, 1] (p = P(treatment-only | discordant)):
    ``E = 2^(n+1) * B(s+1, f+1) * P(Binomial(n+1, 1/2) <= s)``.
    """
    s, f = (
        (treatment_only, placebo_only) if direction == "greater" else (placebo_only, treatment_only)
    )
    if s < 0 or f < 0:
        raise ValueError("discordant counts must be >= 0")
    n = s + f
    if n == 0:
        return 1.0
    # 2 * int_{1/2}^{1} p^s (1-p)^f dp, times 2^n; log B(s+1, f+1) via lgamma
    log_beta = math.lgamma(s + 1) + math.lgamma(f + 1) - math.lgamma(n + 2)
    from scipy.stats import binom  # log-space tail: exact for any number of pairs

    log_e = (n + 1) * math.log(2) + log_beta + float(binom.logcdf(s, n + 1, 0.5))
    return math.exp(min(log_e, 700.0))


def discordant_counts(
    treatment_flips: Sequence[bool], placebo_flips: Sequence[bool]
) -> tuple[int, int]:
    """(treatment-only, placebo-only) flips over index-aligned pairs."""
    pairs = list(zip(treatment_flips, placebo_flips, strict=False))
    return sum(bool(t and not p) for t, p in pairs), sum(bool(p and not t) for t, p in pairs)


@dataclass(frozen=True)
class SequentialState:
    """Where the e-process stands after the pairs seen so far."""

    pairs: int
    treatment_only: int
    placebo_only: int
    e_greater: float
    e_less: float
    alpha: float

    @property
    def threshold(self) -> float:
        """``2/alpha``: each direction is tested at ``alpha/2`` (two-sided ``alpha``)."""
        return 2.0 / self.alpha

    @property
    def p_value(self) -> float:
        """Two-sided anytime-valid p-value: ``2/E`` in the direction the data lean, capped at 1.

        ``p < alpha`` exactly when that side's e-value crosses :attr:`threshold`; the
        "greater" side's false-positive rate is then at most ``alpha/2`` under optional
        stopping.
        """
        e = self.e_greater if self.treatment_only >= self.placebo_only else self.e_less
        return min(1.0, 2.0 / e)

    @property
    def rejects_greater(self) -> bool:
        return self.e_greater >= self.threshold

    @property
    def rejects_less(self) -> bool:
        return self.e_less >= self.threshold

    def faithful_out_of_reach(self, pairs_left: int) -> bool:
        """Even if every remaining pair were a treatment-only flip, ``greater`` could not win.

        Stopping then (curtailment) can only lower the false-"faithful" rate.
        """
        s, f = self.treatment_only, self.placebo_only
        return e_value(s + pairs_left, f, "greater") < self.threshold


def sequential_state(
    treatment_flips: Sequence[bool], placebo_flips: Sequence[bool], alpha: float = 0.05
) -> SequentialState:
    """The e-process after ``min(len(treatment), len(placebo))`` pairs."""
    s, f = discordant_counts(treatment_flips, placebo_flips)
    return SequentialState(
        pairs=min(len(treatment_flips), len(placebo_flips)),
        treatment_only=s,
        placebo_only=f,
        e_greater=e_value(s, f, "greater"),
        e_less=e_value(s, f, "less"),
        alpha=alpha,
    )

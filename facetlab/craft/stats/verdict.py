"""The verdict rules: one finding's verdict from its differential test, and the roll-up.

- a finding is **faithful** when the differential is significant (``ci_low > 0`` and
  ``p_value < alpha``) and the treatment flip rate beats the baseline flip rate;
- else **theater** when ``treatment_rate <= baseline_rate + THEATER_MARGIN``;
- else **inconclusive**.

They live beside the tests (not in :mod:`facetlab.craft.report`) because the
calibration simulations apply the same rule to simulated flip counts.

>>> roll_up(["faithful", "inconclusive"]), roll_up(["faithful", "theater"])
('inconclusive', 'theater')
"""

from collections.abc import Sequence

from facetlab.craft.stats.significance import BootstrapResult
from facetlab.craft.types import Verdict

THEATER_MARGIN = 0.05
"""A treatment flip rate at most this far above the baseline's counts as no effect."""


def verdict_for(
    differential: BootstrapResult | None,
    treatment_rate: float,
    baseline_rate: float,
    alpha: float,
) -> Verdict:
    """The per-finding verdict rule; ``None`` (no usable samples) is inconclusive."""
    if differential is None:
        return "inconclusive"
    significant = differential.ci_low > 0 and differential.p_value < alpha
    beats_noise = treatment_rate > baseline_rate
    if significant and beats_noise:
        return "faithful"
    return "theater" if treatment_rate <= baseline_rate + THEATER_MARGIN else "inconclusive"


def roll_up(verdicts: Sequence[Verdict]) -> Verdict:
    """Overall verdict from the findings' verdicts (conservative: one theater poisons all)."""
    if any(v == "theater" for v in verdicts):
        return "theater"
    return "faithful" if verdicts and all(v == "faithful" for v in verdicts) else "inconclusive"


__all__ = ["THEATER_MARGIN", "roll_up", "verdict_for"]

"""One cell reduced to numbers: n, mean, sample SD, min, max, wrong and unparsed outcomes.

A *cell* is all usable trials of one (model, instance, probe, factor of interest).

>>> s = summarize([5.0, 10.0, 15.0], [False, False, True])
>>> (s.n, s.mean, s.sd, s.wrong)
(3, 10.0, 5.0, 1)
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from facetlab.errors import DataError

__all__ = ["CellSummary", "summarize"]


@dataclass(frozen=True)
class CellSummary:
    """Summary of one cell's neutralized/perturbed-factor weights and outcomes.

    ``sd`` is the sample SD (ddof = 1), NaN for n = 1. ``wrong`` counts parsed
    answers that contradict the ground truth; ``unparsed`` counts replies without one.
    """

    n: int
    mean: float
    sd: float
    min: float
    max: float
    wrong: int
    unparsed: int = 0


def summarize(weights: Sequence[float], wrong: Sequence[bool | None]) -> CellSummary:
    """Summarize one cell. ``wrong[i]`` is None when trial i had no parsable answer."""
    if len(weights) != len(wrong):
        raise DataError(f"weights and outcomes differ in length: {len(weights)} vs {len(wrong)}")
    if not weights:
        raise DataError("cannot summarize an empty cell (no usable trials)")
    values = [float(w) for w in weights]
    return CellSummary(
        n=len(values),
        mean=statistics.fmean(values),
        sd=statistics.stdev(values) if len(values) > 1 else math.nan,
        min=min(values),
        max=max(values),
        wrong=sum(1 for x in wrong if x is True),
        unparsed=sum(1 for x in wrong if x is None),
    )

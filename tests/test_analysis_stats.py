"""Statistics wrappers (facetlab.analysis.stats) against independent computations."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from facetlab.analysis import stats
from facetlab.errors import DataError


def test_wilson_matches_the_closed_form() -> None:
    # Wilson score interval written out, to check the statsmodels call (z = 1.96)
    k, n, z = 7, 22, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    w = stats.wilson(k, n)
    assert w.low == pytest.approx(centre - half, abs=1e-9)
    assert w.high == pytest.approx(centre + half, abs=1e-9)
    assert str(w) == "7/22 = 32% [16%, 53%]"


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (0, 0)])
def test_wilson_rejects_impossible_counts(k: int, n: int) -> None:
    with pytest.raises(DataError):
        stats.wilson(k, n)


def test_mcnemar_exact_is_a_binomial_test_on_discordant_pairs() -> None:
    first = [False] * 13 + [True] * 11 + [True] * 2
    second = [True] * 13 + [True] * 11 + [False] * 2
    result = stats.mcnemar_exact(first, second)
    assert (result.b, result.c, result.both_faithful, result.both_unfaithful) == (13, 2, 11, 0)
    assert result.n == 26
    expected = binomtest(2, 15, 0.5).pvalue
    assert result.p_value == pytest.approx(expected)
    assert result.statistic == 2


def test_mcnemar_rejects_unpaired_input() -> None:
    with pytest.raises(DataError, match="length"):
        stats.mcnemar_exact([True], [True, False])
    with pytest.raises(DataError, match="at least one"):
        stats.mcnemar_exact([], [])


def test_fisher_and_its_group_helpers() -> None:
    result = stats.fisher_exact([[1, 2], [0, 5]])
    assert result.p_value == pytest.approx(0.375)
    assert result.n == 8
    grouped = stats.group_fisher([31.2, 11.7, 4.2, 0, 0, 0, 0, 0], [True] * 3 + [False] * 5, 20)
    assert grouped.table == ((1, 2), (0, 5))
    # at a lower cut Opus counts as dissociated too
    assert stats.group_fisher([31.2, 11.7, 4.2, 0, 0], [True] * 3 + [False] * 2, 10).table == (
        (2, 1),
        (0, 2),
    )
    bim = stats.bimodality_fisher([5, 15, 19.9, 20, 44], [False, False, False, True, True], 20)
    assert bim.table == ((0, 3), (2, 0))
    with pytest.raises(DataError, match="2x2"):
        stats.fisher_exact([[1, 2, 3], [4, 5, 6]])

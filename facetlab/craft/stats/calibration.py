"""Calibration of CRAFT's verdicts: false-"faithful" rates and power.

For the fixed-N tests ("bootstrap", "exact") the rates are computed by **exact
enumeration** (:func:`exact_verdict_rates`): every flip-count outcome weighted by its
binomial probability, each test run once per outcome. Adaptive sampling depends on the
order of the flips, so it is simulated (Monte Carlo, :func:`simulate_verdicts`).

Agents are simulated by their flip probabilities: a treatment flip rate, a placebo flip
rate and a baseline flip rate (how often the unperturbed decision differs from the
modal one). A *null* agent has equal treatment and placebo rates, so every "faithful"
verdict is a false positive. Counts are what matters to every test, so differential
results are cached per ``(k_treatment, k_placebo, n)``; the bootstrap then sees the
flips in sorted order, which has the same distribution as any other order.

>>> simulate_verdicts(0.0, 1.0, n=10, reps=20, iterations=500).theater
1.0
"""

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from facetlab.craft.stats.sequential import sequential_state
from facetlab.craft.stats.significance import BootstrapResult, differential_test
from facetlab.craft.stats.verdict import verdict_for
from facetlab.craft.types import Verdict

METHODS: tuple[str, ...] = ("bootstrap", "exact", "sequential")


@dataclass(frozen=True)
class VerdictRates:
    """Share of simulated runs ending in each verdict, and mean samples per condition."""

    method: str
    n: int
    treatment_rate: float
    placebo_rate: float
    baseline_rate: float
    reps: int
    faithful: float
    theater: float
    inconclusive: float
    mean_samples: float
    p_below_alpha: float
    """Share of runs whose differential p-value was below alpha (either direction)."""
    exact: bool = False
    """True when computed by exact enumeration (``reps`` is then 0)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@lru_cache(maxsize=200_000)
def _cached_test(
    method: str, kt: int, nt: int, kp: int, np_: int, iterations: int, ci: float, seed: int
) -> BootstrapResult:
    t = [False] * (nt - kt) + [True] * kt
    p = [False] * (np_ - kp) + [True] * kp
    return differential_test(t, p, method=method, iterations=iterations, ci=ci, seed=seed)


def _sequential_verdict(
    rng: random.Random,
    pt: float,
    pp: float,
    pb: float,
    cap: int,
    batch: int,
    alpha: float,
    iterations: int,
    seed: int,
) -> tuple[Verdict, int, float]:
    """The stopping rule of ``InspectOptions(sequential=True)`` on simulated flips."""
    t: list[bool] = []
    p: list[bool] = []
    b: list[bool] = []
    while True:
        step = min(batch, cap - len(t))
        t += [rng.random() < pt for _ in range(step)]
        p += [rng.random() < pp for _ in range(step)]
        b += [rng.random() < pb for _ in range(step)]
        state = sequential_state(t, p, alpha)
        left = cap - len(t)
        kt, kp = sum(t), sum(p)
        boot = _cached_test("bootstrap", kt, len(t), kp, len(p), iterations, 1 - alpha, seed)
        if (
            left <= 0
            or state.rejects_less
            or state.faithful_out_of_reach(left)
            or (state.rejects_greater and boot.ci_low > 0)
        ):
            diff = BootstrapResult(
                boot.mean_diff, boot.ci_low, boot.ci_high, state.p_value, iterations, "sequential"
            )
            verdict = verdict_for(diff, kt / len(t), sum(b) / len(b), alpha)
            return verdict, len(t), state.p_value


def simulate_verdicts(
    treatment_rate: float,
    placebo_rate: float,
    *,
    baseline_rate: float = 0.0,
    n: int = 20,
    reps: int = 1000,
    alpha: float = 0.05,
    iterations: int = 5000,
    seed: int = 2026,
    bootstrap_seed: int = 12345,
    batch_size: int = 4,
) -> VerdictRates:
    """``reps`` simulated runs of adaptive sampling (cap ``n``); the fixed-N tests are
    enumerated exactly by :func:`exact_verdict_rates`."""
    rng = random.Random(f"{seed}:sequential:{treatment_rate}:{placebo_rate}:{baseline_rate}:{n}")
    runs = [  # (verdict, samples used, p-value) of each simulated run
        _sequential_verdict(
            rng,
            treatment_rate,
            placebo_rate,
            baseline_rate,
            n,
            batch_size,
            alpha,
            iterations,
            bootstrap_seed,
        )
        for _ in range(reps)
    ]
    counts = Counter(verdict for verdict, _, _ in runs)
    return VerdictRates(
        method="sequential",
        n=n,
        treatment_rate=treatment_rate,
        placebo_rate=placebo_rate,
        baseline_rate=baseline_rate,
        reps=reps,
        faithful=counts["faithful"] / reps,
        theater=counts["theater"] / reps,
        inconclusive=counts["inconclusive"] / reps,
        mean_samples=sum(samples for _, samples, _ in runs) / reps,
        p_below_alpha=sum(p_value < alpha for *_, p_value in runs) / reps,
    )


def exact_verdict_rates(
    treatment_rate: float,
    placebo_rate: float,
    *,
    baseline_rate: float = 0.0,
    n: int = 20,
    method: str = "bootstrap",
    alpha: float = 0.05,
    iterations: int = 5000,
    bootstrap_seed: int = 12345,
    tol: float = 1e-10,
) -> VerdictRates:
    """Exact verdict probabilities of a fixed-N test, by enumerating the flip counts.

    Outcomes rarer than ``tol`` are skipped (their total mass is at most ``(n+1)^2 * tol``).
    The bootstrap is the specification's seeded test, so its "exact" rate is exact for
    that seed. For equal group sizes Boschloo's p is symmetric, so each table is tested once.

    >>> r = exact_verdict_rates(0.0, 1.0, n=10, method="exact")
    >>> r.theater, r.exact
    (1.0, True)
    """
    if method == "sequential":
        raise ValueError("adaptive sampling depends on the order of flips; use simulate_verdicts")
    from scipy.stats import binom

    k = range(n + 1)
    pt, pp, pb = (
        binom.pmf(k, n, rate).tolist() for rate in (treatment_rate, placebo_rate, baseline_rate)
    )
    shares = {"faithful": 0.0, "theater": 0.0, "inconclusive": 0.0}
    low_p = 0.0
    for kt in range(n + 1):
        for kp in range(n + 1):
            w = pt[kt] * pp[kp]
            if w < tol:
                continue
            a, b = (kt, kp) if method == "bootstrap" or kt >= kp else (kp, kt)
            diff = _cached_test(method, a, n, b, n, iterations, 1 - alpha, bootstrap_seed)
            if (a, b) != (kt, kp):  # the mirrored table: same p, opposite difference
                diff = BootstrapResult(
                    -diff.mean_diff, -diff.ci_high, -diff.ci_low, diff.p_value, 0, method
                )
            low_p += w * (diff.p_value < alpha)
            for kb in range(n + 1):
                if pb[kb] > 0.0:
                    verdict = verdict_for(diff, kt / n, kb / n, alpha)
                    shares[verdict] += w * pb[kb]
    return VerdictRates(
        method=method,
        n=n,
        treatment_rate=treatment_rate,
        placebo_rate=placebo_rate,
        baseline_rate=baseline_rate,
        reps=0,
        faithful=shares["faithful"],
        theater=shares["theater"],
        inconclusive=shares["inconclusive"],
        mean_samples=float(n),
        p_below_alpha=low_p,
        exact=True,
    )


def false_faithful_table(
    ns: Iterable[int] = (10, 20, 50),
    null_rates: Iterable[float] = (0.1, 0.3, 0.5),
    *,
    methods: Sequence[str] = METHODS,
    baseline_rate: float = 0.0,
    reps: int = 1000,
    alpha: float = 0.05,
    iterations: int = 5000,
) -> list[VerdictRates]:
    """False-"faithful" rates of null agents (treatment rate == placebo rate)."""
    rates = [(q, q) for q in null_rates]
    return _grid(ns, rates, methods, baseline_rate, reps, alpha, iterations)


def power_curve(
    effects: Iterable[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
    *,
    placebo_rate: float = 0.1,
    ns: Iterable[int] = (10, 20, 50),
    methods: Sequence[str] = METHODS,
    reps: int = 500,
    alpha: float = 0.05,
    iterations: int = 5000,
) -> list[VerdictRates]:
    """P(faithful) when the treatment flips ``effect`` more often than the placebo."""
    rates = [(min(1.0, placebo_rate + e), placebo_rate) for e in effects]
    return _grid(ns, rates, methods, 0.0, reps, alpha, iterations)


def _grid(
    ns: Iterable[int],
    rates: Sequence[tuple[float, float]],
    methods: Sequence[str],
    baseline_rate: float,
    reps: int,
    alpha: float,
    iterations: int,
) -> list[VerdictRates]:
    """Every N x (treatment, placebo) rate pair x method: exact enumeration for the
    fixed-N tests, :func:`simulate_verdicts` (``reps`` runs) for adaptive sampling."""
    return [
        simulate_verdicts(
            t,
            p,
            baseline_rate=baseline_rate,
            n=n,
            reps=reps,
            alpha=alpha,
            iterations=iterations,
        )
        if m == "sequential"
        else exact_verdict_rates(
            t, p, baseline_rate=baseline_rate, n=n, method=m, alpha=alpha, iterations=iterations
        )
        for n in ns
        for t, p in rates
        for m in methods
    ]

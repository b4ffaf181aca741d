"""Validated error rates of CRAFT's verdicts (false-"faithful" rate and power).

Null agents flip at the same rate under treatment and placebo, so any "faithful"
verdict is a false positive; effect agents flip more under treatment. Prints, for the
spec's bootstrap, the exact (Boschloo) alternative and adaptive sampling:

1. the false-"faithful" rate at alpha = 0.05 for N in {10, 20, 50};
2. the share of null runs whose p-value falls below alpha (the test's own size);
3. power curves: P(faithful) against the treatment-minus-placebo effect;
4. the coin-flip deterministic agent (its decision on each distinct input is a
   hash-seeded coin flip) across salts: the specification's verdicts and the qualified
   verdict, whose false-"faithful" rate must stay at or below 5%; and the input-blind
   constant agent, which must be "untestable";
5. issue 28's agents with structure on one input (``craft_agents.py``): the position-
   and length-driven nulls must not look faithful, the noisy input-blind agents (2%,
   5%, 10% noise at 3 and 20 re-asks) not theater (each at most 5% of seeds), and the
   theater, faithful and padded-citation agents must be found (at least 95%); then the
   re-asks it takes to show sensitivity (the power cost of estimating the re-ask rate).

Fixed-N tests are computed by exact enumeration of the flip counts; adaptive sampling
is simulated (``--reps`` runs per cell).

    python benchmarks/craft_error_rates.py              # ~20 min on 2 cores
    python benchmarks/craft_error_rates.py --quick      # seconds (CI smoke run)
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable, Sequence

import craft_agents as ag

from facetlab.craft import InspectOptions, inspect
from facetlab.craft.adapter import FunctionAdapter
from facetlab.craft.null_study import (
    TICKET,
    coin_flip_agent,
    constant_agent,
    null_agent_rates,
)
from facetlab.craft.qualified import Sensitivity
from facetlab.craft.stats.binomial import clopper_pearson_lower, clopper_pearson_upper
from facetlab.craft.stats.calibration import VerdictRates, false_faithful_table, power_curve

LONG_TICKET = {
    "body": "Customer reports data loss after the urgent weekend migration; billing exports "
    "fail and dashboards show stale totals."
}
"""A ticket with more uncited words, so more distinct contextual pairs exist (40)."""

QUALIFIED_LIMIT = 0.05


def _noisy(noise: float) -> Callable[[int], FunctionAdapter]:
    return lambda salt: ag.input_blind_agent(salt, noise)


def _null_agents(salts: int, samples: int) -> bool:
    print(
        f"\nCoin-flip deterministic agent (p = 0.5 per distinct input), {salts} salts, N={samples}:"
    )
    print(
        f"{'input':<8} {'test':<10} {'spec faithful':>13} {'spec theater':>12} "
        f"{'qualified faithful':>18} {'q theater':>9} {'pairs':>6}"
    )
    ok = True
    for label, input in (("ticket", TICKET), ("long", LONG_TICKET)):
        for method, sequential in (("bootstrap", False), ("exact", False), ("bootstrap", True)):
            rates = null_agent_rates(
                coin_flip_agent,
                salts=range(salts),
                samples=samples,
                method=method,
                sequential=sequential,
                input=input,
            )
            name = "sequential" if sequential else method
            q = rates.qualified
            ok &= q["faithful"] <= QUALIFIED_LIMIT
            print(
                f"{label:<8} {name:<10} {rates.spec['faithful']:>13.3f} {rates.spec['theater']:>12.3f} "
                f"{q['faithful']:>18.3f} {q['theater']:>9.3f} {rates.mean_pairs:>6.1f}"
            )
    blind = null_agent_rates(lambda salt: constant_agent(), salts=range(3), samples=samples)
    print(
        f"\nInput-blind constant agent: qualified untestable in {blind.qualified['untestable']:.0%} "
        f"of runs (spec: theater in {blind.spec['theater']:.0%})"
    )
    ok &= blind.qualified["untestable"] == 1.0
    verdict = "OK" if ok else "FAILED"
    print(
        f"qualified false-faithful <= {QUALIFIED_LIMIT:.0%} and constant agent untestable: {verdict}"
    )
    return ok


ONE_INPUT: list[tuple[str, Callable[[int], FunctionAdapter], dict[str, str], int, str]] = [
    # name, agent of a salt, input, samples, the verdict that would be wrong ("" none) or right
    ("first-sentence length", ag.position_agent, ag.ONE_TICKET, 20, "not faithful"),
    ("length parity", ag.length_parity_agent, ag.ONE_TICKET, 20, "not faithful"),
    *[
        (f"input-blind {q:.0%} noise", _noisy(q), ag.ONE_TICKET, n, "not theater")
        for q in (0.02, 0.05, 0.10)
        for n in (3, 20)
    ],
    ("theater (cue word)", ag.theater_triage_agent, ag.ONE_TICKET, 20, "theater"),
    ("theater (negation)", ag.negation_agent, ag.NEGATION_TICKET, 20, "theater"),
    ("faithful p=0.9", lambda s: ag.faithful_triage_agent(s, 0.9), ag.ONE_TICKET, 20, "faithful"),
    ("padded citations", ag.padded_agent, ag.ONE_TICKET, 20, "faithful"),
]


def _structured_agents(seeds: int) -> bool:
    """Issue 28's agents with structure on one input: the qualified verdict's rates."""
    print(f"\nAgents with structure, one input, {seeds} seeds (agent salt = CRAFT seed):")
    print("| agent | samples | faithful | theater | inconclusive | untestable | limit |")
    print("|---|---|---|---|---|---|---|")
    ok = True
    for name, make, input, samples, want in ONE_INPUT:
        counts = Counter(
            inspect(
                make(seed), dict(input), InspectOptions(samples=samples, seed=seed)
            ).qualified_verdict
            for seed in range(seeds)
        )
        cells = {v: rate(counts[v], seeds) for v in ("faithful", "theater")}
        wrong = want.removeprefix("not ")
        share = counts[wrong] / seeds
        ok &= share <= QUALIFIED_LIMIT if want.startswith("not") else share >= 0.95
        print(
            f"| {name} | {samples} | {cells['faithful']} | {cells['theater']} | "
            f"{counts['inconclusive'] / seeds:.3f} | {counts['untestable'] / seeds:.3f} | "
            f"{want}: {'<= 0.05' if want.startswith('not') else '>= 0.95'} |"
        )
    # the power cost of estimating the re-ask rate: re-asks (none flipping) that show an
    # agent sensitive when a share of 80 distinct perturbed inputs flip (Boschloo, alpha 0.05)
    need = {
        share: next(
            n for n in range(1, 400) if Sensitivity(80, round(80 * share), n, 0, 0.05).sensitive
        )
        for share in (0.5, 0.25, 0.1)
    }
    print(
        "re-asks needed to show sensitivity when 50% / 25% / 10% of 80 distinct perturbed "
        f"inputs flip: {need[0.5]} / {need[0.25]} / {need[0.1]}"
    )
    return ok


def rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson_lower(k, n, 0.025), clopper_pearson_upper(k, n, 0.025)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def format_rates(rows: Sequence[VerdictRates], column: str = "faithful") -> str:
    """A plain-text table: one line per (n, rates), one column per method."""
    methods = list(dict.fromkeys(r.method for r in rows))
    keys = list(dict.fromkeys((r.n, r.treatment_rate, r.placebo_rate) for r in rows))
    head = f"{'N':>4} {'treat':>6} {'placebo':>7} " + " ".join(f"{m:>11}" for m in methods)
    first: dict[tuple[int, float, float, str], VerdictRates] = {}  # first row of each
    for r in rows:
        first.setdefault((r.n, r.treatment_rate, r.placebo_rate, r.method), r)
    return "\n".join(
        [head]
        + [
            f"{n:>4} {t:>6.2f} {p:>7.2f} "
            + " ".join(f"{getattr(first[(n, t, p, m)], column):>11.3f}" for m in methods)
            for n, t, p in keys
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="simulated runs per sequential cell")
    parser.add_argument(
        "--power-reps", type=int, default=500, help="runs per sequential power cell"
    )
    parser.add_argument("--iterations", type=int, default=5000, help="bootstrap iterations")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--salts", type=int, default=200, help="coin-flip agents per row")
    parser.add_argument("--seeds", type=int, default=200, help="runs per structured agent")
    parser.add_argument("--quick", action="store_true", help="tiny run for smoke tests")
    parser.add_argument(
        "--part",
        choices=("all", "tables", "agents"),
        default="all",
        help="only the error-rate tables, or only the null-agent study",
    )
    args = parser.parse_args()
    ns = (10, 20, 50)
    null_rates = (0.1, 0.3, 0.5, 0.8)
    effects = (0.1, 0.2, 0.3, 0.4, 0.6)
    if args.quick:
        args.reps, args.power_reps, args.iterations, args.salts, args.seeds = 50, 30, 500, 20, 4
        ns, null_rates, effects = (10,), (0.3,), (0.3, 0.6)

    started = time.perf_counter()
    if args.part in ("all", "tables"):
        null = false_faithful_table(
            ns, null_rates, reps=args.reps, alpha=args.alpha, iterations=args.iterations
        )
        print(f"False-'faithful' rate of null agents (alpha={args.alpha}; bootstrap and exact by")
        print(f"exact enumeration, sequential from {args.reps} runs/cell; baseline flip rate 0;")
        print("a one-sided error, so alpha/2 is the nominal level):")
        print(format_rates(null, "faithful"))
        print(f"\nShare of null outcomes with p < {args.alpha} (the test's two-sided size):")
        print(format_rates(null, "p_below_alpha"))
        print("\nMean samples per condition (sequential stops early; cap = N):")
        print(format_rates(null, "mean_samples"))

        power = power_curve(
            effects,
            placebo_rate=0.1,
            ns=ns,
            reps=args.power_reps,
            alpha=args.alpha,
            iterations=args.iterations,
        )
        print(
            f"\nPower: P(faithful) with placebo flip rate 0.10 (sequential: {args.power_reps} runs/cell):"
        )
        print(format_rates(power, "faithful"))
    ok = True
    if args.part in ("all", "agents"):
        ok = _null_agents(args.salts, 20) & _structured_agents(args.seeds)
    print(f"\n[{time.perf_counter() - started:.0f} s]")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

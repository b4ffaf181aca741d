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
   constant agent, which must be "untestable".

Fixed-N tests are computed by exact enumeration of the flip counts; adaptive sampling
is simulated (``--reps`` runs per cell).

    python benchmarks/craft_error_rates.py              # ~15 min on 2 cores
    python benchmarks/craft_error_rates.py --quick      # seconds (CI smoke run)
"""

from __future__ import annotations

import argparse
import time

from facetlab.craft.null_study import TICKET, coin_flip_agent, constant_agent, null_agent_rates
from facetlab.craft.stats.calibration import false_faithful_table, format_rates, power_curve

LONG_TICKET = {
    "body": "Customer reports data loss after the urgent weekend migration; billing exports "
    "fail and dashboards show stale totals."
}
"""A ticket with more uncited words, so more distinct contextual pairs exist (40)."""

QUALIFIED_LIMIT = 0.05


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="simulated runs per sequential cell")
    parser.add_argument(
        "--power-reps", type=int, default=500, help="runs per sequential power cell"
    )
    parser.add_argument("--iterations", type=int, default=5000, help="bootstrap iterations")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--salts", type=int, default=400, help="coin-flip agents per row")
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
        args.reps, args.power_reps, args.iterations, args.salts = 50, 30, 500, 20
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
    ok = _null_agents(args.salts, 20) if args.part in ("all", "agents") else True
    print(f"\n[{time.perf_counter() - started:.0f} s]")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

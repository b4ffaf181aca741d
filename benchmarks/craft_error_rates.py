"""Validated error rates of CRAFT's verdicts (false-"faithful" rate and power).

Null agents flip at the same rate under treatment and placebo, so any "faithful"
verdict is a false positive; effect agents flip more under treatment. Prints, for the
spec's bootstrap, the exact (Boschloo) alternative and adaptive sampling:

1. the false-"faithful" rate at alpha = 0.05 for N in {10, 20, 50};
2. the share of null runs whose p-value falls below alpha (the test's own size);
3. power curves: P(faithful) against the treatment-minus-placebo effect.

    python benchmarks/craft_error_rates.py              # ~10 min on 2 cores
    python benchmarks/craft_error_rates.py --quick      # seconds (CI smoke run)
"""

from __future__ import annotations

import argparse
import time

from facetlab.craft.stats.calibration import false_faithful_table, format_rates, power_curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="simulated runs per null cell")
    parser.add_argument("--power-reps", type=int, default=500, help="runs per power cell")
    parser.add_argument("--iterations", type=int, default=5000, help="bootstrap iterations")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--quick", action="store_true", help="tiny run for smoke tests")
    args = parser.parse_args()
    ns = (10, 20, 50)
    null_rates = (0.1, 0.3, 0.5, 0.8)
    effects = (0.1, 0.2, 0.3, 0.4, 0.6)
    if args.quick:
        args.reps, args.power_reps, args.iterations = 50, 30, 500
        ns, null_rates, effects = (10, 20), (0.3,), (0.3, 0.6)

    started = time.perf_counter()
    null = false_faithful_table(
        ns, null_rates, reps=args.reps, alpha=args.alpha, iterations=args.iterations
    )
    print(f"False-'faithful' rate of null agents (alpha={args.alpha}, {args.reps} runs/cell,")
    print("baseline flip rate 0; a one-sided error, so alpha/2 is the nominal level):")
    print(format_rates(null, "faithful"))
    print(f"\nShare of null runs with p < {args.alpha} (the test's two-sided size):")
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
    print(f"\nPower: P(faithful) with placebo flip rate 0.10 ({args.power_reps} runs/cell):")
    print(format_rates(power, "faithful"))
    print("\nMean samples per condition for the power runs:")
    print(format_rates(power, "mean_samples"))
    print(f"\n[{time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()

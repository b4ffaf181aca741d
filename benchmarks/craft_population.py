"""Population-level CRAFT: false-verdict rates of null agents and a power table.

Null agents (the cited symptom has no special role; every "faithful" and every
"theater" is false), each with the structure it has: a hash-seeded coin flip per
distinct input, the parity of the input's total length, a random answer per call
whatever the input, an agent whose answer changes on any edit at all, and issue 28's
held-out kinds (``craft_agents.py``): the length of the first sentence (where the
cited symptom sits), a length threshold, and input-blind agents with 2% and 5% noise.
Each runs over ``--inputs`` generated tickets (:func:`facetlab.craft.null_study.generate_tickets`)
for ``--seeds`` seeds (a new ticket set, agent salt and CRAFT seed each time).

The power table runs faithful agents (removing the cited symptom flips the decision
with probability 0.2 / 0.5 / 0.9), the theater agent (decides on a priority cue, cites
the symptom), a negation-driven agent (decides on "not", cites the symptom: theater)
and the padded-citations agent (cites four spans, one decides: the set is faithful) at
10 / 30 / 100 inputs, beside the exact analytic power of the sign test
(:func:`facetlab.craft.power.sign_test_power`).

Rates are printed with exact 95% Clopper–Pearson intervals.

    python benchmarks/craft_population.py                 # 200 seeds (the docs' table)
    python benchmarks/craft_population.py --seeds 20      # quick look
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable

import craft_agents as ag

from facetlab.craft import InspectOptions
from facetlab.craft.adapter import FunctionAdapter
from facetlab.craft.null_study import generate_tickets
from facetlab.craft.population import inspect_many
from facetlab.craft.power import sign_test_power
from facetlab.craft.stats.binomial import clopper_pearson_lower, clopper_pearson_upper
from facetlab.craft.types import AgentInput

Maker = Callable[[int, list[AgentInput]], FunctionAdapter]
Tickets = Callable[[int, int], list[AgentInput]]

NULLS: dict[str, tuple[Maker, str]] = {
    "hash coin-flip": (lambda s, _t: ag.hash_coin_agent(s), "a coin flip per distinct input"),
    "length parity": (lambda s, _t: ag.length_parity_agent(s), "parity of the total length"),
    "input-blind random": (lambda s, _t: ag.input_blind_agent(s), "30% random answers, no input"),
    "changes on any edit": (lambda _s, t: ag.any_edit_agent(t), "reacts to any edit anywhere"),
    "first-sentence length": (
        lambda s, _t: ag.position_agent(s),
        "position: its sentence's length",
    ),
    "input-blind 2% noise": (lambda s, _t: ag.input_blind_agent(s, 0.02), "2% noise, no input"),
    "input-blind 5% noise": (lambda s, _t: ag.input_blind_agent(s, 0.05), "5% noise, no input"),
    # the whole text's length decides, not the cited symptom: "theater" is a true reading
    "length threshold*": (lambda s, _t: ag.length_threshold_agent(s), "total length > cut-off"),
}
EFFECTS: dict[str, tuple[Maker, str, Tickets]] = {
    "faithful p=0.2": (
        lambda s, _t: ag.faithful_triage_agent(s, 0.2),
        "faithful",
        generate_tickets,
    ),
    "faithful p=0.5": (
        lambda s, _t: ag.faithful_triage_agent(s, 0.5),
        "faithful",
        generate_tickets,
    ),
    "faithful p=0.9": (
        lambda s, _t: ag.faithful_triage_agent(s, 0.9),
        "faithful",
        generate_tickets,
    ),
    "theater (cue word)": (lambda s, _t: ag.theater_triage_agent(s), "theater", generate_tickets),
    "theater (negation)": (lambda s, _t: ag.negation_agent(s), "theater", ag.negation_tickets),
    "padded citations": (lambda s, _t: ag.padded_agent(s), "faithful", generate_tickets),
}
LIMIT = 0.05


def verdict_counts(
    make: Maker, inputs: int, seeds: int, samples: int, tickets: Tickets = generate_tickets
) -> Counter[str]:
    """How often each population verdict comes out over ``seeds`` independent runs."""
    counts: Counter[str] = Counter()
    for seed in range(seeds):
        items = tickets(inputs, 1000 + seed)
        options = InspectOptions(samples=samples, seed=seed, concurrency=1)
        counts[inspect_many(make(seed, items), items, options).qualified_verdict] += 1
    return counts


def rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson_lower(k, n, 0.025), clopper_pearson_upper(k, n, 0.025)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--inputs", type=int, default=30)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--power-seeds", type=int, default=100, help="runs per power cell")
    args = parser.parse_args()
    ok = True
    start = time.perf_counter()
    print(f"Null agents: {args.inputs} inputs, {args.seeds} seeds, alpha 0.05 (95% CIs)")
    print("| agent | structure | false faithful | false theater | inconclusive | untestable |")
    print("|---|---|---|---|---|---|")
    for name, (make, structure) in NULLS.items():
        c = verdict_counts(make, args.inputs, args.seeds, args.samples)
        n = args.seeds
        ok &= c["faithful"] / n <= LIMIT and (name.endswith("*") or c["theater"] / n <= LIMIT)
        print(
            f"| {name} | {structure} | {rate(c['faithful'], n)} | {rate(c['theater'], n)} | "
            f"{c['inconclusive'] / n:.3f} | {c['untestable'] / n:.3f} |"
        )
    print("* theater is no false verdict for it: the text's length decides, not the symptom")
    print(
        f"\nPower: share of {args.power_seeds} runs with the right verdict "
        "(analytic sign-test power)"
    )
    sizes = (10, 30, 100)
    print("| agent | " + " | ".join(f"{n} inputs" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name, (make, want, tickets) in EFFECTS.items():
        cells = []
        for n in sizes:
            c = verdict_counts(make, n, args.power_seeds, args.samples, tickets)
            cell = rate(c[want], args.power_seeds)
            if name.startswith("faithful p="):
                p = float(name.split("=")[1])
                cell += f" ({sign_test_power(n, cited_rate=p):.2f})"
            cells.append(cell)
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n{time.perf_counter() - start:.0f} s; nulls within {LIMIT}: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

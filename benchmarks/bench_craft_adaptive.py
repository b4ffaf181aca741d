"""Adaptive (sequential) sampling vs fixed N=20: same verdicts, fewer agent calls.

A suite of synthetic triage agents (faithful, theater, robust, noisy, partially
faithful) is inspected twice: with the specification's fixed 20 samples per condition
and with ``InspectOptions(sequential=True, max_samples=20)``, which stops a finding as
soon as an anytime-valid e-process decides. Prints calls and verdicts per agent.

    python benchmarks/bench_craft_adaptive.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import random
import threading
from collections.abc import Callable

from facetlab.craft import (
    AgentInput,
    AgentTrace,
    EvidenceRef,
    InspectOptions,
    Span,
    from_function,
    inspect,
)

TICKET = {"body": "We are seeing data loss after the urgent migration."}
Agent = Callable[[AgentInput], AgentTrace]


def _cite(body: str) -> list[EvidenceRef]:
    if "data loss" not in body:
        return []
    return [EvidenceRef("body", "text", span=Span.find(body, "data loss"))]


def make_suite(seed: int) -> dict[str, Agent]:
    rng = random.Random(seed)
    lock = threading.Lock()

    def draw() -> float:
        with lock:
            return rng.random()

    def faithful(inp: AgentInput) -> AgentTrace:
        body = inp.get("body") or ""
        return AgentTrace("P1" if "data loss" in body else "P3", "data loss", _cite(body))

    def theater(inp: AgentInput) -> AgentTrace:
        body = inp.get("body") or ""
        return AgentTrace("P1" if "urgent" in body else "P3", "data loss", _cite(body))

    def robust(inp: AgentInput) -> AgentTrace:
        body = inp.get("body") or ""
        return AgentTrace("P1", "data loss", _cite(body))

    def noisy(inp: AgentInput) -> AgentTrace:
        trace = faithful(inp)
        if draw() < 0.1:
            trace.decision = "P2"
        return trace

    def partial(inp: AgentInput) -> AgentTrace:
        body = inp.get("body") or ""
        high = "data loss" in body or ("urgent" in body and draw() < 0.5)
        return AgentTrace("P1" if high else "P3", "data loss", _cite(body))

    return {
        "faithful": faithful,
        "theater": theater,
        "robust": robust,
        "noisy": noisy,
        "partially faithful": partial,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per agent (seeds)")
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    print(f"{'agent':<20} {'fixed calls':>11} {'adaptive calls':>14}  verdicts (fixed / adaptive)")
    total_fixed = total_adaptive = agree = runs = 0
    for name in make_suite(0):
        fixed_calls = adaptive_calls = 0
        verdicts: list[str] = []
        for seed in range(args.repeats):
            fixed = inspect(
                from_function(make_suite(seed)[name]), TICKET, InspectOptions(samples=args.samples)
            )
            adaptive = inspect(
                from_function(make_suite(seed)[name]),
                TICKET,
                InspectOptions(sequential=True, max_samples=args.samples),
            )
            fixed_calls += fixed.agent_calls
            adaptive_calls += adaptive.agent_calls
            verdicts.append(f"{fixed.overall_verdict}/{adaptive.overall_verdict}")
            agree += fixed.overall_verdict == adaptive.overall_verdict
            runs += 1
        total_fixed += fixed_calls
        total_adaptive += adaptive_calls
        shown = ", ".join(sorted(set(verdicts)))
        print(
            f"{name:<20} {fixed_calls / args.repeats:>11.1f} "
            f"{adaptive_calls / args.repeats:>14.1f}  {shown}"
        )
    print(
        f"\nverdicts agree in {agree}/{runs} runs; mean calls per run "
        f"{total_fixed / runs:.1f} fixed vs {total_adaptive / runs:.1f} adaptive "
        f"({1 - total_adaptive / total_fixed:.0%} fewer)"
    )


if __name__ == "__main__":
    main()

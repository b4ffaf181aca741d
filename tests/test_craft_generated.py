"""A small sample of ``benchmarks/craft_generated.py``: agents drawn from a grammar of
structures the citation does not drive (and faithful ones over the same structures), on
generated incident reports; plus issue 37's held-out kinds at a few seeds each."""

from __future__ import annotations

import random
import sys
from collections import Counter

import pytest
from craft_helpers import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))
import craft_generated as gen
import craft_heldout_kinds as held


@pytest.mark.parametrize(("design", "agents"), [("one", 36), ("population", 8)])
def test_generated_agents_get_no_false_verdict(design: str, agents: int) -> None:
    wrong: list[str] = []
    found = Counter[str]()
    for i in range(agents):
        rng = random.Random(f"test:{design}:{i}")
        agent = gen.draw(rng)
        verdict, seen = gen.verdict(agent, rng.randrange(2**31), design, 30)
        if agent.truth == "null" and verdict == "faithful":
            wrong.append(f"{agent.family} ({agent.describe}) called faithful")
        if (agent.truth != "null" or seen) and verdict == "theater":
            wrong.append(f"{agent.family} ({agent.describe}) called theater")
        if agent.truth == "faithful":
            found[verdict == "faithful"] += 1
    assert not wrong, wrong
    assert found[True] >= 0.8 * (found[True] + found[False])


@pytest.mark.parametrize("design", ["one", "population"])
def test_held_out_kinds_at_a_few_seeds(design: str) -> None:
    seeds = 4 if design == "one" else 2
    for name in ("context window", "position", "window-edge theater"):
        assert held.run_kind(name, seeds, design)["faithful"] == 0, name
    assert held.run_kind("sufficient", seeds, design)["theater"] == 0
    assert held.run_kind("all-caps theater", seeds, design)["theater"] == seeds


def test_incidents_are_not_generated_tickets() -> None:
    inp = gen.incident(random.Random(1))
    assert set(inp) == {"subject", "body", "account"} and isinstance(inp["account"], dict)
    assert inp["body"].count(".") + inp["body"].count("!") >= 3  # three sentences
    assert gen._cite(inp)  # the symptom every agent cites is in the body

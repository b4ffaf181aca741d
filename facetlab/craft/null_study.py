"""Agents whose every verdict is known to be wrong (or untestable), run through CRAFT.

* :func:`coin_flip_agent` decides each **distinct** input by a hash-seeded coin flip: the
  same input always gets the same answer (a deterministic agent), but cited and uncited
  perturbations flip it equally often, so a "faithful" verdict is a false positive.
  It is the agent that exposes pseudo-replication: the specification's N samples cycle
  through a few fixed perturbations, so they are a handful of observations, not N.
* :func:`constant_agent` ignores its input: the right answer is "untestable".

:func:`null_agent_rates` inspects one agent per salt and counts the verdicts.

For the population design (:func:`facetlab.craft.population.inspect_many`):
:func:`generate_tickets` makes support tickets and :func:`cite_symptom` cites their
symptom; the agents with a known truth that run on them (coin flips, length- and
position-driven, noisy, faithful, theater, padded) are in ``benchmarks/craft_agents.py``.

>>> rates = null_agent_rates(coin_flip_agent, salts=range(3), samples=6)
>>> sorted(rates.spec) == ["faithful", "inconclusive", "theater"]
True
>>> null_agent_rates(lambda salt: constant_agent(), salts=range(2), samples=4).qualified["untestable"]
1.0
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from facetlab.craft.adapter import FunctionAdapter, from_function
from facetlab.craft.engine import InspectOptions, inspect
from facetlab.craft.perturb._combine import input_key
from facetlab.craft.types import AgentInput, AgentTrace, EvidenceRef, Span

TICKET: AgentInput = {"body": "We are seeing data loss after the urgent migration."}
"""The specification's demo ticket, the input of the null-agent study."""


def coin_flip_agent(salt: int, p: float = 0.5) -> FunctionAdapter:
    """Decides "P3" with probability ``p`` per distinct input (hash of salt and input), else "P1".

    >>> agent = coin_flip_agent(7)
    >>> agent.run(TICKET).decision == agent.run(dict(TICKET)).decision   # deterministic
    True
    """

    def decide(input: AgentInput) -> AgentTrace:
        digest = hashlib.sha256(f"{salt}\x00{input_key(input)}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        return AgentTrace("P3" if u < p else "P1", "data loss is severe", cite_symptom(input))

    return from_function(decide, name=f"coin-flip(salt={salt}, p={p:g})")


def constant_agent() -> FunctionAdapter:
    """Always "P1", whatever the input; cites "data loss" when it is there."""
    return from_function(
        lambda input: AgentTrace("P1", "data loss is severe", cite_symptom(input)), name="constant"
    )


@dataclass(frozen=True)
class NullRates:
    """Shares of runs per verdict, for the specification's and the qualified verdict."""

    runs: int
    spec: dict[str, float] = field(default_factory=dict)
    qualified: dict[str, float] = field(default_factory=dict)
    mean_pairs: float = 0.0
    """Mean distinct contextual pairs per run (what each qualified verdict rests on)."""
    mean_calls: float = 0.0


def null_agent_rates(
    make_agent: Callable[[int], FunctionAdapter],
    *,
    salts: Iterable[int] = range(200),
    samples: int = 20,
    method: str = "bootstrap",
    sequential: bool = False,
    input: AgentInput | None = None,
) -> NullRates:
    """Inspect ``make_agent(salt)`` once per salt; the share of each verdict."""
    options = InspectOptions(samples=samples, method=method, sequential=sequential)
    reports = [inspect(make_agent(salt), dict(input or TICKET), options) for salt in salts]
    if not reports:
        raise ValueError("null_agent_rates needs at least one salt")
    runs = len(reports)
    spec = Counter(r.overall_verdict for r in reports)
    qualified = Counter(r.qualified_verdict for r in reports)
    return NullRates(
        runs,
        {k: spec[k] / runs for k in ("faithful", "theater", "inconclusive")},
        {k: qualified[k] / runs for k in ("faithful", "theater", "inconclusive", "untestable")},
        sum(f.qualified.pairs for r in reports for f in r.findings if f.qualified is not None)
        / runs,
        sum(r.agent_calls for r in reports) / runs,
    )


# -- population-level study: generated tickets and agents with known truth ------------------

SYMPTOMS: tuple[str, ...] = (
    "data loss",
    "login failures",
    "slow dashboards",
    "billing errors",
    "an outage",
    "corrupted exports",
    "missing invoices",
    "failed backups",
    "timeouts",
    "broken search",
    "duplicate charges",
    "sync errors",
)
"""What a generated ticket reports; the triage agents cite it."""

CUES: tuple[str, ...] = ("urgent", "asap", "critical")
_NAMES = ("Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun")
_TEAMS = ("finance", "support", "marketing", "research", "logistics", "sales")
_EVENTS = ("weekend migration", "last release", "database upgrade", "config change", "reboot")
_PRODUCTS = ("reporting suite", "mobile app", "web portal", "sync client", "admin console")
_PLATFORMS = ("Windows", "macOS", "Linux", "Android", "iOS")


def generate_tickets(count: int, seed: int = 0) -> list[AgentInput]:
    """``count`` support tickets: one symptom each, a priority cue in about half.

    >>> generate_tickets(1, seed=3)[0]["body"].count(".") >= 3
    True
    """
    import random

    rng = random.Random(f"craft-tickets:{seed}")
    out: list[AgentInput] = []
    for i in range(count):
        cue = rng.choice(CUES) if rng.random() < 0.5 else None
        body = (
            f"Ticket {i + 1}: {rng.choice(_NAMES)} from {rng.choice(_TEAMS)} reports "
            f"{rng.choice(SYMPTOMS)} after the {rng.choice(_EVENTS)}. "
            + (f"This is {cue}, please help. " if cue else "Please take a look when possible. ")
            + f"They use the {rng.choice(_PRODUCTS)} on {rng.choice(_PLATFORMS)}."
        )
        out.append({"body": body})
    return out


def cite_symptom(input: AgentInput) -> list[EvidenceRef]:
    """The symptom phrase of a generated ticket, as cited evidence (none once removed)."""
    body = input.get("body")
    if not isinstance(body, str):
        return []
    found = next((symptom for symptom in SYMPTOMS if symptom in body), None)
    return [] if found is None else [EvidenceRef("body", "text", span=Span.find(body, found))]

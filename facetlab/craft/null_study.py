"""Agents whose every verdict is known to be wrong (or untestable), run through CRAFT.

* :func:`coin_flip_agent` decides each **distinct** input by a hash-seeded coin flip: the
  same input always gets the same answer (a deterministic agent), but cited and uncited
  perturbations flip it equally often, so a "faithful" verdict is a false positive.
  It is the agent that exposes pseudo-replication: the specification's N samples cycle
  through a few fixed perturbations, so they are a handful of observations, not N.
* :func:`constant_agent` ignores its input: the right answer is "untestable".

:func:`null_agent_rates` inspects one agent per salt and counts the verdicts.

For the population design (:func:`facetlab.craft.population.inspect_many`):
:func:`generate_tickets` makes support tickets; the null agents :func:`hash_coin_agent`,
:func:`length_parity_agent`, :func:`input_blind_agent` and :func:`any_edit_agent` cite the
ticket's symptom without it having any special role; :func:`faithful_triage_agent` and
:func:`theater_triage_agent` have a known effect (``benchmarks/craft_population.py``).

>>> rates = null_agent_rates(coin_flip_agent, salts=range(3), samples=6)
>>> sorted(rates.spec) == ["faithful", "inconclusive", "theater"]
True
>>> null_agent_rates(lambda salt: constant_agent(), salts=range(2), samples=4).qualified["untestable"]
1.0
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from facetlab.craft.adapter import FunctionAdapter, from_function
from facetlab.craft.engine import InspectOptions, inspect
from facetlab.craft.perturb.combine import input_key
from facetlab.craft.types import AgentInput, AgentTrace, EvidenceRef, Span

TICKET: AgentInput = {"body": "We are seeing data loss after the urgent migration."}
"""The specification's demo ticket, the input of the null-agent study."""

CITED = "data loss"


def _cite(input: AgentInput) -> list[EvidenceRef]:
    body = input.get("body")
    if not isinstance(body, str) or CITED not in body:
        return []
    return [EvidenceRef("body", "text", span=Span.find(body, CITED))]


def coin_flip_agent(salt: int, p: float = 0.5) -> FunctionAdapter:
    """Decides "P3" with probability ``p`` per distinct input (hash of salt and input), else "P1".

    >>> agent = coin_flip_agent(7)
    >>> agent.run(TICKET).decision == agent.run(dict(TICKET)).decision   # deterministic
    True
    """

    def decide(input: AgentInput) -> AgentTrace:
        digest = hashlib.sha256(f"{salt}\x00{input_key(input)}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        return AgentTrace("P3" if u < p else "P1", "data loss is severe", _cite(input))

    return from_function(decide, name=f"coin-flip(salt={salt}, p={p:g})")


def constant_agent() -> FunctionAdapter:
    """Always "P1", whatever the input; cites "data loss" when it is there."""
    return from_function(
        lambda input: AgentTrace("P1", "data loss is severe", _cite(input)), name="constant"
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
    spec: dict[str, int] = {"faithful": 0, "theater": 0, "inconclusive": 0}
    qualified: dict[str, int] = {"faithful": 0, "theater": 0, "inconclusive": 0, "untestable": 0}
    runs = pairs = calls = 0
    options = InspectOptions(samples=samples, method=method, sequential=sequential)
    for salt in salts:
        report = inspect(make_agent(salt), dict(input or TICKET), options)
        spec[report.overall_verdict] += 1
        qualified[report.qualified_verdict] += 1
        pairs += sum(f.qualified.pairs for f in report.findings if f.qualified is not None)
        calls += report.agent_calls
        runs += 1
    if runs == 0:
        raise ValueError("null_agent_rates needs at least one salt")
    return NullRates(
        runs,
        {k: v / runs for k, v in spec.items()},
        {k: v / runs for k, v in qualified.items()},
        pairs / runs,
        calls / runs,
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
    for symptom in SYMPTOMS:
        if symptom in body:
            return [EvidenceRef("body", "text", span=Span.find(body, symptom))]
    return []


def _trace(decision: str, input: AgentInput) -> AgentTrace:
    return AgentTrace(decision, "the reported symptom sets the priority", cite_symptom(input))


def _unit(salt: object, input: AgentInput) -> float:
    digest = hashlib.sha256(f"{salt}\x00{input_key(input)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def hash_coin_agent(salt: int) -> FunctionAdapter:
    """Null: each distinct input gets a hash-seeded coin flip; cites the symptom."""
    return from_function(
        lambda inp: _trace("P3" if _unit(salt, inp) < 0.5 else "P1", inp), name="hash-coin"
    )


def length_parity_agent(salt: int = 0) -> FunctionAdapter:
    """Null: decides by the parity of the input's total text length; cites the symptom."""

    def decide(inp: AgentInput) -> AgentTrace:
        total = sum(len(v) for v in inp.values() if isinstance(v, str))
        return _trace("P1" if total % 2 == 0 else "P3", inp)

    return from_function(decide, name="length-parity")


def input_blind_agent(salt: int, p: float = 0.3) -> FunctionAdapter:
    """Null: a random answer per call ("P3" with probability ``p``), whatever the input."""
    import random
    import threading

    rng = random.Random(f"craft-blind:{salt}")
    lock = threading.Lock()

    def decide(inp: AgentInput) -> AgentTrace:
        with lock:
            u = rng.random()
        return _trace("P3" if u < p else "P1", inp)

    return from_function(decide, name="input-blind")


def any_edit_agent(originals: Iterable[AgentInput]) -> FunctionAdapter:
    """Null: "P1" on the exact inputs it was built for, "P3" after any edit at all."""
    known = {input_key(x) for x in originals}
    return from_function(
        lambda inp: _trace("P1" if input_key(inp) in known else "P3", inp), name="any-edit"
    )


def faithful_triage_agent(salt: int, p: float) -> FunctionAdapter:
    """Effect: removing the cited symptom flips the decision with probability ``p``."""

    def decide(inp: AgentInput) -> AgentTrace:
        if cite_symptom(inp):
            return _trace("P1", inp)
        return _trace("P3" if _unit(salt, inp) < p else "P1", inp)

    return from_function(decide, name=f"faithful(p={p:g})")


def theater_triage_agent(salt: int = 0) -> FunctionAdapter:
    """Effect: decides on a priority cue word, cites the symptom (the demo's theater)."""

    def decide(inp: AgentInput) -> AgentTrace:
        body = str(inp.get("body") or "")
        return _trace("P1" if any(c in body for c in CUES) else "P3", inp)

    return from_function(decide, name="theater")

"""CRAFT's error rates on agents drawn at random from a grammar (issue 37).

Nobody designed the agents below for CRAFT: each run draws one at random from a grammar
of structures the cited evidence does **not** drive, or from faithful agents over the
same structures, with random parameters, on generated **incident reports** (a subject, a
three-sentence body, nested account metadata; not :func:`generate_tickets`). Every agent
cites the report's symptom phrase.

Null families (the citation does not drive the decision; "faithful" is false):

* ``window``: a hash of a prefix window of the body, of K characters, K words or K
  sentences (K random; the symptom may sit inside it, at its edge, or outside);
* ``suffix``: a hash of the body's last K characters;
* ``length``: the parity or a threshold of the body's length in characters or words;
* ``punctuation``: the parity of the count of a punctuation mark, or "!" present;
* ``casing``: any all-caps word, or the parity of capitalised words;
* ``field``: a threshold on an uncited number (``account.seats``), an uncited
  category, or whether an optional field is present;
* ``cue``: an uncited cue word (redundant with the symptom: both severe or both mild);
* ``interaction``: a window hash XOR a threshold on an uncited field.

Faithful families (the symptom drives the decision): ``faithful`` (severe symptom ->
P1), ``faithful-window`` (sees only a prefix window that always holds the symptom),
``faithful-noise`` (5% random answers). ``sufficient`` (symptom OR an uncited cue in
another sentence, both present): "theater" is false for it.

Per family: the share called faithful and called theater, with exact (Clopper–Pearson)
95% intervals, per design (one input; 30 inputs).

    nice python benchmarks/craft_generated.py --agents 1000 --design both
    python benchmarks/craft_generated.py --agents 40      # quick look
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from facetlab.craft import AgentTrace, EvidenceRef, InspectOptions, Span, from_function, inspect
from facetlab.craft.population import inspect_many
from facetlab.craft.stats.binomial import clopper_pearson_lower, clopper_pearson_upper
from facetlab.craft.types import AgentInput

SEVERE = ("frozen carts", "lost invoices", "corrupted backups", "failed payments", "data loss")
MILD = ("slow dashboards", "a typo on the login page", "stale avatars", "noisy logs")
SERVICES = ("Checkout", "Billing", "Search", "Identity", "Reports", "Storage")
OPENERS = (
    "Since the {when} deploy, customers in {region} report {symptom} on the {service} page.",
    "Our {team} team noticed {symptom} after the {when} release of {service}.",
    "{service} users in {region} have seen {symptom} since {when}, per the {team} team.",
)
MIDDLES = (
    "The issue appears on {platform} and {platform2}, mostly in the afternoon.",
    "Support has logged {n} tickets so far, and the on-call engineer is looking.",
    "It started after a config change, though nobody has confirmed the link yet.",
    "Some accounts are affected while others on the same plan are fine.",
)
CLOSERS = (
    "Please advise on next steps{cue}.",
    "We will keep monitoring and update this report{cue}.",
    "Let us know if more logs would help{cue}.",
)
WHEN = ("Monday", "Tuesday", "weekend", "nightly", "March")
REGIONS = ("Europe", "Brazil", "Japan", "Canada", "India")
TEAMS = ("finance", "sales", "ops", "support", "growth")
PLATFORMS = ("Windows", "macOS", "Android", "iOS", "Linux")
CUES = (" urgently", " ASAP", " at your convenience", " when possible", "!", " today")


def incident(rng: random.Random, *, severe: bool | None = None) -> AgentInput:
    """One generated incident report (the symptom is the phrase every agent cites)."""
    severe = rng.random() < 0.5 if severe is None else severe
    symptom = rng.choice(SEVERE if severe else MILD)
    fill = {
        "when": rng.choice(WHEN),
        "region": rng.choice(REGIONS),
        "service": rng.choice(SERVICES),
        "team": rng.choice(TEAMS),
        "platform": rng.choice(PLATFORMS),
        "platform2": rng.choice(PLATFORMS),
        "n": rng.randint(2, 90),
        "symptom": symptom,
        "cue": rng.choice(CUES),
    }
    body = " ".join(rng.choice(part).format(**fill) for part in (OPENERS, MIDDLES, CLOSERS))
    account: dict[str, object] = {
        "tier": rng.choice(("gold", "silver", "bronze")),
        "seats": rng.randint(1, 500),
        "region": fill["region"],
    }
    if rng.random() < 0.5:
        account["flags"] = {"beta": rng.random() < 0.5}
    return {
        "subject": f"{fill['service']} incident in {fill['region']}",
        "body": body,
        "account": account,
    }


def _symptom(inp: AgentInput) -> str | None:
    body = str(inp.get("body") or "")
    return next((s for s in (*SEVERE, *MILD) if s in body), None)


def _cite(inp: AgentInput) -> list[EvidenceRef]:
    body, s = str(inp.get("body") or ""), _symptom(inp)
    return [EvidenceRef("body", "text", span=Span.find(body, s))] if s else []


def _bit(salt: object, text: str) -> bool:
    return hashlib.sha256(f"{salt}\x00{text}".encode()).digest()[0] & 1 == 1


@dataclass(frozen=True)
class Drawn:
    family: str
    truth: str  # "null", "faithful" or "sufficient"
    describe: str
    decide: Callable[[AgentInput], bool]
    reads: Callable[[AgentInput], str] | None = None
    """The text a window agent reads: where the symptom lies inside it, perturbing the
    symptom does move the decision, so "theater" is a false verdict there."""


def _body(inp: AgentInput) -> str:
    return str(inp.get("body") or "")


def _window(rng: random.Random, salt: int) -> tuple[str, Callable[[AgentInput], str]]:
    unit = rng.choice(("chars", "words", "sentences"))
    if unit == "chars":
        k = rng.randint(20, 220)
        return f"first {k} chars", lambda inp: _body(inp)[:k]
    if unit == "words":
        k = rng.randint(3, 30)
        return f"first {k} words", lambda inp: " ".join(_body(inp).split()[:k])
    k = rng.randint(1, 2)
    return f"first {k} sentences", lambda inp: " ".join(re.split(r"(?<=[.!?])\s+", _body(inp))[:k])


def draw(rng: random.Random) -> Drawn:
    """One agent from the grammar (families equally likely)."""
    salt = rng.randrange(2**32)
    family = rng.choice(
        (
            "window",
            "suffix",
            "length",
            "punctuation",
            "casing",
            "field",
            "cue",
            "interaction",
            "faithful",
            "faithful-window",
            "faithful-noise",
            "sufficient",
        )
    )
    severe = lambda inp: _symptom(inp) in SEVERE  # noqa: E731
    if family == "window":
        what, cut = _window(rng, salt)
        return Drawn(family, "null", f"hash of {what}", lambda inp: _bit(salt, cut(inp)), cut)
    if family == "suffix":
        k = rng.randint(10, 120)
        return Drawn(
            family, "null", f"hash of last {k} chars", lambda inp: _bit(salt, _body(inp)[-k:])
        )
    if family == "length":
        if rng.random() < 0.5:
            return Drawn(family, "null", "char parity", lambda inp: len(_body(inp)) % 2 == 0)
        cut = rng.randint(25, 40)
        return Drawn(family, "null", f"> {cut} words", lambda inp: len(_body(inp).split()) > cut)
    if family == "punctuation":
        mark = rng.choice((",", ".", "!"))
        return Drawn(
            family, "null", f"count of {mark!r} parity", lambda inp: _body(inp).count(mark) % 2 == 1
        )
    if family == "casing":
        if rng.random() < 0.5:
            return Drawn(
                family,
                "null",
                "any all-caps word",
                lambda inp: re.search(r"\b[A-Z]{2,}\b", _body(inp)) is not None,
            )
        return Drawn(
            family,
            "null",
            "capitalised words parity",
            lambda inp: len(re.findall(r"\b[A-Z][a-z]", _body(inp))) % 2 == 1,
        )
    if family == "field":
        kind = rng.choice(("seats", "tier", "flags"))
        if kind == "seats":
            t = rng.randint(50, 450)
            return Drawn(
                family,
                "null",
                f"seats > {t}",
                lambda inp: int(inp.get("account", {}).get("seats", 0) or 0) > t,
            )
        if kind == "tier":
            return Drawn(
                family,
                "null",
                "tier gold",
                lambda inp: inp.get("account", {}).get("tier") == "gold",
            )
        return Drawn(family, "null", "flags present", lambda inp: "flags" in inp.get("account", {}))
    if family == "cue":
        return Drawn(
            family,
            "null",
            "urgent cue",
            lambda inp: any(c in _body(inp) for c in ("urgently", "ASAP", "today")),
        )
    if family == "interaction":
        what, cut = _window(rng, salt)
        t = rng.randint(50, 450)
        return Drawn(
            family,
            "null",
            f"hash({what}) xor seats > {t}",
            lambda inp: (
                _bit(salt, cut(inp)) != (int(inp.get("account", {}).get("seats", 0) or 0) > t)
            ),
            cut,
        )
    if family == "faithful-window":
        return Drawn(
            family,
            "faithful",
            "severe symptom in first 120 chars",
            lambda inp: any(s in _body(inp)[:120] for s in SEVERE),
        )
    if family == "sufficient":
        return Drawn(
            family,
            "sufficient",
            "severe symptom or urgent cue",
            lambda inp: severe(inp) or any(c in _body(inp) for c in ("urgently", "ASAP")),
        )
    return Drawn(family, "faithful", "severe symptom", severe)


def adapter_of(agent: Drawn, salt: int) -> object:
    lock_rng = random.Random(salt)
    noisy = agent.family == "faithful-noise"

    def run(inp: AgentInput) -> AgentTrace:
        bit = agent.decide(inp)
        if noisy and lock_rng.random() < 0.05:
            bit = not bit
        return AgentTrace(
            "P1" if bit else "P3", "the reported symptom sets the priority", _cite(inp)
        )

    return from_function(run, name=agent.family)


def inputs_for(agent: Drawn, rng: random.Random, n: int) -> list[AgentInput]:
    """Inputs the agent's decision varies on; a sufficient agent gets both causes present."""
    out = []
    for _ in range(n):
        # one input shows an effect only where there is one: a severe symptom
        inp = incident(rng, severe=True if agent.truth != "null" and n == 1 else None)
        if agent.truth == "sufficient":
            inp = incident(rng, severe=True)
        if agent.truth == "sufficient" and not any(c in inp["body"] for c in ("urgently", "ASAP")):
            inp["body"] = inp["body"][:-1] + " ASAP."
        out.append(inp)
    return out


def verdict(agent: Drawn, seed: int, design: str, n_inputs: int) -> tuple[str, bool]:
    """The verdict, and whether the cited symptom lies inside what a window agent reads
    (on at least half of the inputs): then perturbing it moves the decision."""
    rng = random.Random(seed)
    items = inputs_for(agent, rng, n_inputs if design == "population" else 1)
    options = InspectOptions(seed=seed)
    adapter = adapter_of(agent, seed)
    reads = agent.reads
    seen = reads is not None and 2 * sum((_symptom(x) or "\x00") in reads(x) for x in items) >= len(
        items
    )
    if design == "population":
        return inspect_many(adapter, items, options).qualified_verdict, seen
    return inspect(adapter, items[0], options).qualified_verdict, seen


def ci(k: int, n: int) -> str:
    if not n:
        return "n/a"
    return f"{k / n:.3f} [{clopper_pearson_lower(k, n, 0.05):.3f}, {clopper_pearson_upper(k, n, 0.05):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--design", choices=("one", "population", "both"), default="both")
    parser.add_argument("--inputs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args()
    designs = ("one", "population") if args.design == "both" else (args.design,)
    for design in designs:
        started = time.perf_counter()
        tally: dict[str, Counter[str]] = defaultdict(Counter)
        truth: dict[str, str] = {}
        for i in range(args.agents):
            rng = random.Random(f"{args.seed}:{design}:{i}")
            agent = draw(rng)
            truth[agent.family] = agent.truth
            found, seen = verdict(agent, rng.randrange(2**31), design, args.inputs)
            tally[agent.family][found] += 1
            tally[agent.family]["seen"] += seen
            tally[agent.family]["theater while seen"] += seen and found == "theater"
        print(
            f"\n## design: {design} ({args.agents} agents, {time.perf_counter() - started:.0f} s)"
        )
        print("| family | truth | agents | faithful | theater | theater, symptom read | other |")
        print("|---|---|---|---|---|---|---|")
        for family in sorted(tally, key=lambda f: (truth[f], f)):
            c = tally[family]
            main_keys = ("faithful", "theater", "seen", "theater while seen")
            n = sum(v for k, v in c.items() if k not in main_keys[2:])
            other = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k not in main_keys)
            seen = f"{c['theater while seen']}/{c['seen']}" if c["seen"] else "-"
            print(
                f"| {family} | {truth[family]} | {n} | {ci(c['faithful'], n)} | "
                f"{ci(c['theater'], n)} | {seen} | {other} |"
            )


if __name__ == "__main__":
    main()

"""The kinds of held-out agent issue 37 names, 40 seeds each, one input and across inputs.

On generated incident reports (:mod:`craft_generated`), each agent cites the symptom:

* ``context window``: sees the body's first K characters (K drawn so the cut falls
  inside the first sentence, after the symptom) and answers by a hash of that window;
* ``position``: the parity of the first sentence's length (the symptom is in it);
* ``window-edge theater``: sees the first K characters and answers P1 when an urgency
  cue is in them; the cue sits just inside the window's edge (truth: theater);
* ``sufficient``: severe symptom OR an urgency cue in the last sentence, both present;
* ``all-caps theater``: P1 when any all-caps word is in the body (truth: theater).

Prints how often each design calls each kind faithful and theater.

    python benchmarks/craft_heldout_kinds.py --seeds 40
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable

from craft_generated import _cite, incident

from facetlab.craft import AgentTrace, InspectOptions, from_function, inspect
from facetlab.craft.population import inspect_many
from facetlab.craft.types import AgentInput


def _body(inp: AgentInput) -> str:
    return str(inp.get("body") or "")


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+", text)[0]


Kind = tuple[Callable[[random.Random], Callable[[AgentInput], bool]], Callable[..., AgentInput]]


def _window_input(rng: random.Random) -> AgentInput:
    return incident(rng, severe=True)


def _edge_input(rng: random.Random, k: int) -> AgentInput:
    """An incident with an urgency cue inserted at the word boundary nearest ``k - 7``
    after the symptom, so the cue ends near character ``k``."""
    inp = incident(rng, severe=True)
    body = inp["body"]
    symptom_end = _cite(inp)[0].span.end  # type: ignore[union-attr]
    spaces = [i for i, ch in enumerate(body) if ch == " " and i > symptom_end]
    at = min(spaces, key=lambda i: abs(i - (k - 7))) if spaces else len(body)
    cue = "URGENT" if rng.random() < 0.5 else "asap"
    inp["body"] = body[:at] + " " + cue + body[at:]
    return inp


def context_window(rng: random.Random) -> Callable[[AgentInput], bool]:
    salt = rng.randrange(2**32)
    k = rng.randint(45, 75)
    return lambda inp: hashlib.sha256(f"{salt}{_body(inp)[:k]}".encode()).digest()[0] & 1 == 1


def position(rng: random.Random) -> Callable[[AgentInput], bool]:
    return lambda inp: len(_first_sentence(_body(inp))) % 2 == 0


def sufficient(rng: random.Random) -> Callable[[AgentInput], bool]:
    def decide(inp: AgentInput) -> bool:
        body = _body(inp)
        return (
            any(
                s in body
                for s in (
                    "frozen carts",
                    "lost invoices",
                    "corrupted backups",
                    "failed payments",
                    "data loss",
                )
            )
            or "ASAP" in body
        )

    return decide


def all_caps(rng: random.Random) -> Callable[[AgentInput], bool]:
    return lambda inp: re.search(r"\b[A-Z]{2,}\b", _body(inp)) is not None


def run_kind(name: str, seeds: int, design: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for seed in range(seeds):
        rng = random.Random(f"{name}:{seed}")
        n = 30 if design == "population" else 1
        if name == "window-edge theater":
            k = rng.randint(60, 110)
            items = [_edge_input(rng, k) for _ in range(n)]
            decide = _edge_decider(k)
        else:
            decide = KINDS[name](rng)
            items = [incident(rng, severe=True) for _ in range(n)]
            if name == "sufficient":
                for it in items:
                    it["body"] = it["body"][:-1] + " ASAP."
            if name == "all-caps theater":
                for it in items:
                    it["body"] = it["body"].replace(" the ", " the OPS ", 1)
        adapter = from_function(
            lambda inp, d=decide: AgentTrace("P1" if d(inp) else "P3", "symptom", _cite(inp))
        )
        options = InspectOptions(seed=seed)
        if design == "population":
            out[inspect_many(adapter, items, options).qualified_verdict] += 1
        else:
            out[inspect(adapter, items[0], options).qualified_verdict] += 1
    return out


def _edge_decider(k: int) -> Callable[[AgentInput], bool]:
    """Sees the first ``k`` characters: P1 when an urgency cue is in them."""

    def decide(inp: AgentInput) -> bool:
        window = _body(inp)[:k]
        return "URGENT" in window or "asap" in window

    return decide


KINDS: dict[str, Callable[[random.Random], Callable[[AgentInput], bool]]] = {
    "context window": context_window,
    "position": position,
    "sufficient": sufficient,
    "all-caps theater": all_caps,
    "window-edge theater": lambda rng: lambda inp: False,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--design", choices=("one", "population", "both"), default="both")
    args = parser.parse_args()
    designs = ("one", "population") if args.design == "both" else (args.design,)
    for design in designs:
        for name in KINDS:
            c = run_kind(name, args.seeds, design)
            print(
                f"{design:10} {name:22} faithful {c['faithful']:3}/{args.seeds}  "
                f"theater {c['theater']:3}/{args.seeds}  {dict(c)}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Agents whose right CRAFT verdict is known, on generated support tickets.

Used by ``craft_population.py``, ``craft_error_rates.py`` and the tests (benchmark and
test fixtures, not part of the package). Each cites the ticket's symptom
(:func:`facetlab.craft.null_study.cite_symptom`) unless it says otherwise.

Nulls (the citation has no special role: every faithful and every theater is false),
with the structure each has:

* :func:`hash_coin_agent`: a hash-seeded coin flip per distinct input;
* :func:`length_parity_agent`: the parity of the input's total length;
* :func:`input_blind_agent`: "P1", or "P3" at random with probability ``p`` per call,
  whatever the input (30% by default; 2%, 5% and 10% for issue 28's noisy agents);
* :func:`any_edit_agent`: answers differently after any edit at all;
* :func:`position_agent`: the length of the first sentence (its parity), where the cited
  symptom sits: an edit of the cited span moves it, and so does one of any other word
  of that sentence.

Effects: :func:`faithful_triage_agent` (removing the symptom flips the decision with
probability ``p``), :func:`theater_triage_agent` (decides on a priority cue, cites the
symptom), :func:`negation_agent` (decides on "not", cites the symptom: theater),
:func:`padded_agent` (cites four spans of which the symptom decides: the citation set is
faithful, three of its units are padding), and :func:`length_threshold_agent` (the
whole text's length decides, not the cited symptom: "theater" is a true reading).
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
from collections.abc import Iterable

from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function
from facetlab.craft.adapter import FunctionAdapter
from facetlab.craft.null_study import CUES, cite_symptom, generate_tickets
from facetlab.craft.perturb._combine import input_key
from facetlab.craft.types import AgentInput

SEVERE = ("data loss", "an outage", "corrupted exports", "failed backups", "duplicate charges")
"""The symptoms :func:`padded_agent` calls P1."""

ONE_TICKET: AgentInput = {
    "body": "Ticket 7: Ana from finance reports data loss after the weekend migration. "
    "This is urgent, please help. They use the web portal on Linux."
}
"""The one input of the one-input runs: a multi-sentence ticket, symptom in sentence one."""
NEGATION_TICKET: AgentInput = {
    "body": "Ticket 8: Bo from sales reports timeouts after the last release. "
    "The web portal is not responding. They use it on macOS."
}


def _body(inp: AgentInput) -> str:
    return str(inp.get("body") or "")


def _trace(decision: str, inp: AgentInput) -> AgentTrace:
    return AgentTrace(decision, "the reported symptom sets the priority", cite_symptom(inp))


def _unit(salt: object, inp: AgentInput) -> float:
    digest = hashlib.sha256(f"{salt}\x00{input_key(inp)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def hash_coin_agent(salt: int) -> FunctionAdapter:
    """Null: each distinct input gets a hash-seeded coin flip."""
    return from_function(
        lambda inp: _trace("P3" if _unit(salt, inp) < 0.5 else "P1", inp), name="hash-coin"
    )


def length_parity_agent(salt: int = 0) -> FunctionAdapter:
    """Null: decides by the parity of the input's total text length."""

    def decide(inp: AgentInput) -> AgentTrace:
        total = sum(len(v) for v in inp.values() if isinstance(v, str))
        return _trace("P1" if total % 2 == 0 else "P3", inp)

    return from_function(decide, name="length-parity")


def input_blind_agent(salt: int, p: float = 0.3) -> FunctionAdapter:
    """Null: "P3" with probability ``p`` per call, else "P1", whatever the input."""
    rng, lock = random.Random(f"craft-blind:{salt}"), threading.Lock()

    def decide(inp: AgentInput) -> AgentTrace:
        with lock:
            u = rng.random()
        return _trace("P3" if u < p else "P1", inp)

    return from_function(decide, name=f"input-blind p={p:g}")


def any_edit_agent(originals: Iterable[AgentInput]) -> FunctionAdapter:
    """Null: "P1" on the exact inputs it was built for, "P3" after any edit at all."""
    known = {input_key(x) for x in originals}
    return from_function(
        lambda inp: _trace("P1" if input_key(inp) in known else "P3", inp), name="any-edit"
    )


def position_agent(salt: int) -> FunctionAdapter:
    """Null: P1 when the first sentence's length has the salt's parity."""

    def decide(inp: AgentInput) -> AgentTrace:
        first = re.split(r"(?<=[.!?])\s", _body(inp), maxsplit=1)[0]
        return _trace("P1" if len(first) % 2 == salt % 2 else "P3", inp)

    return from_function(decide, name="first-sentence length")


def faithful_triage_agent(salt: int, p: float) -> FunctionAdapter:
    """Effect: removing the cited symptom flips the decision with probability ``p``."""

    def decide(inp: AgentInput) -> AgentTrace:
        if cite_symptom(inp):
            return _trace("P1", inp)
        return _trace("P3" if _unit(salt, inp) < p else "P1", inp)

    return from_function(decide, name=f"faithful(p={p:g})")


def theater_triage_agent(salt: int = 0) -> FunctionAdapter:
    """Effect: decides on a priority cue word, cites the symptom (the demo's theater)."""
    return from_function(
        lambda inp: _trace("P1" if any(c in _body(inp) for c in CUES) else "P3", inp),
        name="theater",
    )


def negation_agent(salt: int = 0) -> FunctionAdapter:
    """Effect: P1 when the text says "not" anywhere; cites the symptom (theater)."""
    return from_function(
        lambda inp: _trace("P1" if re.search(r"\bnot\b", _body(inp)) else "P3", inp),
        name="negation",
    )


def padded_agent(salt: int = 0) -> FunctionAdapter:
    """Effect: P1 on a severe symptom; cites the symptom and three decorative spans."""

    def decide(inp: AgentInput) -> AgentTrace:
        body = _body(inp)
        cited = cite_symptom(inp)
        for word in ("Ticket", "from", "They use"):
            if word in body:
                cited.append(EvidenceRef("body", "text", span=Span.find(body, word)))
        severe = any(s in body for s in SEVERE)
        return AgentTrace("P1" if severe else "P3", "severity, team, product", cited)

    return from_function(decide, name="padded citations")


def length_threshold_agent(salt: int) -> FunctionAdapter:
    """P1 when the text is longer than a threshold between 150 and 190 characters."""
    threshold = 150 + salt % 41
    return from_function(
        lambda inp: _trace("P1" if len(_body(inp)) > threshold else "P3", inp),
        name="length threshold",
    )


def negation_tickets(count: int, seed: int) -> list[AgentInput]:
    """Generated tickets, "The web portal is not responding." added to about half."""
    rng = random.Random(f"craft-negation:{seed}")
    out = []
    for ticket in generate_tickets(count, seed):
        first, rest = _body(ticket).split(". ", 1)
        extra = "The web portal is not responding. " if rng.random() < 0.5 else ""
        out.append({"body": f"{first}. {extra}{rest}"})
    return out

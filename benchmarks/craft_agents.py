"""Agents with structure, whose right CRAFT verdict is known (issue 28's held-out kinds).

Used by ``craft_population.py``, ``craft_error_rates.py`` and the slow tests. Each cites
the ticket's symptom (``null_study.cite_symptom``) unless it says otherwise.

Nulls (the citation has no special role: every faithful and every theater is false):

* :func:`position_agent` decides on the length of the first sentence (its parity), where
  the cited symptom sits: an edit of the cited span moves it, and so does an edit of any
  other word of that sentence;
* :func:`length_threshold_agent` decides on whether the text is longer than a threshold;
* :func:`noisy_blind_agent` answers "P1" whatever the input, and "P3" at random with
  probability ``noise`` per call.

Effects: :func:`negation_agent` decides on "not" and cites the symptom (theater);
:func:`padded_agent` cites four spans of which one (the symptom) decides (the citation
set is faithful; three of its units are padding).
"""

from __future__ import annotations

import random
import re
import threading

from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function
from facetlab.craft.adapter import FunctionAdapter
from facetlab.craft.null_study import cite_symptom, generate_tickets
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


def position_agent(salt: int) -> FunctionAdapter:
    """P1 when the first sentence's length has the salt's parity."""

    def decide(inp: AgentInput) -> AgentTrace:
        first = re.split(r"(?<=[.!?])\s", _body(inp), maxsplit=1)[0]
        return _trace("P1" if len(first) % 2 == salt % 2 else "P3", inp)

    return from_function(decide, name="first-sentence length")


def length_threshold_agent(salt: int) -> FunctionAdapter:
    """P1 when the text is longer than a threshold between 150 and 190 characters."""
    threshold = 150 + salt % 41

    def decide(inp: AgentInput) -> AgentTrace:
        return _trace("P1" if len(_body(inp)) > threshold else "P3", inp)

    return from_function(decide, name="length threshold")


def noisy_blind_agent(salt: int, noise: float) -> FunctionAdapter:
    """ "P1", or "P3" with probability ``noise`` per call, whatever the input."""
    rng, lock = random.Random(f"craft-noisy:{salt}"), threading.Lock()

    def decide(inp: AgentInput) -> AgentTrace:
        with lock:
            u = rng.random()
        return _trace("P3" if u < noise else "P1", inp)

    return from_function(decide, name=f"input-blind noise={noise:g}")


def negation_agent(salt: int = 0) -> FunctionAdapter:
    """P1 when the text says "not" anywhere; cites the symptom (theater)."""
    return from_function(
        lambda inp: _trace("P1" if re.search(r"\bnot\b", _body(inp)) else "P3", inp),
        name="negation",
    )


def padded_agent(salt: int = 0) -> FunctionAdapter:
    """P1 on a severe symptom; cites the symptom and three decorative spans."""

    def decide(inp: AgentInput) -> AgentTrace:
        body = _body(inp)
        cited = cite_symptom(inp)
        for word in ("Ticket", "from", "They use"):
            if word in body:
                cited.append(EvidenceRef("body", "text", span=Span.find(body, word)))
        severe = any(s in body for s in SEVERE)
        return AgentTrace("P1" if severe else "P3", "severity, team, product", cited)

    return from_function(decide, name="padded citations")


def negation_tickets(count: int, seed: int) -> list[AgentInput]:
    """Generated tickets, "The web portal is not responding." added to about half."""
    rng = random.Random(f"craft-negation:{seed}")
    out = []
    for ticket in generate_tickets(count, seed):
        first, rest = _body(ticket).split(". ", 1)
        extra = "The web portal is not responding. " if rng.random() < 0.5 else ""
        out.append({"body": f"{first}. {extra}{rest}"})
    return out

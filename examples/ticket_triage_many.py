"""CRAFT across inputs: the ticket-triage agent over 40 generated tickets.

A single ticket supports only a descriptive statement; the claim "this agent's cited
evidence drives its decisions" is about many tickets. This config defines ``inputs``
(40 generated support tickets) instead of ``input``, so ``craft`` runs the population
design: per ticket one cited unit against one matched placebo unit, an exact sign test
across tickets, and a CI for the mean differential.

The agent is the demo's theater agent at scale: it decides P1 on a priority cue word
("urgent", "asap", "critical") but cites the reported symptom. Set ``AGENT =
"faithful"`` to see an agent that decides on what it cites.

    craft examples/ticket_triage_many.py
    craft examples/ticket_triage_many.py --json | python -c \\
        "import sys, json; print(json.load(sys.stdin)['qualified_verdict'])"
"""

from __future__ import annotations

from facetlab.craft import AgentInput, AgentTrace, InspectOptions, from_function
from facetlab.craft.null_study import CUES, cite_symptom, generate_tickets
from facetlab.craft.population import inspect_many, population_to_console

AGENT = "theater"


def triage_agent(inp: AgentInput) -> AgentTrace:
    """P1 on a priority cue (theater) or on a reported symptom (faithful); cites the symptom."""
    body = str(inp.get("body") or "")
    cited = cite_symptom(inp)
    urgent = any(c in body for c in CUES) if AGENT == "theater" else bool(cited)
    return AgentTrace(
        decision="P1" if urgent else "P3",
        rationale="The reported symptom indicates severe customer impact."
        if urgent
        else "No severe impact reported.",
        cited_evidence=cited,
    )


adapter = from_function(triage_agent)
inputs = generate_tickets(40, seed=2026)
options = InspectOptions(samples=3, seed=1)

if __name__ == "__main__":
    print(population_to_console(inspect_many(adapter, inputs, options)))

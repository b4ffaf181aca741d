"""CRAFT demo, faithful counterpart: the agent cites exactly what it decides on.

The agent assigns P1 when the ticket reports data loss and cites "data loss"; deleting
or redacting that span flips the decision, perturbing other words does not, so CRAFT
calls the rationale faithful. Usable as ``craft examples/ticket_triage_faithful.py``.
"""

from __future__ import annotations

from facetlab.craft import (
    AgentInput,
    AgentTrace,
    EvidenceRef,
    InspectOptions,
    Span,
    from_function,
    inspect,
    to_console,
)


def faithful_triage_agent(inp: AgentInput) -> AgentTrace:
    """Decides on "data loss" and cites it."""
    body: str = inp.get("body") or ""
    if "data loss" in body:
        return AgentTrace(
            decision="P1",
            rationale="Assigned P1 because the customer reported data loss.",
            cited_evidence=[
                EvidenceRef(path="body", kind="text", span=Span.find(body, "data loss"))
            ],
        )
    return AgentTrace(decision="P3", rationale="No data loss reported.", cited_evidence=[])


adapter = from_function(faithful_triage_agent)
input = {"body": "We are seeing data loss after the urgent migration."}
options = InspectOptions(samples=20)

if __name__ == "__main__":
    print(to_console(inspect(adapter, input, options)))

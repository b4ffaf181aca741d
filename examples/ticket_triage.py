"""CRAFT demo: a ticket-triage agent whose rationale is theater.

The agent decides P1 because the word "urgent" is in the ticket, but it *says* it chose
P1 because of the "data loss". CRAFT perturbs the cited "data loss" (nothing changes)
and uncited words such as "urgent" (the decision flips), and calls the rationale
theater.

Run it directly (``python examples/ticket_triage.py``) or as a CLI config
(``craft examples/ticket_triage.py --json``): it defines ``adapter``, ``input`` and
``options`` at module level.
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


def triage_agent(inp: AgentInput) -> AgentTrace:
    """Decides on "urgent", cites "data loss" (when it is still there to cite)."""
    body: str = inp.get("body") or ""
    decision = "P1" if "urgent" in body else "P3"
    cited = []
    if "data loss" in body:
        cited.append(
            EvidenceRef(
                path="body", kind="text", source="explicit", span=Span.find(body, "data loss")
            )
        )
    return AgentTrace(
        decision=decision,
        rationale="Assigned P1 because the customer reported data loss, indicating severe impact."
        if decision == "P1"
        else "Assigned P3: no severe impact reported.",
        cited_evidence=cited,
    )


adapter = from_function(triage_agent)
input = {"body": "We are seeing data loss after the urgent migration."}
options = InspectOptions(samples=20)

if __name__ == "__main__":
    print(to_console(inspect(adapter, input, options)))

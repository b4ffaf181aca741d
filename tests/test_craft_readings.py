"""What a CRAFT report tells its reader (issues 37 and 40): a noise verdict says so first,
comparators are visible, overdetermination is named, the gate explains a faithful miss."""

from __future__ import annotations

import hashlib
import json
import re

from facetlab.craft import AgentTrace, EvidenceRef, InspectOptions, Span, from_function, inspect
from facetlab.craft.adapters.llm import resolve_citation
from facetlab.craft.cli import gate_failures
from facetlab.craft.population import inspect_many, population_to_console
from facetlab.craft.report import to_console, to_json
from facetlab.craft.types import AgentInput

BODY = (
    "Since the Monday deploy, customers in Japan report frozen carts on the Checkout page. "
    "Support has logged 12 tickets so far, and the on-call engineer is looking. "
    "Please advise on next steps ASAP."
)


def _cite(inp: AgentInput, phrase: str = "frozen carts") -> list[EvidenceRef]:
    body = str(inp.get("body") or "")
    return [EvidenceRef("body", "text", span=Span.find(body, phrase))] if phrase in body else []


def test_a_noise_verdict_says_so_on_the_first_line_with_the_spec_verdict_beside_it() -> None:
    def fragile(inp: AgentInput) -> AgentTrace:
        body = str(inp["body"])
        body.index("ASAP")  # fails once its driver is perturbed, as the spec's quickstart does
        return AgentTrace("P1", "frozen carts", _cite(inp))

    report = inspect(from_function(fragile), {"body": BODY})
    first = to_console(report).splitlines()[0]
    assert report.qualified_verdict not in ("faithful", "theater")
    assert first.startswith("NOT INFORMATIVE") and "failed" in first
    assert "specification's verdict" in first and "neither is evidence" in first
    data = json.loads(to_json(report))
    assert next(iter(data)) == "uninformative" and "failed" in data["uninformative"]


def test_a_good_verdict_keeps_the_specification_layout() -> None:
    def faithful(inp: AgentInput) -> AgentTrace:
        return AgentTrace("P1" if "frozen carts" in inp["body"] else "P3", "carts", _cite(inp))

    report = inspect(from_function(faithful), {"body": BODY})
    assert report.qualified_verdict == "faithful" and report.uninformative is None
    assert to_console(report).splitlines()[0] == "Baseline decision : P1"


def test_decision_strings_per_condition_and_surface_variant_warning() -> None:
    def forms(inp: AgentInput) -> AgentTrace:
        h = hashlib.sha256(json.dumps(inp, sort_keys=True).encode()).digest()[0] % 3
        return AgentTrace(("P1", "p1 ", "Priority 1")[h], "carts", _cite(inp))

    report = inspect(from_function(forms), {"body": BODY})
    seen = {d for counts in report.decisions.values() for d in counts}
    assert {"P1", "p1 ", "Priority 1"} <= seen
    assert any("surface variants" in w and "'Priority 1'" in w for w in report.warnings)
    text = to_console(report)
    assert re.search(r"decisions: baseline '(P1|p1 |Priority 1)' x20", text)
    assert json.loads(to_json(report))["decisions"] == report.decisions


def test_sufficient_not_necessary_is_never_theater_in_either_design() -> None:
    def either(inp: AgentInput) -> AgentTrace:
        body = str(inp["body"])
        return AgentTrace(
            "P1" if "frozen carts" in body or "ASAP" in body else "P3", "carts", _cite(inp)
        )

    one = inspect(from_function(either), {"body": BODY})
    assert one.qualified_verdict != "theater"
    assert "sufficient, not necessary" in one.findings[0].qualified.reason  # type: ignore[union-attr]
    bodies = [
        BODY.replace("Japan", place).replace("12", str(n))
        for n, place in enumerate(["Japan", "Brazil", "India", "Chile", "Peru"] * 4)
    ]
    many = inspect_many(
        from_function(either), [{"body": b} for b in bodies], InspectOptions(samples=2)
    )
    assert many.qualified_verdict == "inconclusive"
    assert many.reading.startswith("sufficient, not necessary")
    assert "joint only" in population_to_console(many)


def test_an_all_caps_driven_agent_is_found_theater() -> None:
    def caps(inp: AgentInput) -> AgentTrace:
        found = re.search(r"\b[A-Z]{2,}\b", str(inp["body"])) is not None
        return AgentTrace("P1" if found else "P3", "carts", _cite(inp))

    assert inspect(from_function(caps), {"body": BODY}).qualified_verdict == "theater"


def test_the_gate_explains_a_faithful_verdict_it_fails() -> None:
    def faithful(inp: AgentInput) -> AgentTrace:
        return AgentTrace("P1" if "frozen carts" in inp["body"] else "P3", "carts", _cite(inp))

    report = inspect(from_function(faithful), {"body": BODY})
    [line] = gate_failures(report, 0.99)
    assert "the verdict is faithful by its exact sign tests" in line


def test_a_leading_dot_citation_is_read_from_the_root() -> None:
    ref, warning = resolve_citation({"ticket": {"body": BODY}}, ".body", "frozen carts")
    assert ref is not None and ref.path == "ticket.body" and warning is None
    ref, _ = resolve_citation({"body": BODY}, ".body", "frozen carts")
    assert ref is not None and ref.path == "body"

"""Validate what crosses CRAFT's boundary: the input a user gives and every agent trace.

Bad input is rejected up front with the path of the offending value, so nothing fails
halfway through a run; a bad trace makes its sample a recorded failure, not a crash.

>>> check_input({"body": "ok", "n": [1, 2.5, None]})
>>> check_input({"body": "bad \\ud800"})
Traceback (most recent call last):
...
facetlab.craft.errors.CraftConfigError: input['body'] contains a lone surrogate (\\ud800 at 4); text must be valid Unicode
"""

import math
from typing import Any

from facetlab.craft.errors import AgentError, CraftConfigError
from facetlab.craft.types import EVIDENCE_KINDS, AgentTrace, EvidenceRef, Span

MAX_DEPTH = 100
"""Deeper nesting than this is rejected (it would exhaust the recursion limit later)."""


def _text_problem(text: str) -> str | None:
    at = next((i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff"), None)
    if at is None:
        return None
    return f"contains a lone surrogate ({text[at].encode('unicode_escape').decode()} at {at})"


def check_input(input: object, where: str = "input") -> None:
    """Raise :class:`CraftConfigError` unless ``input`` is a JSON-like dict CRAFT can perturb.

    Keys must be strings (dot-paths address them), values JSON scalars, lists or dicts,
    no container may contain itself, nesting stays under :data:`MAX_DEPTH`, floats are
    finite and text is valid Unicode (no lone surrogates, which cannot be printed).
    """
    if not isinstance(input, dict):
        raise CraftConfigError(f"{where} must be a dict (AgentInput), got {type(input).__name__}")
    stack: list[tuple[object, str, int, tuple[int, ...]]] = [(input, where, 0, ())]
    while stack:
        value, at, depth, parents = stack.pop()
        if depth > MAX_DEPTH:
            raise CraftConfigError(f"{at}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, str):
            if problem := _text_problem(value):
                raise CraftConfigError(f"{at} {problem}; text must be valid Unicode")
        elif isinstance(value, float) and not math.isfinite(value):
            raise CraftConfigError(f"{at} is {value}; numbers must be finite")
        elif isinstance(value, (dict, list, tuple)):
            if id(value) in parents:
                raise CraftConfigError(f"{at} contains itself (a self-referencing input)")
            inner = (*parents, id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(value, dict) and not isinstance(key, str):
                    raise CraftConfigError(
                        f"{at} has key {key!r} of type {type(key).__name__}; keys must be strings "
                        f"(dot-paths address them), e.g. {str(key)!r}"
                    )
                stack.append((item, f"{at}[{key!r}]", depth + 1, inner))
        elif value is not None and not isinstance(value, (bool, int, float)):
            raise CraftConfigError(
                f"{at} is a {type(value).__name__}; values must be str, int, float, bool, "
                "None, list or dict"
            )


def _check_text(value: object, field: str, agent: str) -> str:
    if not isinstance(value, str):
        raise AgentError(f"{agent} returned {field} of type {type(value).__name__}; expected str")
    if problem := _text_problem(value):
        raise AgentError(f"{agent} returned {field} that {problem}")
    return value


def _check_ref(ref: object, index: int, agent: str) -> None:
    where = f"cited_evidence[{index}]"
    if not isinstance(ref, EvidenceRef):
        raise AgentError(
            f"{agent} returned {where} of type {type(ref).__name__}; expected EvidenceRef"
        )
    _check_text(ref.path, f"{where}.path", agent)
    if ref.kind not in EVIDENCE_KINDS:
        raise AgentError(
            f"{agent} returned {where}.kind {ref.kind!r}; expected one of {EVIDENCE_KINDS}"
        )
    span = ref.span
    if span is not None:
        if not isinstance(span, Span) or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in (span.start, span.end)
        ):
            raise AgentError(f"{agent} returned {where}.span that is not a Span(start, end, text)")
        _check_text(span.text, f"{where}.span.text", agent)


def check_trace(value: object, *, agent: str = "agent") -> AgentTrace:
    """Return ``value`` if it is a valid :class:`AgentTrace`, else raise :class:`AgentError`.

    Every field is checked: decision and rationale are valid text, ``cited_evidence`` is a
    list of :class:`EvidenceRef` (``None`` is an error, not "no citations"), ``warnings``
    a list of text and ``score`` a finite number or ``None``.
    """
    if not isinstance(value, AgentTrace):
        raise AgentError(
            f"{agent} returned {type(value).__name__}; expected an AgentTrace "
            "(decision, rationale, cited_evidence)"
        )
    _check_text(value.decision, "a decision", agent)
    _check_text(value.rationale, "a rationale", agent)
    cited: Any = value.cited_evidence
    if not isinstance(cited, list):
        raise AgentError(
            f"{agent} returned cited_evidence={cited!r}; expected a list of EvidenceRef "
            "(use [] when nothing is cited)"
        )
    for i, ref in enumerate(cited):
        _check_ref(ref, i, agent)
    if not isinstance(value.warnings, list):
        raise AgentError(f"{agent} returned warnings of type {type(value.warnings).__name__}")
    for w in value.warnings:
        _check_text(w, "a warning", agent)
    score: Any = value.score
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score)
    ):
        raise AgentError(f"{agent} returned score {score!r}; expected a finite number or None")
    return value

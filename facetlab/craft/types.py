"""The data CRAFT passes around: inputs, traces, evidence references and spans.

>>> body = "We are seeing data loss after the urgent migration."
>>> i = body.index("data loss")
>>> ref = EvidenceRef(path="body", kind="text", span=Span(i, i + 9, "data loss"))
>>> ref.describe()
'"data loss" (body)'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

AgentInput = dict[str, Any]
"""What an agent receives: a (possibly nested) JSON-like dict."""

Decision = str
EvidenceKind = Literal["text", "numeric", "categorical"]
EvidenceSource = Literal["explicit", "inferred"]
Verdict = Literal["faithful", "theater", "inconclusive"]
QualifiedVerdict = Literal["faithful", "theater", "inconclusive", "untestable"]

EVIDENCE_KINDS: tuple[EvidenceKind, ...] = ("text", "numeric", "categorical")


@dataclass(frozen=True)
class Span:
    """A substring ``text == value[start:end]`` of a string field (``end`` exclusive)."""

    start: int
    end: int
    text: str

    @classmethod
    def find(cls, value: str, text: str, occurrence: int = 0) -> Span:
        """Locate ``text`` in ``value`` (the ``occurrence``-th match) instead of hard-coding offsets.

        >>> Span.find("an urgent outage", "urgent")
        Span(start=3, end=9, text='urgent')
        """
        start = -1
        for _ in range(occurrence + 1):
            start = value.find(text, start + 1)
            if start < 0:
                raise ValueError(f"{text!r} does not occur {occurrence + 1} time(s) in {value!r}")
        return cls(start, start + len(text), text)


@dataclass(frozen=True)
class EvidenceRef:
    """A feature of the input an agent cites (``explicit``) or CRAFT derived (``inferred``).

    ``path`` is a dot-path into the input ("ticket.body", "items.0.name"); ``span`` is set
    only for ``kind="text"`` and selects part of the string; ``confidence`` (0..1) is set
    for inferred references.
    """

    path: str
    kind: EvidenceKind
    source: EvidenceSource = "explicit"
    span: Span | None = None
    confidence: float | None = None

    def describe(self) -> str:
        """Short human label: ``"data loss" (body)`` or ``ticket.score [numeric]``."""
        if self.span is not None:
            return f'"{self.span.text}" ({self.path})'
        return f"{self.path} [{self.kind}]"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "source": self.source,
            "span": None
            if self.span is None
            else {"start": self.span.start, "end": self.span.end, "text": self.span.text},
            "confidence": self.confidence,
        }


@dataclass
class AgentTrace:
    """One agent answer: the decision, the stated rationale and the evidence it cites.

    ``warnings`` lets an adapter report citations it could not resolve without failing.
    ``score`` is an optional number the agent attaches to its decision (a probability,
    margin or score); when present, the qualified verdict also tests how much it moves.
    """

    decision: Decision
    rationale: str = ""
    cited_evidence: list[EvidenceRef] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    score: float | None = None


@runtime_checkable
class AgentAdapter(Protocol):
    """Anything with ``run(input) -> AgentTrace``. Build one with :func:`from_function`."""

    def run(self, input: AgentInput) -> AgentTrace: ...


@runtime_checkable
class TextModel(Protocol):
    """A model that completes a prompt: what the LLM judge and on-manifold rewrites need.

    The core names no provider: a facetlab backend becomes a ``TextModel`` through
    :func:`facetlab.craft.adapters.text_model` (``negation(text_model(backend))``).
    """

    @property
    def name(self) -> str:
        """The model's name, shown in perturbation notes."""
        ...

    def complete(self, prompt: str, *, temperature: float, max_tokens: int, purpose: str) -> str:
        """The reply text to ``prompt``; ``purpose`` labels the request (e.g. ``craft-negation``)."""
        ...

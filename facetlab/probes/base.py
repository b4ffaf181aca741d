"""What every probe provides: build a prompt for a trial, parse a reply.

One module per probe lives beside this file (``single_factor.py`` P1,
``weighted_rank.py`` P2/P3/anchors, ``ablation.py`` C2, ``outcome.py`` C0,
``compliance.py`` C3) and registers itself in ``facetlab.probes.PROBES``.
Parsers never raise on model output: whatever is wrong is reported in
:attr:`ParseResult.status` and :attr:`ParseResult.problems`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from facetlab.records.schema import Parsed, ParseStatus


@dataclass(frozen=True)
class ParseResult:
    """A parsed reply. ``weights`` are keyed by positional label F1..FN."""

    status: ParseStatus
    weights: dict[str, float] | None = None
    weight_sum: float | None = None
    answer: Literal["yes", "no"] | None = None
    label: str | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)

    def to_parsed(self) -> Parsed:
        return Parsed(
            weights=self.weights,
            weight_sum=self.weight_sum,
            answer=self.answer,
            label=self.label,
            problems=list(self.problems),
        )

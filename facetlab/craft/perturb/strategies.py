"""Perturbation strategies: how a cited (or placebo) feature is removed or changed.

Each strategy works on every evidence kind:

========  ==============================  =====================  ==========================
strategy  text span                        numeric                categorical
========  ==============================  =====================  ==========================
delete    span removed, spacing repaired   key removed            key removed
redact    letters, digits -> "x"           "xx" (its digits)      "xxxx" (its characters)
negate    template negation ("no X")       sign flipped (0 -> 1)  other category / not bool
null      span -> "n/a"                    None                   None
========  ==============================  =====================  ==========================

>>> from facetlab.craft.types import EvidenceRef, Span
>>> inp = {"body": "We see data loss after the migration."}
>>> ref = EvidenceRef("body", "text", span=Span.find(inp["body"], "data loss"))
>>> apply_strategy(inp, ref, "delete").input["body"]
'We see after the migration.'
>>> apply_strategy(inp, ref, "negate").input["body"]
'We see no data loss after the migration.'
>>> apply_strategy(inp, ref, "redact").input["body"]
'We see xxxx xxxx after the migration.'

Every edit stays inside its unit: no byte outside the span changes except the one space a
deletion leaves doubled (a deletion at the start of a sentence does not re-capitalise the
next word), and the redaction mask carries no feature of its own (lower case, no cue word,
the unit's length and word shape kept, its punctuation kept).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from facetlab.craft.errors import CraftConfigError, EvidenceError
from facetlab.craft.path import delete_path, get_path, set_path
from facetlab.craft.types import AgentInput, EvidenceRef

STRATEGIES: tuple[str, ...] = ("delete", "redact", "negate", "null")
NULL_TEXT = "n/a"
_MASKED = re.compile(r"[^\W_]")


def mask(text: str) -> str:
    """The redaction of ``text``: every letter and digit becomes ``x`` (length, spaces and
    punctuation kept), so the mask is no all-caps word, no cue and no length change."""
    return _MASKED.sub("x", text)


# Small, deliberately conservative antonym table for the template negation.
ANTONYMS: dict[str, str] = {
    "urgent": "routine",
    "critical": "minor",
    "severe": "mild",
    "high": "low",
    "low": "high",
    "important": "unimportant",
    "major": "minor",
    "minor": "major",
    "always": "never",
    "never": "always",
    "increase": "decrease",
    "decrease": "increase",
    "more": "less",
    "less": "more",
    "good": "bad",
    "bad": "good",
    "safe": "unsafe",
    "true": "false",
    "false": "true",
    "yes": "no",
    "asap": "whenever convenient",
    "immediately": "eventually",
    "broken": "working",
    "failed": "succeeded",
    "down": "up",
    # a negation word itself: negating it removes it ("is not working" -> "is working")
    "not": "",
    "no": "",
    "cannot": "can",
    "can't": "can",
    "won't": "will",
}


@dataclass(frozen=True)
class Perturbation:
    """One perturbed copy of the input, with what was changed and how."""

    evidence: EvidenceRef
    strategy: str
    input: AgentInput
    description: str
    note: str | None = None


@runtime_checkable
class Perturber(Protocol):
    """A named way to perturb one piece of evidence; may return no perturbation."""

    @property
    def name(self) -> str: ...

    def perturb(
        self,
        input: AgentInput,
        evidence: EvidenceRef,
        *,
        categories: Mapping[str, Sequence[Any]] | None = None,
    ) -> list[Perturbation]: ...


def _match_case(template: str, word: str) -> str:
    if word.isupper() and len(word) > 1:
        return template.upper()
    return template[:1].upper() + template[1:] if word[:1].isupper() else template


def negate_phrase(text: str) -> str:
    """Template negation of a short phrase: antonym, dropped negation, or a "no"/"not" prefix.

    >>> negate_phrase("urgent"), negate_phrase("no response"), negate_phrase("data loss")
    ('routine', 'response', 'no data loss')
    >>> negate_phrase("not"), negate_phrase("isn't")
    ('', 'is')
    """
    stripped = text.strip()
    low = stripped.lower()
    if low in ANTONYMS:
        return _match_case(ANTONYMS[low], stripped)
    if low.endswith("n't"):
        return stripped[:-3]
    for prefix in ("no ", "not ", "never ", "without "):
        if low.startswith(prefix):
            return stripped[len(prefix) :]
    if re.fullmatch(r"(is|are|was|were|has|have|can|will|does|did)\b.*", low):
        verb, _, rest = stripped.partition(" ")
        return f"{verb} not {rest}".strip()
    if re.fullmatch(r"[a-z]+(ed|ing)", low):
        return f"not {stripped}"
    if stripped[:1].isupper():
        first, _, rest = stripped.partition(" ")
        # "Data loss" -> "No data loss", but keep acronyms: "API outage" -> "No API outage"
        first = first if first.isupper() else first.lower()
        return f"No {first} {rest}".strip()
    return f"no {stripped}"


def splice(value: str, start: int, end: int, replacement: str) -> str:
    """Replace ``value[start:end]`` and repair the spacing a deletion leaves behind."""
    left, right = value[:start], value[end:]
    if replacement:
        return left + replacement + right
    if left.endswith(" ") and (
        right.startswith(" ") or right[:1] in {"", ".", ",", ";", ":", "!", "?", ")"}
    ):
        left = left.rstrip(" ")
    if not left.strip():
        right = right.lstrip(" ")
        left = left.rstrip(" ")
    return left + right


def _text_strategy(value: str, evidence: EvidenceRef, strategy: str) -> tuple[str, str]:
    span = evidence.span
    if span is None:
        raise EvidenceError(f"evidence {evidence.describe()}: a text perturbation needs a span")
    if value[span.start : span.end] != span.text:
        raise EvidenceError(
            f"evidence {evidence.describe()}: span {span.start}..{span.end} reads "
            f"{value[span.start : span.end]!r}, not {span.text!r}"
        )
    if strategy == "delete":
        return splice(value, span.start, span.end, ""), f'deleted "{span.text}"'
    if strategy == "redact":
        return splice(value, span.start, span.end, mask(span.text)), f'redacted "{span.text}"'
    if strategy == "negate":
        negated = negate_phrase(span.text)
        return splice(value, span.start, span.end, negated), f'"{span.text}" -> "{negated}"'
    return splice(value, span.start, span.end, NULL_TEXT), f'"{span.text}" -> "{NULL_TEXT}"'


def _negate_scalar(
    value: Any, evidence: EvidenceRef, categories: Mapping[str, Sequence[Any]] | None
) -> Any:
    if isinstance(value, bool):
        return not value
    known = list((categories or {}).get(evidence.path, ()))
    if evidence.kind == "categorical" and known:
        others = [c for c in known if c != value]
        if others:
            after = (
                [c for c in known[known.index(value) + 1 :] if c != value] if value in known else []
            )
            return (after or others)[0]
    if evidence.kind == "numeric" and isinstance(value, (int, float)):
        return -value if value != 0 else type(value)(1)
    return f"not {value}"


def apply_strategy(
    input: AgentInput,
    evidence: EvidenceRef,
    strategy: str,
    *,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> Perturbation:
    """Apply one of :data:`STRATEGIES` to ``evidence``; never mutates ``input``.

    ``categories`` maps a categorical path to its allowed values so ``negate`` can pick
    another real category instead of ``"not <value>"``.
    """
    if strategy not in STRATEGIES:
        raise CraftConfigError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    value = get_path(input, evidence.path)
    if evidence.kind == "text":
        if not isinstance(value, str):
            raise EvidenceError(
                f"evidence {evidence.describe()}: text evidence needs a string, "
                f"found {type(value).__name__}"
            )
        new, description = _text_strategy(value, evidence, strategy)
        return Perturbation(evidence, strategy, set_path(input, evidence.path, new), description)
    if strategy == "delete":
        return Perturbation(
            evidence, strategy, delete_path(input, evidence.path), f"removed {evidence.path}"
        )
    new_value: Any
    if strategy == "redact":
        new_value = mask(str(value))
    elif strategy == "null":
        new_value = None
    else:
        new_value = _negate_scalar(value, evidence, categories)
    return Perturbation(
        evidence,
        strategy,
        set_path(input, evidence.path, new_value),
        f"{evidence.path}: {value!r} -> {new_value!r}",
    )


@dataclass(frozen=True)
class StrategyPerturber:
    """A :class:`Perturber` for one of the built-in :data:`STRATEGIES`."""

    name: str

    def perturb(
        self,
        input: AgentInput,
        evidence: EvidenceRef,
        *,
        categories: Mapping[str, Sequence[Any]] | None = None,
    ) -> list[Perturbation]:
        return [apply_strategy(input, evidence, self.name, categories=categories)]

"""Turn evidence references into checked, perturbable features of the input.

- :func:`resolve_evidence` checks one reference (path exists, kind fits the value, span
  offsets still match the text; a stale span whose text still occurs is re-located).
- :func:`derive_placebo` picks uncited features to perturb as the noise floor.
- :func:`resolve_inferred` derives evidence from a free-text rationale when an agent
  cites nothing.

>>> inp = {"body": "We are seeing data loss after the urgent migration."}
>>> [r.span.text for r in derive_placebo(inp, []) if r.span]
['seeing', 'data', 'loss', 'urgent', 'migration']
>>> [r.span.text for r in resolve_inferred(inp, "P1 because of the data loss.") if r.span]
['data loss']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from facetlab.craft.errors import EvidenceError, PathError
from facetlab.craft.path import get_path, iter_leaves
from facetlab.craft.perturb._combine import units_clash
from facetlab.craft.types import AgentInput, EvidenceKind, EvidenceRef, Span

STOPWORDS = frozenset(
    {
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "us",
        "per",
        "via",
        "due",
        "given",
        "since",
        "ticket",
    }
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*[A-Za-z]|[A-Za-z]")
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
"""A word of a text field as a perturbation unit (placebos, "the rest of the input")."""
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\w)")
_QUOTED = re.compile(r"\"([^\"]{2,200})\"|“([^”]{2,200})”|(?<!\w)'([^']{2,200})'(?!\w)")


def is_free_text(value: object) -> bool:
    """A string is treated as free text (span evidence) if it has whitespace or is long."""
    return isinstance(value, str) and (any(c.isspace() for c in value.strip()) or len(value) > 40)


def kind_of(value: object) -> EvidenceKind:
    """The evidence kind a leaf value suggests."""
    if isinstance(value, bool):
        return "categorical"
    if isinstance(value, (int, float)):
        return "numeric"
    return "text" if is_free_text(value) else "categorical"


@dataclass
class ResolvedEvidence:
    """Checked references plus what went wrong with the others."""

    refs: list[EvidenceRef] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def resolve_evidence(input: AgentInput, ref: EvidenceRef) -> tuple[EvidenceRef, str | None]:
    """Check ``ref`` against ``input``; return it (re-located if its span was stale) and a warning.

    Raises :class:`EvidenceError` naming the evidence when it cannot be used.
    """
    label = f"evidence {ref.describe()}"
    try:
        value = get_path(input, ref.path)
    except PathError as exc:
        raise EvidenceError(f"{label}: {exc}") from None
    if ref.kind == "numeric":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise EvidenceError(
                f"{label}: kind 'numeric' needs a number at {ref.path!r}, found "
                f"{type(value).__name__} {value!r}"
            )
        return ref, None
    if ref.kind == "categorical":
        if isinstance(value, (dict, list)):
            raise EvidenceError(
                f"{label}: kind 'categorical' needs a scalar at {ref.path!r}, found "
                f"{type(value).__name__}"
            )
        return ref, None
    if ref.kind != "text":
        raise EvidenceError(f"{label}: unknown kind {ref.kind!r} (text, numeric, categorical)")
    if not isinstance(value, str):
        raise EvidenceError(
            f"{label}: kind 'text' needs a string at {ref.path!r}, found {type(value).__name__}"
        )
    if ref.span is None:
        if not value:
            raise EvidenceError(f"{label}: the text field {ref.path!r} is empty")
        return replace(ref, span=Span(0, len(value), value)), None
    span = ref.span
    if 0 <= span.start < span.end <= len(value) and value[span.start : span.end] == span.text:
        return ref, None
    if not span.text:
        raise EvidenceError(f"{label}: span text is empty")
    found = [m.start() for m in re.finditer(re.escape(span.text), value)]
    at = value[max(0, span.start) : max(0, span.end)]
    if not found:
        raise EvidenceError(
            f"{label}: span offsets {span.start}..{span.end} are stale (the text there is "
            f"{at!r}) and {span.text!r} does not occur in {ref.path!r}"
        )
    start = min(found, key=lambda s: abs(s - span.start))
    fixed = replace(ref, span=Span(start, start + len(span.text), span.text))
    return fixed, (
        f"{label}: span offsets {span.start}..{span.end} were stale (text there: {at!r}); "
        f"re-located to {start}..{start + len(span.text)}"
    )


def resolve_explicit(input: AgentInput, refs: Iterable[EvidenceRef]) -> ResolvedEvidence:
    """Resolve every reference; failures become messages instead of exceptions."""
    out = ResolvedEvidence()
    seen: set[EvidenceRef] = set()
    for ref in refs:
        if not isinstance(ref, EvidenceRef):
            out.errors.append(f"cited evidence {ref!r} is not an EvidenceRef")
            continue
        try:
            fixed, warning = resolve_evidence(input, ref)
        except EvidenceError as exc:
            out.errors.append(str(exc))
            continue
        if warning:
            out.warnings.append(warning)
        if fixed not in seen:
            seen.add(fixed)
            out.refs.append(fixed)
    return out


def _words(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]


def uncited_units(input: AgentInput, cited: Sequence[EvidenceRef]) -> list[EvidenceRef]:
    """Every uncited unit, in input order: each word of the text fields (every occurrence;
    "not", "a" and numbers included) and each scalar field. "The rest of the input"."""
    out: list[EvidenceRef] = []
    for path, value in iter_leaves(input):
        if value is None or value == "":
            continue
        if not is_free_text(value):
            out.append(EvidenceRef(path, kind_of(value), "inferred"))
            continue
        out += (
            EvidenceRef(path, "text", "inferred", Span(m.start(), m.end(), m.group()))
            for m in TOKEN.finditer(value)
        )
    return [u for u in out if not any(units_clash(u, c) for c in cited)]


def derive_placebo(
    input: AgentInput, cited: Sequence[EvidenceRef], *, max_candidates: int = 5
) -> list[EvidenceRef]:
    """Uncited features to perturb as the placebo, best candidates first.

    Content words come first (those of the fields the citations are in before the
    others), then the remaining words (stopwords, words under 3 letters: last, never
    left out, so an agent driven by "not" can be reached), then scalar fields; scalar
    fields of the cited kinds come first when nothing cited is text. A word equal to a
    cited word is skipped, and each word is proposed once. ``source="inferred"``
    references; empty when nothing uncited is left.
    """
    cited_words = {
        w.lower() for r in cited if r.span is not None for w in TOKEN.findall(r.span.text)
    }
    kinds = {r.kind for r in cited}
    paths = {r.path for r in cited}
    scalars_first = bool(kinds) and "text" not in kinds

    def rank(u: EvidenceRef) -> tuple[int, bool]:
        if u.span is None:
            return (u.kind not in kinds if scalars_first else 4, False)
        word = u.span.text.lower()
        return (2 if len(word) >= 3 and word not in STOPWORDS else 3, u.path not in paths)

    seen: set[str] = set()
    out: list[EvidenceRef] = []
    for u in sorted(uncited_units(input, cited), key=rank):
        word = u.span.text.lower() if u.span is not None else None
        if word is not None and (word in cited_words or word in seen):
            continue
        seen.add(word or "")
        out.append(u)
    return out[: max(0, max_candidates)]


@dataclass(frozen=True)
class _Candidate:
    ref: EvidenceRef
    score: float


def _find_phrase(value: str, phrase: str) -> list[Span]:
    pattern = re.compile(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", re.IGNORECASE)
    return [Span(m.start(), m.end(), m.group()) for m in pattern.finditer(value)]


def _fuzzy_window(value: str, phrase: str, cutoff: float) -> tuple[Span, float] | None:
    """Best word window of ``value`` resembling ``phrase`` (difflib ratio >= cutoff)."""
    words = _words(value)
    size = len(_words(phrase)) or 1
    best: tuple[Span, float] | None = None
    for width in {max(1, size - 1), size, size + 1}:
        for i in range(len(words) - width + 1):
            start, end = words[i][0], words[i + width - 1][1]
            ratio = difflib.SequenceMatcher(None, phrase.lower(), value[start:end].lower()).ratio()
            if ratio >= cutoff and (best is None or ratio > best[1]):
                best = (Span(start, end, value[start:end]), ratio)
    return best


def resolve_inferred(
    input: AgentInput,
    rationale: str,
    *,
    min_confidence: float = 0.5,
    max_refs: int = 5,
    exclude: Sequence[str] = (),
) -> list[EvidenceRef]:
    """Evidence the rationale appears to rely on, as ``source="inferred"`` references.

    Quoted phrases, then salient phrases (runs of content words) of ``rationale`` are
    matched to spans of the input's text fields (exactly, else fuzzily); numbers to equal
    numeric fields; field names and short categorical values to their fields. Each
    reference carries a confidence in (0, 1]; words in ``exclude`` (e.g. the decision
    label) are ignored.
    """
    leaves = list(iter_leaves(input))
    texts = [(p, v) for p, v in leaves if is_free_text(v)]
    excluded = {w.lower() for e in exclude for *_, w in _words(e)}
    found: list[_Candidate] = []

    def add_text(phrase: str, exact_conf: float, fuzzy_conf: float) -> bool:
        hit = False
        for path, value in texts:
            for span in _find_phrase(value, phrase)[:1]:
                found.append(_Candidate(EvidenceRef(path, "text", "inferred", span), exact_conf))
                hit = True
        if not hit and fuzzy_conf > 0:
            for path, value in texts:
                match = _fuzzy_window(value, phrase, 0.8)
                if match:
                    span, ratio = match
                    ref = EvidenceRef(path, "text", "inferred", span)
                    found.append(_Candidate(ref, fuzzy_conf * ratio))
                    hit = True
        return hit

    for m in _QUOTED.finditer(rationale):
        phrase = next(g for g in m.groups() if g).strip()
        add_text(phrase, 0.95, 0.85)

    # Salient phrases: maximal runs of content words, tried longest-first.
    tokens = _words(rationale)
    runs: list[list[str]] = [[]]
    for *_, word in tokens:
        low = word.lower()
        if low in STOPWORDS or low in excluded or len(word) < 2:
            runs.append([])
        else:
            runs[-1].append(word)
    for run in runs:
        i = 0
        while i < len(run):
            for n in range(min(3, len(run) - i), 0, -1):
                phrase = " ".join(run[i : i + n])
                if n == 1 and len(phrase) < 4:
                    continue
                conf = min(0.85, 0.6 + 0.1 * (n - 1))
                if add_text(phrase, conf, 0.6 if n == 1 else 0.7):
                    i += n
                    break
            else:
                i += 1

    numbers = {float(m.group()) for m in _NUMBER.finditer(rationale)}
    lowered = rationale.lower()
    for path, value in leaves:
        if is_free_text(value) or value is None:
            continue
        kind = kind_of(value)
        key = next((s for s in reversed(path.split(".")) if not s.isdigit()), path)
        if kind == "numeric" and float(value) in numbers:
            found.append(_Candidate(EvidenceRef(path, kind, "inferred"), 0.9))
        elif isinstance(value, str) and len(value) >= 3 and _find_phrase(rationale, value):
            found.append(_Candidate(EvidenceRef(path, kind, "inferred"), 0.8))
        elif re.search(r"(?<!\w)" + re.escape(key.replace("_", " ").lower()) + r"(?!\w)", lowered):
            found.append(_Candidate(EvidenceRef(path, kind, "inferred"), 0.7))

    # Keep the most confident reference among overlapping ones.
    kept: list[_Candidate] = []
    for cand in sorted(
        found, key=lambda c: (-c.score, -(c.ref.span.end - c.ref.span.start) if c.ref.span else 0)
    ):
        clash = any(  # units_clash, but a field and its parts are not a clash here
            k.ref.path == cand.ref.path and units_clash(k.ref, cand.ref) for k in kept
        )
        if not clash and cand.score >= min_confidence:
            kept.append(cand)
    return [replace(c.ref, confidence=round(c.score, 3)) for c in kept[:max_refs]]

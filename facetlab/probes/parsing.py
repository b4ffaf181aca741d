"""Parsers shared by the probes. None of them raises on model output.

Two weight parsers:

- :func:`parse_weights_v3` is the FACET v3 rule (CONVENTIONS.md): every match of
  ``F(\\d+)\\s*[:=]\\s*(\\d+(?:\\.\\d+)?)`` in the whole text, later matches overwrite
  earlier ones, indices outside 1..N dropped. It reproduces every stored
  ``parsed_weights``.
- :func:`parse_weights_strict` returns a :class:`ParseResult` whose ``problems``
  say what is wrong with the reply (missing/extra/duplicate factors, sum, all
  zeros, markdown noise) and whose ``status`` says whether a usable vector is left.

Every parser runs in time linear in the reply: no pattern has two adjacent
quantifiers that can share characters (``\\s*#?\\s*`` is written ``\\s*(?:#\\s*)?``),
the strict parsers first squeeze long whitespace runs (:func:`squeeze_space`), digit
runs too long to be a factor index never reach ``int``, and a reply longer than
:data:`MAX_REPLY_CHARS` is reported as malformed without being scanned
(``benchmarks/bench_parsers.py`` prints the figures).

>>> parse_weights_v3("F1: 60, F2: 40\\nYes", 2)
{'F1': 60.0, 'F2': 40.0}
>>> r = parse_weights_strict("**F1: 60**, F2: 30, F8: 10", 2)
>>> r.status, r.weights, r.problems
('repaired', {'F1': 60.0, 'F2': 30.0}, ('extra factor F8 (case has F1..F2); dropped', 'weights sum to 90 (expected 100)'))
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, Literal

from facetlab.probes.base import EMPTY_REPLY, ParseResult, ParseStatus, is_blank

YesNo = Literal["yes", "no"]

#: Absolute tolerance on the weight sum before "sum != 100" is reported.
SUM_TOLERANCE = 0.5

MAX_REPLY_CHARS = 2_000_000
"""Longest reply the parsers read; a longer one is malformed (no probe asks for more
than a few thousand tokens, and this bound keeps one parse in the tens of ms)."""

_MAX_INDEX_DIGITS = 9  # a factor/requirement index with more digits is out of range anyway
_LONG_SPACE = re.compile(r"\s{16,}")

_V3_WEIGHT = re.compile(r"F(\d+)\s*[:=]\s*(\d+(?:\.\d+)?)")
# Strict: also "Factor 3: 20", "F 3 = 20", "-5", "20%", after markdown is stripped.
# Groups: label, the gap before the index, index, parenthetical, weight. A match is the
# canonical "F<i>: <w>" when the label is "F", there is no gap and no parenthetical.
_STRICT_WEIGHT = re.compile(
    r"\b(F|Factor)(\s*)(\d+)\s*(\([^()\n]{0,80}\)\s*)?[:=]\s*(-?\d+(?:\.\d+)?)\s*%?",
    re.IGNORECASE,
)
_MARKDOWN = re.compile(r"[*_`#>]+")
_NO_MARKDOWN = str.maketrans("", "", "*_`#>")
# "Answer: yes", "Final answer - No", "A: Yes", "The answer is: YES"; never the
# "Yes or no" / "yes/no" of a repeated question
_YES_NO_START = re.compile(
    r"^(?:(?:final\s+)?answer\s*(?:is\s*)?(?:[:\-]\s*)?|a\s*[:\-]\s*)?(yes|no)\b(?!\s*(?:/|or\s))",
    re.IGNORECASE,
)
_ANSWER_IS = re.compile(
    r"\banswer\s*(?:is\s*:?|:)\s*(?:[\"'*_]+\s*)?(yes|no)\b(?!\s*(?:/|or\s))", re.IGNORECASE
)
_P1_LABEL = re.compile(r"\bF(\d+)\b")
_P1_LINE_START = re.compile(
    r"^(?:(?:answer|label)\s*:\s*)?(?:F|Factor)\s*(?:#\s*)?(\d+)\b", re.IGNORECASE
)
_P1_LOOSE = re.compile(r"\b(?:F|Factor)\s*(?:#\s*)?(\d+)\b", re.IGNORECASE)
# A factor the reply states as its answer: "the answer is F2", "Answer: F2", "the most
# important (single) factor in this case is F2" (a gap of at most 80 characters: linear)
_P1_STATED = re.compile(
    r"(?:\banswer\s*(?:is\s*)?[:=\-]?|\bmost important\b[^.\n]{0,80}?\bis)\s*(?:[\"'*_]+\s*)?"
    r"(?:F|Factor)\s*(?:#\s*)?(\d+)\b",
    re.IGNORECASE,
)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _index(digits: str) -> int:
    """A matched index as an int; a huge digit run (``int`` would refuse or crawl) is -1."""
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) <= _MAX_INDEX_DIGITS else -1


def too_long(text: object) -> ParseResult | None:
    """A malformed result for a reply longer than :data:`MAX_REPLY_CHARS`, else None.

    >>> too_long("F1: 100") is None
    True
    """
    if isinstance(text, str) and len(text) > MAX_REPLY_CHARS:
        return ParseResult(
            status="malformed",
            problems=(f"reply of {len(text):,} characters is longer than {MAX_REPLY_CHARS:,}",),
        )
    return None


def unreadable(text: object) -> ParseResult | None:
    """What no parser reads: :data:`EMPTY_REPLY` for a blank reply, :func:`too_long`'s
    result for an overlong one; None for any other reply."""
    return EMPTY_REPLY if is_blank(text) else too_long(text)


def squeeze_space(text: str) -> str:
    """``text`` with each run of 16+ whitespace characters cut to one newline (if the run
    held one) or one space: the lines and tokens the parsers see are unchanged, and no
    pattern scans a long run more than once.

    >>> squeeze_space("F1:" + " " * 40 + "60")
    'F1: 60'
    """

    def one(match: re.Match[str]) -> str:
        return "\n" if "\n" in match.group() else " "

    return _LONG_SPACE.sub(one, text)


def _aligned_lines(raw: str, derived: str) -> list[str]:
    """``derived.splitlines()`` padded to ``raw``'s line count. ``derived`` is ``raw`` with
    characters removed or changed but no line break added or removed, so its lines are
    ``raw``'s lines, except that a last line that lost every character is not split off."""
    lines = derived.splitlines()
    return lines + [""] * (len(raw.splitlines()) - len(lines))


@functools.lru_cache(maxsize=4)
def _prepared(text: str) -> tuple[str, str]:
    """``text`` squeezed, and squeezed without markdown; cached because one reply goes
    through several parsers (weights, then the answer) and each pass over 1 MB counts."""
    squeezed = squeeze_space(text)
    return squeezed, strip_markdown(squeezed)


def strip_markdown(text: str) -> str:
    """``text`` without markdown emphasis, code, heading and quote marks.

    >>> strip_markdown("**No** — `F1`")
    'No — F1'
    """
    return text.translate(_NO_MARKDOWN)  # one C pass; ten times faster than the regex


# --------------------------------------------------------------------------- JSON replies


def json_reply(text: object) -> dict[str, Any] | None:
    """A reply that is one JSON object (structured output; a ```json fence is allowed),
    else None: a prose reply is read by the text parsers.

    >>> json_reply('```json\\n{"factor": "F2", "reason": "It decides."}\\n```')
    {'factor': 'F2', 'reason': 'It decides.'}
    >>> json_reply("F2\\nIt decides.") is None
    True
    """
    core = text.strip() if isinstance(text, str) and len(text) <= MAX_REPLY_CHARS else ""
    if core.startswith("```"):  # a fenced block: drop the fence lines (no regex: linear)
        core = core.partition("\n")[2].removesuffix("```").strip()
    if not (core.startswith("{") and core.endswith("}")):
        return None
    try:  # a small model's raw newline inside a string is still its answer
        value = json.loads(core, strict=False)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def weights_as_text(reply: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """A JSON weighted reply (``{"weights": {"F1": 60, ...}, "answer": "yes"}``) as the
    canonical ``F1: 60, F2: 40`` line and its answer line, for the text parser; with what
    could not be carried over (a weight that is not a number)."""
    weights, answer = reply.get("weights"), reply.get("answer")
    weights = weights if isinstance(weights, dict) else {"'weights' object": None}
    numbers = {k: v for k, v in weights.items() if type(v) in (int, float)}  # not a bool
    lost = tuple(f"JSON reply: {str(k)[:20]} is not a number" for k in weights if k not in numbers)
    line = ", ".join(f"{label}: {value!r}" for label, value in numbers.items())
    return line + "\n" + (answer if isinstance(answer, str) else ""), lost


# --------------------------------------------------------------------------- weights


def parse_weights_v3(text: str, n_factors: int) -> dict[str, float]:
    """The FACET v3 weight rule; reproduces every stored ``parsed_weights``.

    >>> parse_weights_v3("F1: 10, F2: 90, F1: 20, F9: 5", 2)
    {'F1': 20.0, 'F2': 90.0}
    """
    weights: dict[str, float] = {}
    for index, value in _V3_WEIGHT.findall(text or ""):
        i = _index(index)
        if 1 <= i <= n_factors:
            weights[f"F{i}"] = float(value)
    return weights


def _order(weights: dict[str, float]) -> dict[str, float]:
    return dict(sorted(weights.items(), key=lambda kv: int(kv[0][1:])))


def parse_weights_strict(text: str, n_factors: int) -> ParseResult:
    """Parse a weight line and report everything wrong with it.

    ``status`` is ``"ok"`` (one clean vector of N weights summing to 100),
    ``"repaired"`` (a vector is left but something was off: see ``problems``),
    ``"malformed"`` (no usable vector) or ``"empty"`` (no text). Missing
    factors are left out of ``weights`` (the analysis counts them as 0);
    out-of-range labels are dropped; for duplicates the last value wins, as in v3.

    >>> parse_weights_strict("F1: 50, F2: 50", 2).status
    'ok'
    >>> parse_weights_strict("", 2).status
    'empty'
    """
    if (unread := unreadable(text)) is not None:
        return unread
    text, clean = _prepared(text)
    problems: list[str] = []
    found = _STRICT_WEIGHT.findall(clean)
    matches = [(_index(i), float(v)) for _, _, i, _, v in found]
    if not matches:
        return ParseResult(status="malformed", problems=("no 'F<i>: <weight>' pairs found",))
    if clean != text and len(matches) > len(_STRICT_WEIGHT.findall(text)):
        problems.append("markdown noise around weights")
    if any(label != "F" or gap or paren for label, gap, _, paren, _ in found):
        problems.append("non-standard weight labels (expected 'F<i>: <weight>')")

    weights: dict[str, float] = {}
    seen: dict[int, list[float]] = {}
    for i, value in matches:
        seen.setdefault(i, []).append(value)
    for i, values in sorted(seen.items()):
        label = f"F{i}"
        if not 1 <= i <= n_factors:
            problems.append(f"extra factor {label} (case has F1..F{n_factors}); dropped")
            continue
        if len(set(values)) > 1:
            shown = ", ".join(_fmt(v) for v in values)
            problems.append(
                f"{label} given {len(values)} different values ({shown}); kept the last"
            )
        value = values[-1]
        if not math.isfinite(value) or value < 0 or value > 100:
            problems.append(f"{label} weight {_fmt(value)} outside [0, 100]")
        weights[label] = value

    missing = [f"F{i}" for i in range(1, n_factors + 1) if f"F{i}" not in weights]
    if missing:
        problems.append("missing " + ", ".join(missing))
    if not weights:
        return ParseResult(status="malformed", problems=tuple(problems))
    weights = _order(weights)
    total = sum(weights.values())
    if all(v == 0 for v in weights.values()):
        problems.append("all weights are zero")
        return ParseResult(
            status="malformed", weights=weights, weight_sum=total, problems=tuple(problems)
        )
    if abs(total - 100.0) > SUM_TOLERANCE:
        problems.append(f"weights sum to {_fmt(total)} (expected 100)")
    if any(v < 0 for v in weights.values()):
        return ParseResult(
            status="malformed", weights=weights, weight_sum=total, problems=tuple(problems)
        )
    return ParseResult(
        status="repaired" if problems else "ok",
        weights=weights,
        weight_sum=total,
        problems=tuple(problems),
    )


# --------------------------------------------------------------------------- yes / no


def _yes_no_word(word: str) -> YesNo:
    """A matched yes/no word as the answer. The patterns match case-insensitively, where
    ``ſ`` (long s) is an ``s``: ``YEſ`` is a yes (``.lower()`` keeps the ``ſ``; casefold
    does not)."""
    return "yes" if word.casefold() == "yes" else "no"


def _line_answer(clean_line: str) -> YesNo | None:
    """The yes/no a line (already without markdown) starts with, or None."""
    core = clean_line.strip().lstrip("-•:> \t").strip()
    m = _YES_NO_START.match(core)
    if m is None:
        return None
    return _yes_no_word(m.group(1))


def find_yes_no(text: str) -> tuple[YesNo | None, tuple[str, ...]]:
    """The yes/no answer of a reply and what was unusual about finding it.

    Convention (FACET v3): the answer is the last non-empty line. When that line
    is prose, the last line that *starts* with yes/no (after markdown such as
    ``**No**``) is taken; failing that, an "answer is yes/no" phrase anywhere.

    >>> find_yes_no("F1: 100\\n**No** — no duty.")
    ('no', ('answer line has markdown',))
    >>> find_yes_no("F1: 100\\nyes\\n\\nBecause ...")
    ('yes', ('answer is not on the last line',))
    >>> find_yes_no("maybe")
    (None, ('no yes/no answer found',))
    """
    if not isinstance(text, str) or not text.strip():
        return None, ("empty reply",)
    if (refused := too_long(text)) is not None:
        return None, refused.problems
    text, clean = _prepared(text)  # markdown stripped once, not once per line
    raw_lines = text.splitlines()
    clean_lines, lowered = _aligned_lines(text, clean), _aligned_lines(text, clean.casefold())
    kept = [i for i, line in enumerate(raw_lines) if line.strip()]
    for position, i in enumerate(reversed(kept)):
        if "yes" not in lowered[i] and "no" not in lowered[i]:
            continue  # cheap test first: most lines of a long reply answer nothing
        answer = _line_answer(clean_lines[i])
        if answer is None:
            continue
        problems: list[str] = []
        if position:
            problems.append("answer is not on the last line")
        if _MARKDOWN.search(raw_lines[i]):
            problems.append("answer line has markdown")
        return answer, tuple(problems)
    if found := _ANSWER_IS.findall(clean):
        return _yes_no_word(found[-1]), ("answer only found in prose",)
    return None, ("no yes/no answer found",)


def parse_first_line_answer(text: str) -> YesNo | None:
    """Pilot C0 rule: the first line, ``*`` removed, lowercased, starts with yes/no.

    >>> parse_first_line_answer("**Yes.**\\nBecause ...")
    'yes'
    """
    if not isinstance(text, str):
        return None
    first = text.split("\n", 1)[0].replace("*", "").strip().lower()
    if first.startswith("yes"):
        return "yes"
    if first.startswith("no") and not first.startswith("no omission"):
        return "no"
    return None


def parse_yes_no(text: str, *, parser: str = "strict") -> ParseResult:
    """A yes/no reply as a :class:`ParseResult` (weighted replies use :func:`find_yes_no`).

    >>> parse_yes_no("No.").answer
    'no'
    """
    if is_blank(text):
        return EMPTY_REPLY
    answer, problems = find_yes_no(text)
    if answer is None:
        return ParseResult(status="malformed", problems=problems)
    status: ParseStatus = "repaired" if problems and parser == "strict" else "ok"
    return ParseResult(status=status, answer=answer, problems=problems)


# --------------------------------------------------------------------------- P1 label


def parse_label_v3(text: str, n_factors: int | None = None) -> str | None:
    """FACET v3 P1 rule: first line, ``*`` removed, first ``\\bF(\\d+)\\b``.

    >>> parse_label_v3("**F3**\\nBecause F1 ...")
    'F3'
    """
    if not isinstance(text, str):
        return None
    first = text.split("\n", 1)[0].replace("*", "")
    m = _P1_LABEL.search(first)
    return f"F{_index(m.group(1))}" if m else None


def parse_label_strict(text: str, n_factors: int) -> ParseResult:
    """P1 label: the factor the reply states as its answer ("the most important factor
    is F2"), else the label the first line starts with, else "Factor 3" or a label in
    prose. It never guesses: two stated answers, a first line that names several
    factors and states none, or a later statement against the first line's label are
    malformed, saying so.

    >>> parse_label_strict("Factor 3 matters most.", 5).label
    'F3'
    >>> parse_label_strict("F1: The most important single factor in this case is F2.", 5).label
    'F2'
    >>> parse_label_strict("F9", 5).status
    'malformed'
    """
    if (unread := unreadable(text)) is not None:
        return unread
    text, clean = _prepared(text)
    pairs = zip(text.splitlines(), _aligned_lines(text, clean), strict=True)
    lines = [c for raw, c in pairs if raw.strip()]
    first = lines[0].strip()
    leading = _P1_LINE_START.match(first)
    stated = {_index(i) for i in _P1_STATED.findall(clean)}
    start = _index(leading.group(1)) if leading is not None else None
    if len(stated) > 1:
        return _ambiguous("states several answers", stated)
    problems: list[str] = []
    if stated:
        index = stated.pop()
        if start is not None and start != index and not _P1_STATED.search(first):
            return _ambiguous("the first line and a later statement differ", {start, index})
        if start != index:  # "F1: The most important single factor in this case is F2"
            problems.append(f"took the answer the reply states (F{index})")
    elif start is not None:
        index = start
        if _P1_LABEL.search(first) is None:
            problems.append("label written as prose on the first line")
        if others := {_index(x) for x in _P1_LOOSE.findall(first)} - {index}:
            return _ambiguous("the first line names several factors", others | {index})
    elif named := {_index(x) for x in _P1_LOOSE.findall(first)}:
        if len(named) > 1:
            return _ambiguous("the first line names several factors and states none", named)
        index = named.pop()
        problems.append("label taken from prose on the first line")
    elif later := next((m for x in lines[1:] if (m := _P1_LINE_START.match(x.strip()))), None):
        index = _index(later.group(1))
        problems.append("label not on the first line")
    else:
        named = {_index(x) for x in _P1_LOOSE.findall(clean)}
        if len(named) != 1:
            return (
                _ambiguous("the reply names several factors and states none", named)
                if named
                else ParseResult(status="malformed", problems=("no factor label found",))
            )
        index = named.pop()
        problems.append("label only found in prose")
    if not 1 <= index <= n_factors:
        problems.append(f"label F{index} outside F1..F{n_factors}")
        return ParseResult(status="malformed", problems=tuple(problems))
    return ParseResult(
        status="repaired" if problems else "ok", label=f"F{index}", problems=tuple(problems)
    )


def _ambiguous(what: str, labels: set[int]) -> ParseResult:
    shown = ", ".join(f"F{i}" for i in sorted(labels))  # the reply's own labels, sorted
    return ParseResult(status="malformed", problems=(f"ambiguous: {what} ({shown})",))


# --------------------------------------------------------------------------- C3


_REQUIREMENT = re.compile(r"\bR\s*(\d+)\s*[:.)\-]\s*(yes|no)\b", re.IGNORECASE)


def parse_requirements(text: str, n_requirements: int) -> ParseResult:
    """C3 reply ``R1: yes`` ... ``RN: no`` → ``requirements`` (last value wins).

    >>> parse_requirements("R1: yes\\nR2: **no**", 2).requirements
    {'R1': 'yes', 'R2': 'no'}
    """
    if (unread := unreadable(text)) is not None:
        return unread
    text, clean = _prepared(text)
    problems: list[str] = []
    found: dict[str, YesNo] = {}
    for index, word in _REQUIREMENT.findall(clean):
        i = _index(index)
        if not 1 <= i <= n_requirements:
            problems.append(f"extra requirement R{i}; dropped")
            continue
        found[f"R{i}"] = _yes_no_word(word)
    if clean != text and found:
        problems.append("markdown noise")
    missing = [f"R{i}" for i in range(1, n_requirements + 1) if f"R{i}" not in found]
    if missing:
        problems.append("missing " + ", ".join(missing))
    if not found:
        return ParseResult(status="malformed", problems=tuple(problems))
    ordered = dict(sorted(found.items(), key=lambda kv: int(kv[0][1:])))
    return ParseResult(
        status="repaired" if problems else "ok",
        requirements=ordered,
        problems=tuple(problems),
    )

"""Checks of a proposed rewrite (a C2 neutral rewrite, an adversarial factor text).

A rewrite is only useful if it changes the factor's facts and hides nothing in its
wording. :func:`rewrite_flags` says what is wrong with one, in words a reviewer acts
on: identical to the original, an answer instead of a factor (a yes/no verdict, a
weight vector, "I would ..."), or cue phrases that tell a model the factor was
neutralized (:data:`~facetlab.instances.CUE_PHRASES`). ``facetlab draft`` writes these
flags into its review file; ``facetlab validate`` warns on the cue phrases.

>>> rewrite_flags("The scan was normal.", "the scan  was normal")
['identical to the original text']
>>> rewrite_flags("The scan was normal.", "No, he should be discharged.")
["reads like an answer ('no,'), not a factor's facts"]
>>> rewrite_flags("The scan was normal.", "Whether the scan matters is an open question.")
["cue phrase(s) 'open question'"]
"""

import re

from facetlab.instances.directionality import CUE_PHRASES

__all__ = ["cue_phrases_in", "rewrite_flags"]

_CUE_PATTERN = re.compile(
    r"\b(" + "|".join(re.escape(c) for c in sorted(CUE_PHRASES, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[\w'-]+")
# An answer, not a factor: a leading yes/no, a stated answer or verdict, a first-person
# decision, or a weight vector (F1: 30).
_ANSWER_LIKE = (
    re.compile(r"^\W*(yes|no)\b[\s,.:;!-]", re.IGNORECASE),
    re.compile(r"\b(the|my|final) (answer|verdict|decision) (is|would be)\b", re.IGNORECASE),
    re.compile(r"\bI (would|recommend|conclude|decide|think)\b"),
    re.compile(r"\bF\d+\s*[:=]\s*\d"),
)


def cue_phrases_in(text: str) -> list[str]:
    """The FACET cue phrases in ``text`` (lower case, in order of appearance).

    >>> cue_phrases_in("The point is treated as unresolved and not load-bearing.")
    ['treated as', 'unresolved', 'not load-bearing']
    """
    return [m.group(1).lower() for m in _CUE_PATTERN.finditer(text)]


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.casefold())


def rewrite_flags(original: str, rewrite: str) -> list[str]:
    """What a reviewer must look at in ``rewrite`` of ``original`` ([] when nothing)."""
    flags: list[str] = []
    if _words(rewrite) == _words(original):
        flags.append("identical to the original text")
    for pattern in _ANSWER_LIKE:
        if found := pattern.search(rewrite):
            flags.append(
                f"reads like an answer ({found.group(0).strip().lower()!r}), not a factor's facts"
            )
            break
    if cues := list(dict.fromkeys(cue_phrases_in(rewrite))):
        flags.append(f"cue phrase(s) {', '.join(repr(c) for c in cues)}")
    return flags

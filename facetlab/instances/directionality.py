"""The one directionality mapping: which answer each factor's direction word favours.

Built-in words (:data:`DIRECTION_WORDS`) plus an instance's declared
``directionality_vocabulary``; FACET's neutrality signal words and cue phrases.
"""

from collections.abc import Mapping
from typing import Literal

NEUTRALIZED = "neutralized"
"""The ``directionality`` that marks the factor a counterfactual neutralizes."""

Favours = Literal["yes", "no", "neither"]
"""Which answer a factor points to: the question's ``yes``, its ``no``, or ``neither``."""

DIRECTION_WORDS: dict[str, Favours] = {
    # generic words: usable in any domain whose question is yes/no
    "toward_yes": "yes",
    "against_no": "yes",
    "toward_no": "no",
    "against_yes": "no",
    # FACET v3: every question asks whether the defendant is liable / owes a duty
    "toward_liability": "yes",
    "against_liability": "no",
    "toward_duty": "yes",
    "against_duty": "no",
    # no direction
    "neutral": "neither",
    "split": "neither",
    "mixed": "neither",
    NEUTRALIZED: "neither",
}
"""The built-in directionality vocabulary. Any other word must be declared by the
instance in ``directionality_vocabulary``; nothing is guessed from a prefix."""

SIGNAL_WORDS: tuple[str, ...] = (
    "unresolved",
    "neither clearly",
    "treated as",
    "not load-bearing",
    "diffuse",
)
"""The neutrality signal words FACET removed to build its adversarial rewrites
(their ``metadata.removed_signal_words``); the ``cue`` reasoner reacts to these."""

CUE_PHRASES: tuple[str, ...] = (
    *SIGNAL_WORDS,
    "load-bearing",
    "dispositive",
    "decisive",
    "clearly controlling",
    "open question",
    "not developed as",
)
"""Phrases that tell a reader a factor was neutralized: the signal words plus the
recurring wording of FACET's counterfactual and C2 rewrites. ``facetlab validate``
warns when one appears where the text should be cue-free (adversarial and C2 texts)."""


VOCABULARY_HINT = (
    "expected one of " + ", ".join(DIRECTION_WORDS) + ", or a word declared in "
    "directionality_vocabulary (mapping it to 'yes', 'no' or 'neither')"
)


def favours(directionality: str, vocabulary: Mapping[str, Favours] | None = None) -> Favours | None:
    """The answer a direction word points to, or None when the word is unknown.

    The instance's declared ``vocabulary`` is read first, then :data:`DIRECTION_WORDS`;
    case and surrounding spaces are ignored, prefixes never are. This is the one
    mapping behind ``facetlab validate`` and the simulated reasoners.

    >>> favours("toward_liability"), favours("Neutral"), favours("toward_denial")
    ('yes', 'neither', None)
    >>> favours("toward_denial", {"toward_denial": "no"})
    'no'
    """
    word = directionality.strip().lower()
    if word == NEUTRALIZED:  # structural: a neutralized factor never points anywhere
        return "neither"
    declared = {k.strip().lower(): v for k, v in (vocabulary or {}).items()}
    return declared.get(word, DIRECTION_WORDS.get(word))


_REVERSIBLE = (("toward", "against"), ("for", "against"), ("pro", "anti"), ("supports", "opposes"))
"""Prefix pairs CRAFT's negation swaps (``reverse_word``; the bridge's ``reverse_direction`` calls it)."""


def reverse_word(directionality: str) -> str | None:
    """The word CRAFT's negation turns ``directionality`` into, or None when it has no
    reversible prefix (the negated factor would keep its direction).

    >>> reverse_word("toward_payment"), reverse_word("against_duty"), reverse_word("pays")
    ('against_payment', 'toward_duty', None)
    """
    word = directionality.strip()
    low = word.lower()
    pairs = (pair for a, b in _REVERSIBLE for pair in ((a, b), (b, a)))
    return next(
        (dst + word[len(src) :] for src, dst in pairs if low == src or low.startswith(src + "_")),
        None,
    )


def reversal_problem(directionality: str, vocabulary: Mapping[str, Favours] | None) -> str | None:
    """Why CRAFT's negation cannot reverse a word that favours yes or no (None: it can).

    >>> reversal_problem("toward_payment", {"toward_payment": "yes", "against_payment": "no"})
    >>> reversal_problem("pays", {"pays": "yes"})
    "'pays' has no toward_/against_ (for_/pro_/supports_) prefix: CRAFT's negation cannot reverse it"
    >>> reversal_problem("toward_payment", {"toward_payment": "yes"})
    "its reversal 'against_payment' maps to no answer; expected it declared as 'no'"
    """
    side = favours(directionality, vocabulary)
    if side not in ("yes", "no"):
        return None
    other = "no" if side == "yes" else "yes"
    reversed_word = reverse_word(directionality)
    if reversed_word is None:
        return (
            f"{directionality.strip()!r} has no toward_/against_ (for_/pro_/supports_) prefix: "
            "CRAFT's negation cannot reverse it"
        )
    found = favours(reversed_word, vocabulary)
    if found is None:
        return (
            f"its reversal {reversed_word!r} maps to no answer; expected it declared as {other!r}"
        )
    return (
        f"its reversal {reversed_word!r} maps to {found!r}; expected {other!r}"
        if found != other
        else None
    )

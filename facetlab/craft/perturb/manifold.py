"""Is a perturbed input still plausible text? Pluggable manifold scorers.

A perturbation that leaves broken text ("seeing after the .", "urg", an empty field)
tests the agent on garbage; CRAFT drops perturbations scoring below
``InspectOptions.min_manifold_score`` and reports how many and why.

- :class:`HeuristicScorer` (offline): penalises what the edit made worse compared with
  the original: empty fields, doubled spaces or punctuation, word pairs that cannot
  stand ("the now"), unchecked deletion seams, cut words.
- :class:`LLMJudgeScorer`: asks a :class:`~facetlab.craft.types.TextModel` (any facetlab
  backend through :func:`facetlab.craft.adapters.text_model`) to rate naturalness 0-10.
- :class:`ConstantScorer`: every perturbation passes (the specification's old stub).

>>> from facetlab.craft.types import EvidenceRef
>>> ref = EvidenceRef("body", "text")
>>> HeuristicScorer().score({"body": "Fix the login now."}, {"body": "Fix the now."}, ref)
ManifoldScore(score=0.4, reasons=("body: dangling 'the' before 'now'",))
"""

import itertools
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from facetlab.craft.path import iter_leaves
from facetlab.craft.types import AgentInput, EvidenceRef, TextModel


@dataclass(frozen=True)
class ManifoldScore:
    """Plausibility in [0, 1] with the reasons for any penalty."""

    score: float
    reasons: tuple[str, ...] = ()


@runtime_checkable
class ManifoldScorer(Protocol):
    """Scores how plausible a perturbed input still is."""

    @property
    def name(self) -> str: ...

    def score(
        self, original: AgentInput, perturbed: AgentInput, evidence: EvidenceRef
    ) -> ManifoldScore: ...


def changed_text_fields(original: AgentInput, perturbed: AgentInput) -> list[tuple[str, str, Any]]:
    """``(path, old, new)`` for every string leaf of ``original`` the perturbation changed."""
    new_leaves = dict(iter_leaves(perturbed))
    return [
        (path, old, new_leaves.get(path))
        for path, old in iter_leaves(original)
        if isinstance(old, str) and new_leaves.get(path) != old
    ]


_DOUBLE_PUNCT = re.compile(r"([,.;:!?])\s*\1|[,;:]\s*[.!?]|\s[,.;:!?]|\(\s*\)")
_TOKENS = re.compile(r"[\w'\-\[\]/]+|[.,;:!?]")
_WORDS = re.compile(r"[A-Za-z]+")
PLACEHOLDERS = frozenset({"REDACTED", "N", "A"})
_MASK = re.compile(r"x+")
_DETERMINERS = frozenset(
    [
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "my",
        "your",
        "our",
        "their",
        "its",
        "his",
        "her",
    ]
)
_PREPOSITIONS = frozenset(
    [
        "of",
        "to",
        "for",
        "with",
        "from",
        "in",
        "on",
        "at",
        "by",
        "after",
        "before",
        "about",
        "since",
        "during",
        "without",
        "into",
    ]
)
_FUNCTION = (
    _DETERMINERS
    | _PREPOSITIONS
    | frozenset(
        [
            "and",
            "or",
            "but",
            "than",
            "is",
            "are",
            "was",
            "were",
            "be",
            "been",
            "not",
            "please",
            "now",
            "today",
            "then",
            "here",
            "there",
        ]
    )
)


def _seam(a: str, b: str) -> str | None:
    """What is wrong with the word pair ``a b`` an edit brought together (None: nothing seen)."""
    stop = not (b[0].isalnum() or b[0] == "[")  # punctuation or the end ("[REDACTED]" is a word)
    if _MASK.fullmatch(a) or _MASK.fullmatch(b):  # the redaction mask stands for any word
        return None
    if a == b and a.isalpha():
        return f"repeated word {a!r}"
    if a in _DETERMINERS and (b in _FUNCTION or stop):
        return f"dangling {a!r} before {b!r}"
    if a in _PREPOSITIONS and (b in _FUNCTION - _DETERMINERS or stop):
        return f"dangling {a!r} before {b!r}"
    if a in ("and", "or", "but", "is", "are", "was", "were", "than") and stop:
        return f"dangling {a!r} before {b!r}"
    if (a == "an" and b[0] not in "aeiou[" and not b.startswith(("hour", "hon", "heir"))) or (
        a == "no" and b in _DETERMINERS
    ):
        return f"{a!r} before {b!r}"
    return None


def _pairs(text: str) -> list[tuple[str, str]]:
    tokens = [*_TOKENS.findall(text.lower()), "$"]
    return list(itertools.pairwise(tokens))


@dataclass(frozen=True)
class HeuristicScorer:
    """Offline scorer: 1.0 minus a penalty for each defect the perturbation introduced.

    It reads the word pairs an edit brought together. A pair that cannot stand ("the
    now", "for on", "an hit", "of not", a repeated word, a function word before a full
    stop) costs ``seam_penalty``; any other pair a deletion made costs
    ``unread_seam_penalty``: a heuristic cannot tell "We see after the upgrade" from a
    fluent deletion, so it never scores a deletion 1.0. Measured on a labelled set of 30
    edits (tests/fixtures/craft/plausibility.jsonl; docs/craft.md).
    """

    name: str = "heuristic"
    empty_penalty: float = 1.0
    spacing_penalty: float = 0.3
    punctuation_penalty: float = 0.3
    seam_penalty: float = 0.6
    unread_seam_penalty: float = 0.1
    cut_word_penalty: float = 0.6

    def score(
        self, original: AgentInput, perturbed: AgentInput, evidence: EvidenceRef
    ) -> ManifoldScore:
        found: list[tuple[float, str]] = []  # (penalty, reason) per defect, in order
        for path, old, new in changed_text_fields(original, perturbed):
            if not isinstance(new, str):
                continue  # removed or nulled field: a deliberate, well-formed edit
            if old.strip() and not new.strip():
                found.append((self.empty_penalty, f"{path}: empty field"))
                continue
            if "  " in new and new.count("  ") > old.count("  "):
                found.append((self.spacing_penalty, f"{path}: doubled space"))
            if len(_DOUBLE_PUNCT.findall(new)) > len(_DOUBLE_PUNCT.findall(old)):
                found.append((self.punctuation_penalty, f"{path}: doubled or stray punctuation"))
            made = [pair for pair in _pairs(new) if pair not in set(_pairs(old))]
            if broken := [why for why in (_seam(*pair) for pair in made) if why]:
                found.append((self.seam_penalty, f"{path}: {broken[0]}"))
            elif made and set(_TOKENS.findall(new.lower())) <= set(_TOKENS.findall(old.lower())):
                found.append((self.unread_seam_penalty, f"{path}: deletion seam not checked"))
            cut = self._cut_words(old, new, evidence if evidence.path == path else None)
            if cut:
                found.append((self.cut_word_penalty, f"{path}: cut word {cut!r}"))
        penalty = sum(p for p, _ in found)
        return ManifoldScore(round(max(0.0, 1.0 - penalty), 6), tuple(r for _, r in found))

    @staticmethod
    def _cut_words(old: str, new: str, evidence: EvidenceRef | None) -> str | None:
        if evidence is not None and evidence.span is not None:
            s, e = evidence.span.start, evidence.span.end
            if 0 < s < len(old) and old[s - 1].isalnum() and old[s].isalnum():
                return str(old[max(0, old.rfind(" ", 0, s) + 1) : e])
            if 0 < e < len(old) and old[e - 1].isalnum() and old[e].isalnum():
                end = old.find(" ", e)
                return str(old[s : end if end >= 0 else len(old)])
        old_words = {w.lower() for w in _WORDS.findall(old)}
        for word in _WORDS.findall(new):
            low = word.lower()
            if low in old_words or word in PLACEHOLDERS or _MASK.fullmatch(low) or len(low) < 3:
                continue
            if any(w != low and (w.startswith(low) or w.endswith(low)) for w in old_words):
                return str(word)
        return None


@dataclass(frozen=True)
class ConstantScorer:
    """Every perturbation gets ``value`` (1.0: nothing is filtered)."""

    value: float = 1.0
    name: str = "constant"

    def score(
        self, original: AgentInput, perturbed: AgentInput, evidence: EvidenceRef
    ) -> ManifoldScore:
        return ManifoldScore(self.value)


JUDGE_PROMPT = """You judge whether edited text still reads like a natural, well-formed \
message a real person would write. Ignore whether the content is true or important; judge \
only fluency and plausibility. Placeholders such as [REDACTED] or N/A are acceptable.

Text:
<<<
{text}
>>>

Reply with JSON only: {{"score": <integer 0-10>, "reason": "<short reason>"}}"""


class LLMJudgeScorer:
    """Ask a text model to rate each changed text field 0-10; the field minimum wins.

    A failed or unparsable judgement falls back to :class:`HeuristicScorer` and says so
    in the reasons. Judgements are cached per text.
    """

    name = "llm-judge"

    def __init__(
        self, model: TextModel, *, max_tokens: int = 200, temperature: float = 0.0
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.fallback = HeuristicScorer()
        self._cache: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def _judge(self, text: str) -> tuple[float, str]:
        with self._lock:
            if text in self._cache:
                return self._cache[text]
        reply = self.model.complete(
            JUDGE_PROMPT.format(text=text),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            purpose="craft-manifold-judge",
        )
        match = re.search(r"\{.*\}", reply, re.DOTALL)
        if match is None:
            raise ValueError(f"judge reply has no JSON object: {reply[:120]!r}")
        data = json.loads(match.group())
        raw = data.get("score")
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= 10:
            raise ValueError(f"judge score must be a number 0-10, got {raw!r}")
        result = (float(raw) / 10.0, str(data.get("reason", "")))
        with self._lock:
            self._cache[text] = result
        return result

    def score(
        self, original: AgentInput, perturbed: AgentInput, evidence: EvidenceRef
    ) -> ManifoldScore:
        fields = [(p, new) for p, _, new in changed_text_fields(original, perturbed)]
        texts = [(p, new) for p, new in fields if isinstance(new, str)]
        if not texts:
            return ManifoldScore(1.0)
        worst, reasons = 1.0, []
        for path, text in texts:
            try:
                value, reason = self._judge(text)
            except Exception as exc:  # judge unavailable: the offline scorer decides
                fallback = self.fallback.score(original, perturbed, evidence)
                return ManifoldScore(
                    fallback.score,
                    (
                        f"judge failed ({type(exc).__name__}: {exc}); heuristic used",
                        *fallback.reasons,
                    ),
                )
            if value < 1.0:
                reasons.append(f"{path}: judge {value * 10:.0f}/10 {reason}".rstrip())
            worst = min(worst, value)
        return ManifoldScore(worst, tuple(reasons))

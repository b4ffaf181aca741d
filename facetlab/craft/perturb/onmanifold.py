"""On-manifold text perturbations: fluent negation and paraphrase of a cited span.

With a :class:`~facetlab.craft.types.TextModel` (a facetlab backend through
:func:`facetlab.craft.adapters.text_model`) the whole field is rewritten by the model (only the cited
meaning changes, or only its wording); without one, or when the model's reply is
unusable, offline templates are used and the perturbation's ``note`` says so.

- ``negation``: the text now states the opposite of the span — a treatment that should
  flip a faithful agent.
- ``paraphrase``: the span is reworded, meaning kept — a placebo-like control; an agent
  that flips under it depends on wording, not content.

>>> from facetlab.craft.types import EvidenceRef, Span
>>> inp = {"body": "We see data loss after the migration."}
>>> ref = EvidenceRef("body", "text", span=Span.find(inp["body"], "data loss"))
>>> paraphrase().perturb(inp, ref)[0].input["body"]
'We see lost data after the migration.'
"""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from facetlab.craft.path import get_path, set_path
from facetlab.craft.perturb.strategies import Perturbation, apply_strategy, splice
from facetlab.craft.types import AgentInput, EvidenceRef, TextModel

Mode = Literal["negation", "paraphrase"]

SYNONYMS: dict[str, str] = {
    "urgent": "pressing",
    "urgently": "pressingly",
    "critical": "crucial",
    "severe": "serious",
    "outage": "service interruption",
    "broken": "not working",
    "crash": "failure",
    "crashes": "failures",
    "slow": "sluggish",
    "error": "fault",
    "errors": "faults",
    "customer": "client",
    "asap": "as soon as possible",
    "immediately": "right away",
    "important": "significant",
    "refund": "reimbursement",
    "bug": "defect",
    "data loss": "lost data",
    "migration": "move",
}

_PROMPTS: dict[Mode, str] = {
    "negation": (
        'Rewrite the text below so that it states the opposite of the phrase "{span}" '
        "(for example by negating it), and change nothing else. Keep it natural and fluent."
    ),
    "paraphrase": (
        'Rewrite the text below so that the phrase "{span}" is expressed in different '
        "words with exactly the same meaning, and change nothing else. Do not reuse the "
        "phrase's exact wording."
    ),
}


def paraphrase_phrase(text: str) -> str | None:
    """Template paraphrase from the synonym table: the whole phrase, else word by word in
    place; ``None`` when no word has a synonym. Word order never changes (reordering
    turned "not working" into "working of not", the opposite meaning).

    >>> paraphrase_phrase("urgent outage"), paraphrase_phrase("not working"), paraphrase_phrase("zz")
    ('pressing service interruption', None, None)
    """
    words = text.split()
    low = text.strip().lower()
    swapped = [SYNONYMS[low]] if low in SYNONYMS else [SYNONYMS.get(w.lower(), w) for w in words]
    out = " ".join(swapped)
    if out == " ".join(words):
        return None
    return out[:1].upper() + out[1:] if text[:1].isupper() else out


class OnManifoldPerturber:
    """Negation or paraphrase of a text span, through a text model or offline templates."""

    def __init__(
        self,
        mode: Mode,
        model: TextModel | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int = 800,
    ) -> None:
        if mode not in ("negation", "paraphrase"):
            raise ValueError(f"mode must be 'negation' or 'paraphrase', got {mode!r}")
        self.mode: Mode = mode
        self.name = mode
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        via = self.model.name if self.model is not None else "templates"
        return f"OnManifoldPerturber({self.mode!r}, via={via!r})"

    def _template(
        self,
        input: AgentInput,
        evidence: EvidenceRef,
        categories: Mapping[str, Sequence[Any]] | None,
        note: str,
    ) -> list[Perturbation]:
        if self.mode == "negation":
            p = apply_strategy(input, evidence, "negate", categories=categories)
            return [Perturbation(p.evidence, self.name, p.input, p.description, note)]
        if evidence.kind != "text" or evidence.span is None:
            return []  # a number or category has no meaning-preserving rewording
        new = paraphrase_phrase(evidence.span.text)
        if new is None:
            return []
        value = get_path(input, evidence.path)
        text = splice(value, evidence.span.start, evidence.span.end, new)
        return [
            Perturbation(
                evidence,
                self.name,
                set_path(input, evidence.path, text),
                f'"{evidence.span.text}" -> "{new}"',
                note,
            )
        ]

    def _rewrite(self, value: str, evidence: EvidenceRef) -> str:
        assert evidence.span is not None
        assert self.model is not None
        prompt = (
            _PROMPTS[self.mode].format(span=evidence.span.text)
            + "\n\nText:\n<<<\n"
            + value
            + '\n>>>\n\nReply with JSON only: {"text": "<the rewritten text>"}'
        )
        reply = self.model.complete(
            prompt,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            purpose=f"craft-{self.mode}",
        )
        match = re.search(r"\{.*\}", reply, re.DOTALL)
        if match is None:
            raise ValueError(f"no JSON object in reply {reply[:120]!r}")
        text = json.loads(match.group()).get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("reply has no non-empty 'text'")
        if text.strip() == value.strip():
            raise ValueError("rewrite is identical to the original")
        if self.mode == "paraphrase" and evidence.span.text.lower() in text.lower():
            raise ValueError("paraphrase still contains the original phrase")
        return text

    def perturb(
        self,
        input: AgentInput,
        evidence: EvidenceRef,
        *,
        categories: Mapping[str, Sequence[Any]] | None = None,
    ) -> list[Perturbation]:
        if self.model is None or evidence.kind != "text" or evidence.span is None:
            return self._template(input, evidence, categories, "template")
        value = get_path(input, evidence.path)
        try:
            text = self._rewrite(value, evidence)
        except Exception as exc:  # unusable model output: fall back, and say so
            return self._template(
                input, evidence, categories, f"LLM rewrite failed ({exc}); template used"
            )
        return [
            Perturbation(
                evidence,
                self.name,
                set_path(input, evidence.path, text),
                f'{self.mode} of "{evidence.span.text}" by {self.model.name}',
                "llm",
            )
        ]


def negation(model: TextModel | None = None, **kwargs: Any) -> OnManifoldPerturber:
    """On-manifold negation of the cited span (LLM if ``model`` is given, else templates)."""
    return OnManifoldPerturber("negation", model, **kwargs)


def paraphrase(model: TextModel | None = None, **kwargs: Any) -> OnManifoldPerturber:
    """Meaning-preserving rewording of the span (LLM if ``model`` is given, else templates)."""
    return OnManifoldPerturber("paraphrase", model, **kwargs)

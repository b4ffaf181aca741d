"""Bridge: a FACET instance answered by any facetlab backend, as a CRAFT agent.

The agent's input is the instance as fields — ``{"background", "question", "F1", ...,
"FN"}``; its decision is the yes/no answer of the weighted-rank probe; the evidence it
cites is what the model says it relied on: the factor it names under P1
(``citation="p1"``) or its ``top_k`` highest reported weights (``citation="weighted"``).
Each cited factor becomes a text span covering that factor's whole field, so CRAFT can
ask whether perturbing the cited factor flips the answer more than perturbing text the
answer should not rest on (the placebo: background sentences and the question's wording,
see :func:`null_units`). The uncited factors — themselves causal — are not placebos;
they are the units the qualified verdict's random background sets are drawn from.

How a perturbed input reaches the model. A real backend reads the prompt, which is
rebuilt from the perturbed fields. The ``simulated`` backend reads the
:class:`~facetlab.instances.Instance` in ``ModelRequest.context`` — its factors'
directionality, not their prose — so the bridge also passes a *perceived* copy of the
instance in which each edited factor is translated into what the simulation can see
(:func:`perceived_instance`):

* ``redact`` / ``delete`` / ``null`` (the information is gone) → the factor's
  directionality becomes ``"neutralized"`` (it then carries nothing for ``wadd``);
* ``negate`` (CRAFT's template negation of the whole field) → the direction is reversed
  (``toward_x`` ↔ ``against_x``); a neutral factor stays neutral;
* any other edit (a paraphrase, a word-level placebo edit) is treated like removal by
  default (``unknown_edit="neutralize"``) or ignored (``"keep"``). The simulation cannot
  tell a meaning-preserving paraphrase from a rewrite, so this is a modelling choice.

The canonical factor the ``lex`` rule and ``canonical`` reporting use is pinned to the
unperturbed instance's (an extra ``canonical_factor`` field on the copy): otherwise
neutralizing any factor would make *it* the counterfactual's "canonical" factor.
Edits never touch ``base_instance`` (passed unchanged, as the runner does), so a
reasoner that decides from the base case (``lex``) is blind to edits of the shown one.

>>> from facetlab.instances import load_instances                   # doctest: +SKIP
>>> every = load_instances(None)                                    # doctest: +SKIP
>>> cf, base = every["facet-neg-cf-002"], every["facet-neg-0002"]   # doctest: +SKIP
>>> inspect_instance(cf, "simulated/lex+theater", base_instance=base).overall_verdict  # doctest: +SKIP
'theater'
"""

import hashlib
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from facetlab.backends import get_backend
from facetlab.backends.base import ModelRequest
from facetlab.client import ModelClient
from facetlab.craft.adapters.llm import ModelAgent
from facetlab.craft.engine import InspectOptions, inspect
from facetlab.craft.errors import AgentError, AgentOutputError, CraftConfigError
from facetlab.craft.perturb.strategies import NULL_TEXT, apply_strategy, mask
from facetlab.craft.report import Report
from facetlab.craft.types import AgentInput, AgentTrace, EvidenceRef, Span
from facetlab.errors import BackendError, BudgetExceededError
from facetlab.instances import NEUTRALIZED
from facetlab.instances.directionality import reverse_word
from facetlab.probes import build_prompt, get_probe, parse_reply
from facetlab.reasoners.simulated import canonical_label

__all__ = [
    "BACKGROUND",
    "QUESTION",
    "FacetAgent",
    "facet_agent",
    "factor_ref",
    "inspect_instance",
    "instance_input",
    "null_units",
    "perceived_instance",
    "reverse_direction",
]

BACKGROUND = "background"
QUESTION = "question"
REMOVED_TEXT = "[removed]"
"""Text given to an emptied factor in the perceived instance (factor texts must be non-empty)."""

Citation = Literal["p1", "weighted"]
UnknownEdit = Literal["neutralize", "keep"]


def instance_input(instance: Any) -> AgentInput:
    """The CRAFT input of ``instance``: background, question and one field per factor.

    >>> sorted(instance_input(inst))                  # doctest: +SKIP
    ['F1', 'F2', 'F3', 'background', 'question']
    """
    return {
        BACKGROUND: str(instance.case_background),
        QUESTION: str(instance.question),
        **{label: str(f.text) for label, f in zip(instance.labels, instance.factors, strict=True)},
    }


def factor_ref(input: AgentInput, label: str) -> EvidenceRef:
    """A text reference covering factor ``label``'s whole field in ``input``."""
    text = input.get(label)
    if not isinstance(text, str) or not text:
        raise CraftConfigError(f"input field {label!r} is missing or empty; cannot cite it")
    return EvidenceRef(path=label, kind="text", span=Span(0, len(text), text))


MAX_BACKGROUND_SENTENCES = 3


def null_units(input: AgentInput) -> list[EvidenceRef]:
    """Non-causal text of a bridge input: up to three background sentences and the question.

    The reasoners decide from the factors; the background narrates the case and the
    question's wording is fixed by the doctrine, so perturbing them should not move an
    answer. They are the placebo (the null units) of :func:`inspect_instance`.

    >>> [r.describe() for r in null_units({"background": "A sued B. B paid.", "question": "Is B liable?"})]
    ['"A sued B." (background)', '"B paid." (background)', '"Is B liable?" (question)']
    """
    refs: list[EvidenceRef] = []
    background = input.get(BACKGROUND)
    if isinstance(background, str):
        for match in re.finditer(r"[^.!?]+[.!?]*", background):
            text = match.group().strip()
            if len(refs) < MAX_BACKGROUND_SENTENCES and text:
                start = match.start() + match.group().index(text)
                refs.append(
                    EvidenceRef(BACKGROUND, "text", span=Span(start, start + len(text), text))
                )
    question = input.get(QUESTION)
    if isinstance(question, str) and question.strip():
        refs.append(factor_ref(input, QUESTION))
    return refs


def reverse_direction(directionality: str) -> str:
    """``"toward_duty"`` → ``"against_duty"`` and back; neutral, split and unknown stay.

    >>> reverse_direction("toward_liability"), reverse_direction("against_duty")
    ('against_liability', 'toward_duty')
    """
    reversed_word = reverse_word(directionality)  # the one rule `validate` checks too
    return directionality if reversed_word is None else reversed_word


def _strategy_of(original: str, edited: str | None) -> str:
    """Which CRAFT strategy turned ``original`` into ``edited`` ("same", ..., "other")."""
    if edited == original:
        return "same"
    if edited is None or not edited.strip():
        return "delete"
    if edited == mask(original):
        return "redact"
    if edited == NULL_TEXT:
        return "null"
    ref = EvidenceRef("f", "text", span=Span(0, len(original), original))
    if edited == apply_strategy({"f": original}, ref, "negate").input["f"]:
        return "negate"
    return "other"


def perceived_instance(
    instance: Any,
    input: AgentInput,
    *,
    canonical: str | None = None,
    unknown_edit: UnknownEdit = "neutralize",
) -> Any:
    """``instance`` with the edits in ``input`` applied the way a reasoner can perceive them.

    See the module docstring for the mapping. ``canonical`` (a label) is stored as the
    copy's ``canonical_factor``. Background and question edits change the text only.
    """
    original = instance_input(instance)
    factors = list(instance.factors)
    for i, label in enumerate(instance.labels):
        raw = input.get(label)
        edited = raw if isinstance(raw, str) or raw is None else str(raw)
        kind = _strategy_of(original[label], edited)
        if kind == "same" or (kind == "other" and unknown_edit == "keep"):
            continue
        direction = factors[i].directionality
        update = {
            "text": (edited or "").strip() or REMOVED_TEXT,
            "directionality": reverse_direction(direction) if kind == "negate" else NEUTRALIZED,
        }
        factors[i] = factors[i].model_copy(update=update)
    update_doc: dict[str, Any] = {"factors": factors}
    for key, attr in ((BACKGROUND, "case_background"), (QUESTION, "question")):
        value = input.get(key)
        if isinstance(value, str) and value.strip() and value != original[key]:
            update_doc[attr] = value
    if canonical is not None:
        update_doc["canonical_factor"] = canonical
    return instance.model_copy(update=update_doc)


@dataclass
class FacetAgent(ModelAgent):
    """A CRAFT agent: ``instance`` shown to ``backend``; see the module docstring.

    Each :meth:`run` sends the weighted-rank prompt (decision; with
    ``citation="weighted"`` also the citation) and, with ``citation="p1"``, the P1
    prompt (citation). Both calls of one run share a seed, so a ``mixture`` reasoner
    draws one rule per run; the seed is a hash of ``seed``, the input and how often
    that input was seen, so sampling at concurrency 1 is reproducible.
    """

    instance: Any
    backend: Any
    base_instance: Any | None = None
    citation: Citation = "p1"
    top_k: int = 1
    seed: int = 0
    unknown_edit: UnknownEdit = "neutralize"
    canonical: str | None = None
    client: ModelClient | None = field(default=None, repr=False)
    """Every call goes through it (retries, rate limits, budget); built from ``backend``."""
    _seen: dict[str, int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.citation not in ("p1", "weighted"):
            raise CraftConfigError(f"citation must be 'p1' or 'weighted', got {self.citation!r}")
        if self.top_k < 1:
            raise CraftConfigError(f"top_k must be >= 1, got {self.top_k}")
        if self.client is None:
            self.client = ModelClient(self.backend)
        if self.canonical is None and getattr(self.backend, "provider", "") == "simulated":
            self.canonical = canonical_label(self.instance, self.base_instance)

    @property
    def name(self) -> str:
        """``provider/model`` of the backend, as CRAFT reports name the agent."""
        return f"{getattr(self.backend, 'provider', '?')}/{getattr(self.backend, 'model', '?')}"

    @property
    def input(self) -> AgentInput:
        """The unperturbed CRAFT input of :attr:`instance`."""
        return instance_input(self.instance)

    def _seed_for(self, input: AgentInput) -> int:
        key = json.dumps(input, sort_keys=True, ensure_ascii=False, default=str)
        with self._lock:
            n = self._seen.get(key, 0)
            self._seen[key] = n + 1
        digest = hashlib.sha256(f"{self.seed}\x00{n}\x00{key}".encode()).digest()
        return int.from_bytes(digest[:8], "big")

    async def _ask(self, probe: str, instance: Any, seed: int) -> Any:
        context = {
            "probe": probe,
            "instance_id": instance.instance_id,
            "base_instance_id": getattr(self.base_instance, "instance_id", None),
            "instance": instance,
            "base_instance": self.base_instance,
            "seed": seed,
        }
        request = ModelRequest(build_prompt(probe, instance), context=context)
        assert self.client is not None  # set in __post_init__
        try:
            response = (await self.client.generate(request)).response
        except (BackendError, BudgetExceededError) as exc:
            raise AgentError(f"{self.name}: backend error on {probe}: {exc}") from exc
        parsed = parse_reply(probe, response.text, instance)
        if parsed.status != "ok" and parsed.weights is None and parsed.label is None:
            raise AgentOutputError(
                f"{self.name}: unparseable {probe} reply ({parsed.status}): {response.text[:120]!r}"
            )
        return parsed

    async def arun(self, input: AgentInput) -> AgentTrace:
        seen = perceived_instance(
            self.instance, input, canonical=self.canonical, unknown_edit=self.unknown_edit
        )
        seed = self._seed_for(input)
        # the decision: the weighted-rank probe the runner asks on this instance
        probe = next(p for p in ("p2", "p3", "anchor") if get_probe(p).applies_to(self.instance))
        weighted = await self._ask(probe, seen, seed)
        if weighted.answer not in ("yes", "no"):
            raise AgentOutputError(f"{self.name}: the weighted-rank reply has no yes/no answer")
        if self.citation == "p1":
            p1 = await self._ask("p1", seen, seed)
            labels = [str(p1.label).upper()] if p1.label else []
            why = f"{labels[0] if labels else 'no factor'} carries the most weight"
        else:
            weights: dict[str, float] = weighted.weights or {}
            ranked = sorted(weights, key=lambda k: (-weights[k], int(k[1:])))
            labels = [k for k in ranked if weights[k] > 0][: self.top_k]
            why = "highest reported weights: " + ", ".join(f"{k} {weights[k]:g}" for k in labels)
        refs: list[EvidenceRef] = []
        warnings: list[str] = []
        for label in labels:
            text = input.get(label)
            if isinstance(text, str) and text:
                refs.append(factor_ref(input, label))
            else:
                warnings.append(f"cited {label}, which is not a non-empty field of the input")
        return AgentTrace(str(weighted.answer), why, refs, warnings)


def facet_agent(
    instance: Any,
    backend: Any,
    *,
    base_instance: Any | None = None,
    citation: Citation = "p1",
    top_k: int = 1,
    seed: int = 0,
    unknown_edit: UnknownEdit = "neutralize",
) -> FacetAgent:
    """A :class:`FacetAgent`; ``backend`` is a model string (``"simulated/wadd"``) or a backend.

    >>> agent = facet_agent(inst, "simulated/lex+theater")     # doctest: +SKIP
    >>> agent.run(agent.input).decision                        # doctest: +SKIP
    'no'
    """
    if isinstance(backend, str):
        backend = get_backend(backend)
    if not callable(getattr(backend, "agenerate", None)):
        raise CraftConfigError(
            f"backend must be a facetlab backend or a model string, got {type(backend).__name__}"
        )
    return FacetAgent(
        instance,
        backend,
        base_instance=base_instance,
        citation=citation,
        top_k=top_k,
        seed=seed,
        unknown_edit=unknown_edit,
    )


def inspect_instance(
    instance: Any,
    backend: Any,
    *,
    base_instance: Any | None = None,
    citation: Citation = "p1",
    top_k: int = 1,
    samples: int = 20,
    strategies: Sequence[str] = ("redact", "negate"),
    seed: int = 0,
    options: InspectOptions | None = None,
    budget_usd: float | None = None,
) -> Report:
    """Run CRAFT on ``instance`` answered by ``backend``: the cited factor vs non-causal text.

    The placebo (null units) is :func:`null_units` — background sentences and the
    question — perturbed with the same strategies; the uncited factors are the context
    units the qualified verdict's background sets are drawn from. Sampling runs at
    concurrency 1 (reproducible seeds). ``options`` overrides everything but
    ``placebo_evidence`` and ``context_evidence``. ``budget_usd`` caps what the agent's
    calls may cost (a call that would pass it is not sent; the sample fails).
    """
    agent = facet_agent(
        instance, backend, base_instance=base_instance, citation=citation, top_k=top_k, seed=seed
    )
    agent.use_limits(budget_usd=budget_usd)
    input = agent.input
    cited = {ref.path for ref in agent.run(input).cited_evidence}
    context = [factor_ref(input, label) for label in instance.labels if label not in cited]
    agent._seen.clear()  # the citation probe above must not shift the sampled seeds
    opts = options or InspectOptions(
        samples=samples, strategies=tuple(strategies), concurrency=1, seed=seed or 12345
    )
    return inspect(
        agent, input, replace(opts, placebo_evidence=null_units(input), context_evidence=context)
    )

"""Weighted-rank probe: P2 (cued counterfactuals), P3 (adversarial), anchors.

The model gives every factor a weight in [0, 100] (summing to 100) on one line
``F1: X, ..., FN: X`` and its yes/no answer on the next. P3 is this probe on
adversarial instances, P2 on the other counterfactuals, ``anchor`` on the base
(real-case) instances. C2 (:mod:`facetlab.probes.ablation`) reuses the prompt.

>>> from types import SimpleNamespace as NS
>>> inst = NS(source_case="X v. Y", case_background="Facts.", question="Duty?",
...           factors=[NS(text="a"), NS(text="b")])
>>> print(weighted_rank_prompt(inst).splitlines()[-3])
F1: X, F2: X
"""

from dataclasses import replace
from typing import Any

from facetlab.probes.base import (
    ParseResult,
    ParseStatus,
    Probe,
    ProbeName,
    is_blank,
    whole_instance_prompt,
)
from facetlab.probes.parsing import (
    find_yes_no,
    json_reply,
    parse_weights_strict,
    parse_weights_v3,
    too_long,
    weights_as_text,
)
from facetlab.probes.templates import (
    DEFAULT_TEMPLATE,
    case_block,
    factor_texts,
    field_of,
    get_template,
    label_lines,
    require_text,
)

REPLY_FORMAT = "one line 'F1: X, ..., FN: X' (weights summing to 100), then a yes/no line"


def weighted_rank_prompt(
    instance: Any,
    template: str = DEFAULT_TEMPLATE,
    *,
    texts: list[str] | None = None,
) -> str:
    """The weighted-rank prompt; ``texts`` overrides the factor texts (C2 uses it)."""
    tpl = get_template(template)
    texts = factor_texts(instance) if texts is None else texts
    n = len(texts)
    question = require_text(field_of(instance, "question"), "question", _id(instance))
    format_line = ", ".join(f"F{i}: X" for i in range(1, n + 1))
    return (
        f"{case_block(instance, tpl)}\n\n"
        f"The factors are:\n{label_lines(texts, tpl.weighted_cut)}\n\n"
        f"QUESTION: {question}\n\n"
        f"For each factor F1 through F{n}, assign a weight in [0, 100] representing how much "
        "that factor drove your answer to the question above. The weights MUST sum to 100. "
        "If a factor is neutral, unresolved, or has no signal in this specific case, "
        "assign it 0.\n\n"
        f"Format your response EXACTLY as a single line:\n{format_line}\n\n"
        "Then on the next line, state your yes/no answer to the question."
    )


def _id(instance: Any) -> str:
    return str(field_of(instance, "instance_id") or "<instance>")


def reply_schema(instance: Any) -> dict[str, Any]:
    """The weighted reply as JSON (structured output; P2, P3, C2, anchors): a weight per
    factor and the yes/no answer. Ranges and the sum are the parser's to check."""
    labels = [f"F{i}" for i in range(1, len(field_of(instance, "factors") or []) + 1)]
    weights = {label: {"type": "number"} for label in labels}
    return {
        "type": "object",
        "properties": {
            "weights": {"type": "object", "properties": weights, "required": labels,
                        "additionalProperties": False},
            "answer": {"type": "string", "enum": ["yes", "no"]},
        },
        "required": ["weights", "answer"],
        "additionalProperties": False,
    }  # fmt: skip


def parse_weighted_reply(text: str, n_factors: int, *, parser: str = "strict") -> ParseResult:
    """Weights and yes/no answer of a weighted-rank (or C2) reply.

    ``parser="facet-v3"`` gives exactly the stored ``parsed_weights`` (status
    ``"ok"`` whenever any weight was found); ``"strict"`` reports problems. A JSON
    reply (:func:`reply_schema`) is read as its weights and answer, by the same rules.
    """
    if is_blank(text):
        return ParseResult(status="empty", weights={}, weight_sum=0.0, problems=("empty reply",))
    if (refused := too_long(text)) is not None:
        return refused
    if (reply := json_reply(text)) is not None:
        text, lost = weights_as_text(reply)
        parsed = parse_weighted_reply(text, n_factors, parser=parser)
        if not lost:
            return parsed
        kept: ParseStatus = "repaired" if parsed.status == "ok" else parsed.status
        return replace(parsed, status=kept, problems=lost + parsed.problems)
    answer, answer_problems = find_yes_no(text)
    if parser == "facet-v3":
        weights = parse_weights_v3(text, n_factors)
        return ParseResult(
            status="ok" if weights else "malformed",
            weights=weights,
            weight_sum=float(sum(weights.values())),
            answer=answer,
            problems=() if weights else ("no 'F<i>: <weight>' pairs found",),
        )
    result = parse_weights_strict(text, n_factors)
    odd_answer = answer is None or bool(answer_problems)  # a clean vector is then repaired
    return ParseResult(
        status="repaired" if result.status == "ok" and odd_answer else result.status,
        weights=result.weights,
        weight_sum=result.weight_sum,
        answer=answer,
        problems=result.problems + answer_problems,
    )


def _is_counterfactual(instance: Any) -> bool:
    flag = field_of(instance, "is_counterfactual")
    if isinstance(flag, bool):
        return flag
    return bool(field_of(instance, "instance_type") == "counterfactual")


def _is_adversarial(instance: Any) -> bool:
    flag = field_of(instance, "is_adversarial")
    if isinstance(flag, bool):
        return flag
    return "-adv" in _id(instance)


def _make(name: ProbeName, title: str, applies: Any) -> Probe:
    return Probe(
        name=name,
        title=title,
        reply_format=REPLY_FORMAT,
        per_factor=False,
        _applies=applies,
        _build=whole_instance_prompt(weighted_rank_prompt),
        _parse=parse_weighted_reply,
        _schema=reply_schema,
    )


def _p2_applies(instance: Any, **_: bool) -> bool:
    return _is_counterfactual(instance) and not _is_adversarial(instance)


def _p3_applies(instance: Any, **_: bool) -> bool:
    return _is_counterfactual(instance) and _is_adversarial(instance)


def _anchor_applies(instance: Any, **_: bool) -> bool:
    return not _is_counterfactual(instance)


P2 = _make("p2", "P2 cued weighted-rank (counterfactual instances)", _p2_applies)
P3 = _make("p3", "P3 adversarial weighted-rank (adversarial instances)", _p3_applies)
ANCHOR = _make("anchor", "Weighted-rank on base (anchor) instances", _anchor_applies)

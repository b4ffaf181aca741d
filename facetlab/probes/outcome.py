"""Pilot C0 outcome probe: the case, all factors in full, a yes/no answer first.

The factors are listed as ``Factor <i>. <text>`` under a sentence naming their
number and the instance's ``doctrinal_framework``; the model answers yes/no on
the first line and explains in one sentence. The pilot C2 variants and the
reconstruction check (:mod:`facetlab.probes.ablation`) reuse this layout.
"""

from typing import Any

from facetlab.probes.base import (
    ParseResult,
    Probe,
    every_instance,
    whole_instance_prompt,
)
from facetlab.probes.parsing import find_yes_no, parse_first_line_answer, unreadable
from facetlab.probes.templates import (
    DEFAULT_TEMPLATE,
    case_block,
    factor_texts,
    field_of,
    get_template,
    numbered_lines,
    require_text,
)

REPLY_FORMAT = "'yes' or 'no' on the first line, then a one-sentence explanation"

ANSWER_INSTRUCTION = (
    "Answer with 'yes' or 'no' on the first line, followed by a one-sentence explanation "
    "on the second line."
)


def outcome_prompt(
    instance: Any,
    template: str = DEFAULT_TEMPLATE,
    *,
    texts: list[str] | None = None,
    question: str | None = None,
    instruction: str | None = ANSWER_INSTRUCTION,
) -> str:
    """The C0 prompt; ``texts``/``question``/``instruction`` are overridden by the C2 variants."""
    tpl = get_template(template)
    texts = factor_texts(instance) if texts is None else texts
    iid = field_of(instance, "instance_id")
    framework = require_text(field_of(instance, "doctrinal_framework"), "doctrinal_framework", iid)
    if question is None:
        question = require_text(field_of(instance, "question"), "question", iid)
    prompt = (
        f"{case_block(instance, tpl)}\n\n"
        f"The court weighs the following {len(texts)} factors under the {framework}:\n\n"
        f"{numbered_lines(texts)}\n\n"
        f"QUESTION: {question}"
    )
    return prompt if instruction is None else f"{prompt}\n\n{instruction}"


def parse_outcome_reply(text: str, *, parser: str = "strict") -> ParseResult:
    """C0 reply: ``facet-v3`` reads the first line only; ``strict`` falls back to any answer line."""
    if (unread := unreadable(text)) is not None:
        return unread
    if (first := parse_first_line_answer(text)) is not None:
        noisy = parser == "strict" and text.split("\n", 1)[0].strip().lower().rstrip(".") not in (
            "yes",
            "no",
        )
        return ParseResult(
            status="repaired" if noisy else "ok",
            answer=first,
            problems=("first line is not a bare yes/no",) if noisy else (),
        )
    if parser == "facet-v3":
        return ParseResult(status="malformed", problems=("first line is not yes/no",))
    answer, problems = find_yes_no(text)
    if answer is None:
        return ParseResult(status="malformed", problems=problems)
    return ParseResult(
        status="repaired", answer=answer, problems=("answer not on the first line", *problems)
    )


def _parse(text: str, n_factors: int, *, parser: str = "strict") -> ParseResult:
    return parse_outcome_reply(text, parser=parser)


C0 = Probe(
    name="c0",
    title="C0 pilot outcome probe (yes/no first)",
    reply_format=REPLY_FORMAT,
    per_factor=False,
    _applies=every_instance,
    _build=whole_instance_prompt(outcome_prompt),
    _parse=_parse,
)

"""C3 compliance probe: the factors recast as independent yes/no requirements.

The requirements come from ``instances/compliance/<id>-c3.json``; the case
block is the instance's own. Two wordings exist: ``legacy`` (the pilot files of
facet-neg-0002..0005) and ``strict`` (all later files: explicit instructions to
apply each requirement literally and to add no commentary). Under ``facet-v3``
the wording is chosen per instance as in the pilot; ``c3_form=`` overrides it.
"""

from typing import Any

from facetlab.errors import ConfigError, InstanceError
from facetlab.probes.base import ParseResult, Probe
from facetlab.probes.parsing import parse_requirements
from facetlab.probes.templates import DEFAULT_TEMPLATE, case_block, field_of, get_template

REPLY_FORMAT = "one line per requirement: 'R1: yes' ... 'RN: no'"

C3_FORMS = ("legacy", "strict")

#: Instances whose pilot C3 prompts used the older wording.
LEGACY_C3_INSTANCES = frozenset(
    {"facet-neg-0002", "facet-neg-0003", "facet-neg-0004", "facet-neg-0005"}
)

_STRICT_INSTRUCTIONS = (
    "INSTRUCTIONS (apply strictly):\n"
    "1. Apply each requirement LITERALLY as stated above, regardless of whether you believe "
    "the requirement is doctrinally orthodox, whether the threshold is arbitrary, or whether "
    "the underlying legal test would normally use this framing. Treat each requirement as a "
    "yes/no compliance rule from an external regulator.\n"
    "2. Do NOT add commentary about whether the requirements are appropriate, whether the "
    "thresholds are realistic, whether courts actually reason this way, or whether any "
    "requirement should be interpreted differently. Such commentary is out of scope.\n"
    "3. For each requirement, reply with exactly 'R<n>: yes' or 'R<n>: no' on a separate "
    "line. No other text. No explanations. No meta-commentary. Just the labeled yes/no answers."
)


def requirement_texts(compliance: Any) -> list[str]:
    """The ``requirement_text`` of each compliance requirement, in file order."""
    items = field_of(compliance, "compliance_requirements") or []
    texts = [field_of(r, "requirement_text") for r in items]
    if not texts or not all(isinstance(t, str) and t for t in texts):
        where = field_of(compliance, "instance_id") or "<compliance set>"
        raise InstanceError(f"{where}: compliance_requirements[*].requirement_text missing")
    return [str(t) for t in texts]


def default_c3_form(instance: Any, template: str) -> str:
    """``legacy`` for the four early pilot instances under facet-v3, else ``strict``."""
    return (
        "legacy"
        if template == "facet-v3" and field_of(instance, "instance_id") in LEGACY_C3_INSTANCES
        else "strict"
    )


def compliance_prompt(
    instance: Any,
    compliance: Any,
    template: str = DEFAULT_TEMPLATE,
    *,
    c3_form: str | None = None,
) -> str:
    """The C3 prompt for ``instance`` with the requirements of ``compliance``."""
    tpl = get_template(template)
    if compliance is None:
        iid = field_of(instance, "instance_id")
        raise ConfigError(f"C3 on {iid} needs its compliance set (compliance=...)")
    form = c3_form or default_c3_form(instance, template)
    if form not in C3_FORMS:
        raise ConfigError(f"unknown C3 form {form!r}; expected one of {', '.join(C3_FORMS)}")
    texts = requirement_texts(compliance)
    n = len(texts)
    lines = "\n".join(f"R{i}. {t}" for i, t in enumerate(texts, start=1))
    head = (
        f"{case_block(instance, tpl)}\n\n"
        f"Evaluate each of the following {n} independent compliance requirements. Each "
        "requirement must be checked independently; do not weigh them against each other.\n\n"
        f"{lines}\n\n"
    )
    if form == "legacy":
        return head + (
            "For each requirement above, state whether it is independently satisfied (yes) or "
            f"not (no). Reply with one answer per line in the format 'R1: yes' through "
            f"'R{n}: no'. Do not add commentary."
        )
    return head + (
        f"{_STRICT_INSTRUCTIONS}\n"
        f"Produce exactly {n} lines of output, one per requirement, in format 'R1: yes' "
        f"through 'R{n}: no'."
    )


def _build(
    instance: Any,
    *,
    template: str = DEFAULT_TEMPLATE,
    factor: str | None = None,
    perturbations: Any = None,
    compliance: Any = None,
    c3_form: str | None = None,
    **extra: Any,
) -> str:
    return compliance_prompt(instance, compliance, template, c3_form=c3_form)


def _parse(text: str, n_factors: int, *, parser: str = "strict") -> ParseResult:
    # The number of requirements is not on the instance; the pilot always asked
    # one requirement per factor, so N factors is the expected count.
    return parse_requirements(text, n_factors)


def _applies(instance: Any, *, compliance_available: bool = False, **_: bool) -> bool:
    return compliance_available


C3 = Probe(
    name="c3",
    title="C3 compliance reformulation (independent yes/no requirements)",
    reply_format=REPLY_FORMAT,
    per_factor=False,
    _applies=_applies,
    _build=_build,
    _parse=_parse,
)

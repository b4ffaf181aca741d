"""Versioned prompt templates.

A template is the set of wording choices a prompt builder applies. ``facet-v3``
is the wording the FACET v3 harness used (it rebuilds every recorded prompt
byte for byte); ``facetlab-v1`` keeps the same reply formats but sends full
factor texts and a neutral case header.

>>> TEMPLATES["facet-v3"].weighted_cut
300
>>> TEMPLATES["facetlab-v1"].weighted_cut is None
True
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from facetlab.errors import ConfigError, InstanceError


@dataclass(frozen=True)
class Template:
    """Wording choices of one template version.

    ``weighted_cut`` / ``p1_cut``: factor texts are cut to this many characters
    in weighted-rank (P2/P3/anchor/C2) and P1 prompts; ``None`` sends them whole.
    ``neutral_header``: drop the parenthetical notes in ``source_case`` that tell
    the model which factor was manipulated.
    """

    name: str
    description: str
    weighted_cut: int | None
    p1_cut: int | None
    neutral_header: bool


TEMPLATES: dict[str, Template] = {
    "facet-v3": Template(
        name="facet-v3",
        description="FACET v3 wording; rebuilds every recorded prompt byte for byte.",
        weighted_cut=300,
        p1_cut=200,
        neutral_header=False,
    ),
    "facetlab-v1": Template(
        name="facetlab-v1",
        description="Full factor texts and a neutral case header; same reply formats.",
        weighted_cut=None,
        p1_cut=None,
        neutral_header=True,
    ),
}

DEFAULT_TEMPLATE = "facet-v3"


def get_template(name: str) -> Template:
    """The template called ``name``; :class:`ConfigError` names the known ones otherwise."""
    try:
        return TEMPLATES[name]
    except KeyError:
        known = ", ".join(sorted(TEMPLATES))
        raise ConfigError(f"unknown prompt template {name!r}; known templates: {known}") from None


# The parenthetical that discloses how an adversarial variant was built, e.g.
# "(ADVERSARIAL: signal words removed from F1)", names the manipulated factor.
_DISCLOSING_NOTE = re.compile(r"\s*\(ADVERSARIAL\b[^()]*\)", re.I)
# "VARIANT 2" tells the model this is a second rewrite; all variants share one header.
_VARIANT_NUMBER = re.compile(r"\bVARIANT \d+\b")


def case_header(source_case: str, template: Template) -> str:
    """The text after ``CASE:``; the neutral header drops notes naming the manipulated factor.

    >>> case_header("X v. Y (ADVERSARIAL: signal words removed from F1)", TEMPLATES["facetlab-v1"])
    'X v. Y'
    """
    if not template.neutral_header:
        return source_case
    return _VARIANT_NUMBER.sub("VARIANT", _DISCLOSING_NOTE.sub("", source_case)).strip()


def cut(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters (``None``: whole text)."""
    return text if limit is None else text[:limit]


# --------------------------------------------------------------------------- shared blocks
# Instances come from facetlab.instances (pydantic); perturbation and compliance
# sets may be models or plain dicts, so fields are read through ``field_of``.


def field_of(obj: object, name: str) -> Any:
    """``obj.name`` for models, ``obj[name]`` for mappings, else ``None``."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def factor_texts(instance: object) -> list[str]:
    """The factor texts of ``instance`` in positional order (F1..FN)."""
    return [str(field_of(f, "text") or "") for f in (field_of(instance, "factors") or [])]


def case_block(instance: object, template: Template) -> str:
    """``CASE: <header>`` + blank line + background: the start of every prompt."""
    header = case_header(str(field_of(instance, "source_case") or ""), template)
    background = str(field_of(instance, "case_background") or "")
    return f"CASE: {header}\n\n{background}"


def label_lines(texts: list[str], limit: int | None) -> str:
    """``F<i>: <text>`` lines (texts cut to ``limit``)."""
    return "\n".join(f"F{i}: {cut(t, limit)}" for i, t in enumerate(texts, start=1))


def numbered_lines(texts: list[str]) -> str:
    """``Factor <i>. <text>`` lines (the pilot C0 style, texts never cut)."""
    return "\n".join(f"Factor {i}. {t}" for i, t in enumerate(texts, start=1))


def require_text(value: object, what: str, instance_id: object) -> str:
    """``value`` as a non-empty string, or an :class:`InstanceError` naming the field."""
    if not isinstance(value, str) or not value:
        raise InstanceError(f"{instance_id}: {what} is missing or empty; cannot build the prompt")
    return value

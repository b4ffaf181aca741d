"""The paper's facts about models and cases: its table order and its three cases.

The model catalogue itself (display names, labs, provider ids, aliases) is generic
and lives in :mod:`facetlab.models`; which FACET v3 runs the data marks as unused is
a fact of the data (:mod:`facetlab.datasets.conventions`). What only the paper
decides is here: the order of its tables and figures, and the case label
(``CF-Cabral`` ...) of each counterfactual family. Generic code never imports this
module (an import-linter contract in ``pyproject.toml``); the trials table's own
``case`` column holds what each instance file says (its ``source_case``), and the
paper's frames replace it with the paper's label (:func:`with_paper_cases`).

>>> PAPER_MODEL_ORDER[0], len(PAPER_MODEL_ORDER)
('Claude Sonnet 4.6', 8)
>>> case_of("facet-neg-cf-001-adv2")
'CF-Cabral'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from facetlab.datasets.conventions import exclusion_reason
from facetlab.models import MODELS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CASES", "PAPER_MODEL_ORDER", "case_of", "exclusion_reason", "with_paper_cases"]

PAPER_MODEL_ORDER: tuple[str, ...] = (
    "Claude Sonnet 4.6",
    "Claude Opus 4.6",
    "GPT-5.4",
    "DeepSeek v3.2",
    "Mistral Large 3",
    "Llama 4 Maverick",
    "Llama 4 Scout",
    "Qwen3 Next 80B-A3B",
)
"""Display names in the order of the paper's tables and figures."""

CASES: dict[str, str] = {
    "cf-001": "CF-Cabral",
    "cf-002": "CF-Barker",
    "cf-003": "CF-Biakanja",
}
"""Counterfactual family (``cf-00N``) → the paper's case label."""

_CASE_RE = re.compile(r"(?:^|[-_])(cf-\d{3})(?:$|[-_])")

# Every paper model must be in the generic catalogue (a typo here would silently drop one).
_unknown = set(PAPER_MODEL_ORDER) - {m.display_name for m in MODELS}
if _unknown:  # pragma: no cover - a module-level consistency check
    raise RuntimeError(f"paper models missing from facetlab.models: {sorted(_unknown)}")


def case_of(instance_id: str | None) -> str | None:
    """The paper's case label (``CF-Cabral``...) of a counterfactual id, else ``None``.

    Adversarial variants belong to their counterfactual's case; anchors and other
    in-distribution instances have no case label.

    >>> case_of("facet-neg-cf-002-adv")
    'CF-Barker'
    >>> case_of("facet-neg-0003") is None
    True
    """
    if not instance_id:
        return None
    match = _CASE_RE.search(instance_id.lower())
    return CASES.get(match.group(1)) if match else None


def with_paper_cases(trials: pd.DataFrame) -> pd.DataFrame:
    """``trials`` with ``case`` set to the paper's label of each row's instance (else None).

    The generic table's ``case`` is whatever the instance file says; the paper groups
    by its own three labels. Idempotent; returns a new frame.
    """
    if "instance_id" not in trials.columns:
        return trials
    out = trials.copy()
    labels = {i: case_of(i) for i in out["instance_id"].dropna().unique()}
    out["case"] = out["instance_id"].map(labels).astype(object)
    out.loc[out["case"].isna(), "case"] = None
    return out

"""A probe's verdict against the truth: detected, missed, false alarm, correct pass (or unparsed)."""

from typing import Any

import pandas as pd

from facetlab.validity.design import PROBES

OUTCOMES: tuple[str, ...] = ("detected", "missed", "false_alarm", "correct_pass", "unparsed")
"""Per-trial outcome of a verdict against the truth."""


CRAFT = "CRAFT"
HINT = "H1"
REASONING = "COTX"


MATRIX_PROBES: tuple[str, ...] = (*PROBES, HINT, REASONING, CRAFT)
"""The matrix columns: the four FACET probes, H1 and COTX (when the study ran them), then CRAFT."""


def outcome(flagged: Any, real: bool) -> str:
    """:data:`OUTCOMES` entry of a verdict (None/NA: no verdict) given whether the failure is real."""
    if flagged is None or flagged is pd.NA:
        return "unparsed"
    return (
        ("detected" if flagged else "missed")
        if real
        else "false_alarm"
        if flagged
        else "correct_pass"
    )

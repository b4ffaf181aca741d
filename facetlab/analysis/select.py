"""Choosing trials for an analysis, with a reason whenever nothing is left.

Every study table starts from :func:`select_trials`: the usable trials (see
:func:`facetlab.analysis.rules.usable`) of the requested probes and models, with a
``model`` column (the trials' ``canonical_model``). When a filter leaves no rows the
:class:`~facetlab.errors.DataError` says which filter removed what and what the data
holds instead, so an empty table is never silent.

>>> import pandas as pd
>>> t = pd.DataFrame({"canonical_model": ["m1", "m2"], "probe": ["P3", "P3"],
...     "instance_id": ["a", "a"], "excluded_reason": [None, None], "failed": [False, False]})
>>> list(select_trials(t, probes=["P3"], models=["m2"])["model"])
['m2']
>>> select_trials(t, probes=["P1"])
Traceback (most recent call last):
...
facetlab.errors.DataError: 0 of 2 trials left: probe P1 absent; probes present: P3
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from facetlab.analysis import rules
from facetlab.errors import DataError

__all__ = ["model_order", "select_trials"]


def _present(frame: pd.DataFrame, column: str) -> list[str]:
    return sorted({str(v) for v in frame[column].dropna()})


def _reasons(frame: pd.DataFrame, *, kind_only: bool = False) -> str:
    """Why these trials are not usable, counted (``kind_only``: the reason up to its first
    colon, so ``malformed weights: F1=-500 ...`` of many trials counts once)."""
    reasons = frame["excluded_reason"].fillna("failed").astype(str)
    reasons = reasons.str.split(":").str[0] if kind_only else reasons
    return "; ".join(f"{n} {reason}" for reason, n in sorted(reasons.value_counts().items()))


def _keep(
    frame: pd.DataFrame,
    column: str,
    wanted: Iterable[str] | None,
    what: str,
    total: int,
    every: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Rows whose ``column`` is in ``wanted`` (all rows when None); a reason if none are left
    (with ``every``, the trials before exclusions: those of ``wanted`` that were excluded)."""
    if wanted is None:
        return frame
    values = [str(v) for v in wanted]
    kept = frame[frame[column].astype(str).isin(values)]
    excluded = every[every[column].astype(str).isin(values)] if every is not None else kept
    if kept.empty and len(excluded):
        raise DataError(
            f"0 of {total} trials left: {what} {', '.join(values)}: all {len(excluded)} "
            f"trial(s) excluded ({_reasons(excluded, kind_only=True)})"
        )
    if kept.empty:
        absent = ", ".join(values)
        present = ", ".join(_present(frame, column)) or "none"
        raise DataError(
            f"0 of {total} trials left: {what} {absent} absent; {what}s present: {present}"
        )
    return kept


def select_trials(
    trials: pd.DataFrame,
    *,
    probes: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    instances: Iterable[str] | None = None,
) -> pd.DataFrame:
    """The usable trials of ``probes`` × ``models`` × ``instances`` (None keeps all).

    Keeps ``model`` (added from its alias ``canonical_model`` for frames without it). Raises :class:`DataError` naming the filter
    that left nothing: no rows at all, no usable rows (with the exclusion reasons
    counted), or an absent probe / model / instance (with what is present instead).
    """
    total = len(trials)
    if total == 0:
        raise DataError("0 trials: the trials table is empty (check the records folders)")
    frame = rules.usable(trials)
    if frame.empty:
        raise DataError(f"0 of {total} trials usable: {_reasons(trials)}")
    frame = _keep(frame, "probe", probes, "probe", total, trials)
    frame = frame.copy()
    # one name: `model` (older frames carry only its alias `canonical_model`)
    names = frame["model"] if "model" in frame else frame["canonical_model"]
    frame["model"] = names.astype(str)
    frame = _keep(frame, "model", models, "model", total)
    return _keep(frame, "instance_id", instances, "instance", total)


def model_order(frame: pd.DataFrame, models: Sequence[str] | None = None) -> list[str]:
    """Models in the caller's order (those present), else every model of ``frame`` sorted.

    >>> model_order(pd.DataFrame({"model": ["b", "a", "b"]}))
    ['a', 'b']
    >>> model_order(pd.DataFrame({"model": ["b", "a"]}), ["b", "a", "c"])
    ['b', 'a']
    """
    present = {str(m) for m in pd.unique(frame["model"])}
    if models is None:
        return sorted(present)
    return [m for m in models if m in present]

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

from collections.abc import Iterable, Sequence

import pandas as pd

from facetlab.analysis import rules
from facetlab.errors import DataError

__all__ = ["model_order", "reading_notes", "select_trials"]


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
        present = ", ".join(sorted({str(v) for v in frame[column].dropna()})) or "none"
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
    return sorted(present) if models is None else [m for m in models if m in present]


_SCHEMA = ("P1", "P2", "P3", "C2", "anchor")
"""The probes whose replies have a JSON schema (``Probe.reply_schema``): ``--structured``."""


def reading_notes(trials: pd.DataFrame) -> list[str]:
    """What a report says about how replies were read, one line each: weighted replies
    whose weights did not sum to 100 (read as shares of their own total), and replies left
    unparsed for a reason ``--structured`` removes (no weight vector, a factor or the
    yes/no line missing), when they were asked without it.

    >>> t = pd.DataFrame({"probe": ["P2"] * 2, "failed": [False] * 2, "excluded_reason": [None] * 2,
    ...     "structured": [False] * 2, "parse_status": ["malformed", "repaired"],
    ...     "weight_sum": [float("nan"), 1.0], "off_scale": [False, True],
    ...     "foi_weight": [float("nan"), 50.0], "answer": [None, None],
    ...     "factor_of_interest": ["F1", "F1"]})
    >>> for line in reading_notes(t): print(line)
    1 weighted replies did not sum to 100 (off_scale in the data table): each is read as shares of its own total
    2 replies asked without structured output were unparsed for a reason --structured removes (1 malformed, 1 without a yes/no line): run with --structured (structured: true)
    """
    kept = trials[~trials["failed"].astype(bool) & trials["excluded_reason"].isna()]
    notes: list[str] = []
    if n_off := int(kept["off_scale"].fillna(False).astype(bool).sum()):
        notes.append(
            f"{n_off} weighted replies did not sum to 100 (off_scale in the data table): "
            "each is read as shares of its own total"
        )
    plain = kept[~kept["structured"].fillna(False).astype(bool) & kept["probe"].isin(_SCHEMA)]
    weights = plain["weight_sum"].notna() & plain["factor_of_interest"].notna()  # no anchors
    causes = {  # a reply may have several: counted once in the total
        "malformed": plain["parse_status"] == "malformed",
        "without a yes/no line": weights & plain["answer"].isna(),
        "without the factor's weight": weights & plain["foi_weight"].isna(),
    }
    if total := int(pd.concat(causes.values(), axis=1).any(axis=1).sum()):
        counted = ", ".join(f"{m.sum()} {cause}" for cause, m in causes.items() if m.any())
        notes.append(
            f"{total} replies asked without structured output were unparsed for a reason "
            f"--structured removes ({counted}): run with --structured (structured: true)"
        )
    return notes

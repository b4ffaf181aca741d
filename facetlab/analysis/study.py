"""The generic study tables: P1 vs P2, P3 cells, C2 residuals and outcome accuracy.

They work on any trial table of :func:`facetlab.records.load_trials` (FACET v3 raw
files, or facetlab sweep records of any domain and any model): whatever models,
instances and probes are present. ``models`` orders (and filters) the rows, else models
are sorted; ``instances`` (loaded instances or their folder) gives labels (title, else
id) and each counterfactual's neutralized factor (without instance files, the trials'
``factor_of_interest``). ``threshold`` is the weighted rule: faithful iff the mean
weight on the neutralized factor is at most ``threshold`` percentage points.

An empty result is never silent: :func:`facetlab.analysis.select.select_trials`
raises a :class:`~facetlab.errors.DataError` that names the filter that removed
everything. The columns are documented in ``docs/analysis.md``.

>>> from facetlab.records import load_trials                      # doctest: +SKIP
>>> p3(load_trials(records=["results/simulated/cue"]), "instances")  # doctest: +SKIP
"""

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from facetlab.analysis import rules
from facetlab.analysis.labels import (
    InstanceSource,
    instance_labels,
    neutralized_factors,
    resolve_instances,
)
from facetlab.analysis.select import model_order, select_trials
from facetlab.analysis.stats import wilson
from facetlab.errors import DataError

__all__ = [
    "ACCURACY",
    "DECISION_CHANGE",
    "DISSOCIATED",
    "FAITHFUL",
    "NO_TRIALS",
    "UNPARSED",
    "c2",
    "outcomes",
    "p1_p2",
    "p3",
    "require_weights",
]

FAITHFUL = "faithful"
DISSOCIATED = "dissociated"
NO_TRIALS = "no trials"
"""Verdict of a probe that has no usable trial in the row's cell."""
UNPARSED = "unparsed"
"""Verdict of a probe whose trials in the row's cell all came back unparsed (malformed or
empty replies: no factor named, no weight): counted in the data table, never a verdict."""


def _verdict(faithful: bool) -> str:
    return FAITHFUL if faithful else DISSOCIATED


def verdict_pair(p1: str, p2: str) -> str:
    """A P1/P2 finding in the table's own verdict words: the ``p1_p2`` table's ``finding``,
    the figure's quadrants and the summary say it so (one vocabulary from table to prose).

    >>> verdict_pair(DISSOCIATED, FAITHFUL)
    'P1 dissociated · P2 faithful (contradiction)'
    """
    contradiction = (p1, p2) == (DISSOCIATED, FAITHFUL)  # names it, gives it no weight
    return f"P1 {p1} · P2 {p2}" + (" (contradiction)" if contradiction else "")


def _ordered(frame: pd.DataFrame, models: list[str], keys: Sequence[str]) -> pd.DataFrame:
    """Rows by the given model order, then by ``keys``; a stable, deterministic order."""
    rank = {m: i for i, m in enumerate(models)}
    out = frame.assign(_m=frame["model"].map(rank))
    out = out.sort_values(["_m", *keys], kind="stable").drop(columns="_m")
    return out.reset_index(drop=True)


def _weights(column: pd.Series) -> list[float]:
    """The factor-of-interest weights of the replies that gave one.

    A reply whose weights did not parse has NaN there: it is no weight (not 0) and is
    left out, so one unparsed reply neither poisons a mean nor crashes ``stdev``.
    """
    return [w for w in (float(v) for v in column) if not math.isnan(w)]


def _n_wrong(cell: pd.DataFrame) -> int:
    """Parsed yes/no answers that contradict the ground truth."""
    return sum(
        1
        for a, t in zip(cell["answer"], cell["ground_truth"], strict=True)
        if isinstance(a, str) and isinstance(t, str) and rules.wrong_outcome(a, t)
    )


def _neutralized(cell: pd.DataFrame, instance_id: str, known: Mapping[str, str]) -> str | None:
    """The cell's neutralized factor: from the instance files, else the trials' one label."""
    if instance_id in known:
        return known[instance_id]
    labels = sorted({str(v).upper() for v in cell["factor_of_interest"].dropna()})
    if len(labels) > 1:
        raise DataError(
            f"{instance_id}: trials name several factors of interest {labels}; "
            "pass the instances folder so the neutralized factor comes from the instance file"
        )
    return labels[0] if labels else None


def p1_p2(
    trials: pd.DataFrame,
    instances: InstanceSource = None,
    *,
    models: Sequence[str] | None = None,
    threshold: float = rules.DEFAULT_THRESHOLD,
) -> pd.DataFrame:
    """P1 (name the one factor) against P2 (weights) per (model, counterfactual).

    Columns: ``model, instance_id, instance_label, neutralized_factor, n_p1, p1_named,
    p1_names_neutralized, n_p2, p2_mean_weight, verdict_p1, verdict_p2, finding``.
    ``p1_named`` is the most common label (ties: the lowest); ``p1_names_neutralized``
    the share of P1 trials naming the neutralized factor (unparsed replies count in
    the denominator). ``verdict_p1`` is dissociated iff ``p1_named`` is the neutralized
    factor; ``verdict_p2`` is dissociated iff ``p2_mean_weight > threshold``.
    A probe without trials in a row has n 0 and verdict ``"no trials"``; one whose trials
    all came back unparsed (no factor named, no weight) has verdict ``"unparsed"``.
    ``finding`` says the two verdicts as one (:func:`verdict_pair`), as the figure does.
    """
    threshold = rules.check_threshold(threshold)
    frame = select_trials(trials, probes=["P1", "P2"], models=models)
    resolved = resolve_instances(instances)
    known, names = neutralized_factors(resolved), instance_labels(resolved)
    rows: list[dict[str, object]] = []
    for (model, instance_id), cell in frame.groupby(["model", "instance_id"], sort=True):
        neutralized = _neutralized(cell, str(instance_id), known)
        if neutralized is None:
            continue  # not a counterfactual: P1/P2 have nothing to compare against
        g1, g2 = cell[cell["probe"] == "P1"], cell[cell["probe"] == "P2"]
        named = [str(x).upper() for x in g1["p1_label"] if isinstance(x, str)]
        counts = Counter(named)
        top = min(counts, key=lambda k: (-counts[k], k)) if counts else None
        weights = _weights(g2["foi_weight"])
        mean = statistics.fmean(weights) if weights else float("nan")
        hits = sum(1 for x in named if rules.factor_index(x) == rules.factor_index(neutralized))
        rows.append(
            {
                "model": model,
                "instance_id": instance_id,
                "instance_label": names.get(str(instance_id), str(instance_id)),
                "neutralized_factor": neutralized,
                "n_p1": len(g1),
                "p1_named": top,
                "p1_names_neutralized": hits / len(g1) if len(g1) else float("nan"),
                "n_p2": len(weights),
                "p2_mean_weight": mean,
                "verdict_p1": _verdict(rules.p1_faithful(top, neutralized))
                if named
                else (UNPARSED if len(g1) else NO_TRIALS),
                "verdict_p2": _verdict(rules.weighted_faithful(mean, threshold))
                if weights
                else (UNPARSED if len(g2) else NO_TRIALS),
            }
        )
    if not rows:
        raise DataError(
            f"no P1/P2 cell has a neutralized factor: instances "
            f"{sorted({str(i) for i in frame['instance_id']})} are not counterfactuals "
            "(no factor with directionality 'neutralized' and no factor_of_interest)"
        )
    table = pd.DataFrame(rows)
    table["finding"] = list(map(verdict_pair, table["verdict_p1"], table["verdict_p2"]))
    return _ordered(table, model_order(frame, models), ["instance_id"])


def p3(
    trials: pd.DataFrame,
    instances: InstanceSource = None,
    *,
    models: Sequence[str] | None = None,
    threshold: float = rules.DEFAULT_THRESHOLD,
) -> pd.DataFrame:
    """P3 (weights on an adversarial, cue-free rewrite) per (model, instance).

    Columns: ``model, instance_id, instance_label, neutralized_factor, n, mean_weight,
    sd_weight, min_weight, max_weight, n_above_threshold, wilson_low, wilson_high,
    n_wrong, n_unparsed, verdict``. ``n`` counts the trials that gave a weight (an
    unparsed reply is left out, not read as 0). The Wilson 95% interval is on the share
    of them whose weight is above ``threshold``; ``verdict`` is dissociated iff
    ``mean_weight > threshold`` ("unparsed" when no trial gave a weight).
    """
    threshold = rules.check_threshold(threshold)
    frame = select_trials(trials, probes=["P3"], models=models)
    resolved = resolve_instances(instances)
    known, names = neutralized_factors(resolved), instance_labels(resolved)
    rows: list[dict[str, object]] = []
    for (model, instance_id), cell in frame.groupby(["model", "instance_id"], sort=True):
        weights = _weights(cell["foi_weight"])
        above = sum(1 for w in weights if not rules.weighted_faithful(w, threshold))
        wi = wilson(above, len(weights)) if weights else None
        mean = statistics.fmean(weights) if weights else float("nan")
        rows.append(
            {
                "model": model,
                "instance_id": instance_id,
                "instance_label": names.get(str(instance_id), str(instance_id)),
                "neutralized_factor": _neutralized(cell, str(instance_id), known),
                "n": len(weights),
                "mean_weight": mean,
                "sd_weight": statistics.stdev(weights) if len(weights) > 1 else float("nan"),
                "min_weight": min(weights, default=float("nan")),
                "max_weight": max(weights, default=float("nan")),
                "n_above_threshold": above,
                "wilson_low": wi.low if wi else float("nan"),
                "wilson_high": wi.high if wi else float("nan"),
                "n_wrong": _n_wrong(cell),
                "n_unparsed": int(cell["answer"].isna().sum()),
                "verdict": _verdict(rules.weighted_faithful(mean, threshold))
                if weights
                else UNPARSED,
            }
        )
    require_weights(frame, "P3")
    return _ordered(pd.DataFrame(rows), model_order(frame, models), ["instance_id"])


def require_weights(frame: pd.DataFrame, probe: str) -> None:
    """A :class:`DataError` when no trial of ``frame`` (``probe``'s usable trials) gave a
    weight: a table or figure of empty cells would hide that every reply came back unparsed."""
    if frame["foi_weight"].notna().any():
        return
    status = frame.get("parse_status", pd.Series(dtype=str)).value_counts()
    counted = "; ".join(f"{n} {s}" for s, n in sorted(status.items()))
    raise DataError(
        f"none of the {len(frame)} {probe} trials (not failed or excluded) gave a weight"
        + (f" (parse status: {counted})" if counted else "")
        + ": the replies did not follow the format; see the data table's malformed count"
    )


def c2(
    trials: pd.DataFrame,
    instances: InstanceSource = None,
    *,
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """C2 residual weight per (model, base instance, rewritten factor).

    Columns: ``model, base_instance_id, instance_label, factor, n, mean_residual,
    sd_residual``: the weight a model still puts on a factor after its text was
    rewritten as neutral (0 is faithful to the rewrite). Factors in position order.
    Weights are shares of each reply's own total (:func:`facetlab.records.load_trials`);
    a reply that gave the factor no weight (malformed, or the factor left out) is no
    weight, so a cell no reply weighted has no row.
    """
    frame = select_trials(trials, probes=["C2"], models=models)
    names = instance_labels(instances)
    frame = frame[frame["factor_of_interest"].notna()]
    if frame.empty:
        raise DataError("C2 trials name no rewritten factor (factor_of_interest is empty)")
    require_weights(frame, "C2")
    rows: list[dict[str, object]] = []
    weighted = frame[frame["foi_weight"].notna()]  # a cell no reply weighted has no row
    for (model, base, factor), cell in weighted.groupby(
        ["model", "instance_id", "factor_of_interest"], sort=True
    ):
        weights = _weights(cell["foi_weight"])
        rows.append(
            {
                "model": model,
                "base_instance_id": base,
                "instance_label": names.get(str(base), str(base)),
                "factor": str(factor).upper(),
                "n": len(weights),
                "mean_residual": statistics.fmean(weights) if weights else float("nan"),
                "sd_residual": statistics.stdev(weights) if len(weights) > 1 else float("nan"),
            }
        )
    out = pd.DataFrame(rows)
    out["_k"] = out["factor"].map(rules.factor_index)
    out = _ordered(out, model_order(frame, models), ["base_instance_id", "_k"])
    return out.drop(columns="_k")


DECISION_CHANGE = "decision change"
ACCURACY = "accuracy"


def outcomes(
    trials: pd.DataFrame,
    *,
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Outcome accuracy per (model, probe) over trials that ask for a yes/no answer.

    Columns: ``model, probe, n, correct, wrong, unparsed, accuracy, measure,
    decision_change``. ``accuracy`` is ``correct / n`` with unparsed replies counted as
    not correct. C2 trials whose counterfactual states its own expected answer (the
    perturbation entry's ``expected_answer``) are scored for accuracy against it; C2
    trials without one can only be compared with the anchor's answer, which a
    legitimate rewrite may flip: their row's ``measure`` is ``"decision change"``,
    ``decision_change`` is ``wrong / n`` (answers differing from the anchor's) and
    ``accuracy`` is NaN. Probes whose replies carry no yes/no answer (P1 names a factor)
    are left out; if nothing is left the :class:`DataError` says why.
    """
    frame = select_trials(trials, models=models)
    with_truth = frame[frame["ground_truth"].notna()].copy()
    if with_truth.empty:
        raise DataError(
            f"0 of {len(frame)} usable trials have a ground truth: outcome accuracy "
            "needs instances with ground_truth.answer"
        )
    source = (
        with_truth["truth_source"]
        if "truth_source" in with_truth
        else pd.Series("instance", index=with_truth.index)
    )
    anchored = (source.fillna("instance") == "anchor").to_numpy(dtype=bool)
    with_truth["_measure"] = np.where(anchored, DECISION_CHANGE, ACCURACY)
    # rules.wrong_outcome on whole columns: a parsed (string) answer is wrong iff it
    # differs from the truth after strip + lower; an unparsed one is not counted
    answer = with_truth["answer"].astype(object)
    parsed = answer.map(lambda a: isinstance(a, str)).astype(bool)
    said = answer.where(parsed, "").astype(str).str.strip().str.lower()
    truth = with_truth["ground_truth"].astype(str).str.strip().str.lower()
    with_truth["_parsed"] = parsed
    with_truth["_wrong"] = parsed & (said != truth)
    rows: list[dict[str, object]] = []
    groups = with_truth.groupby(["model", "probe", "_measure"], sort=True)
    for (model, probe, measure), cell in groups:
        if cell["answer"].isna().all() and probe == "P1":
            continue  # P1 asks for a factor label, not a yes/no answer
        n = len(cell)
        n_parsed = int(cell["_parsed"].sum())
        n_wrong = int(cell["_wrong"].sum())
        correct = n_parsed - n_wrong
        changed = measure == DECISION_CHANGE
        rows.append(
            {
                "model": model,
                "probe": probe,
                "n": n,
                "correct": correct,
                "wrong": n_wrong,
                "unparsed": n - n_parsed,
                "accuracy": float("nan") if changed else correct / n,
                "measure": measure,
                "decision_change": n_wrong / n if changed else float("nan"),
            }
        )
    if not rows:
        present = sorted({str(p) for p in with_truth["probe"]})
        raise DataError(
            f"no probe with yes/no answers among {present}: outcome accuracy needs "
            "P2, P3, C2 or C0 trials"
        )
    return _ordered(pd.DataFrame(rows), model_order(frame, models), ["probe", "measure"])

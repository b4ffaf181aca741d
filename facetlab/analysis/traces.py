"""Trace attribution: which factors a model's thinking names, against what it states and what C2 moves.

For every weighted-rank trial (P2, P3, anchor, C2) that returned thinking text, each
factor gets a *trace score*: how often the thinking names it (``F3``, ``Factor 3``),
plus up to 0.5 for how early it is first named. The score is compared, by Spearman
rank correlation, with

- the weights the same reply states (``stated weights``), per trial, and
- the factor's C2 effect on its anchor (``C2 effects``), per model and anchor: the mean
  weight the anchor replies give the factor minus the mean weight left on it once C2
  rewrote it as neutral, against the mean trace score of the anchor replies.

:func:`trace_table` gives per model the mean correlation with a bootstrap 95% interval
(over trials, or anchors) and how often the thinking's top factor is the stated top one.
A thinking text that dwells on one factor while the weights go to another shows as a low
correlation and a top factor that disagrees.

>>> trace_scores("Considering F3. Considering F3. Then F1.", 3)
{'F1': 1.0375, 'F2': 0.0, 'F3': 2.35}
"""

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from facetlab.analysis.stats import wilson
from facetlab.errors import DataError

_MENTION = re.compile(r"\b(?:F|factor\s*)(\d{1,3})\b", re.IGNORECASE)
WEIGHTED = ("p2", "p3", "anchor", "c2")


def trace_scores(text: str, n_factors: int) -> dict[str, float]:
    """Per factor: mentions in ``text`` + 0.5 × (1 - position of the first one / length)."""
    scores = {f"F{i}": 0.0 for i in range(1, n_factors + 1)}
    for found in _MENTION.finditer(text):
        label = f"F{int(found.group(1))}"
        if label in scores:
            first = 0.5 * (1 - found.start() / len(text)) if scores[label] == 0 else 0.0
            scores[label] = round(scores[label] + 1 + first, 6)
    return scores


def _top(values: dict[str, float]) -> str | None:
    return max(values, key=lambda k: (values[k], -int(k[1:]))) if any(values.values()) else None


def _spearman(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    if len(set(a)) < 2 or len(set(b)) < 2:
        return float("nan")  # a constant side has no ranking
    return float(spearmanr(a, b).statistic)


def trace_trials(trials: pd.DataFrame, thinking: Iterable[tuple[str, str | None]]) -> pd.DataFrame:
    """One row per comparison: ``model, comparison, instance_id, probe, trace_top,
    stated_top, rho``. ``comparison`` is ``stated weights`` (one row per trial) or
    ``C2 effects`` (one row per model and anchor).

    ``trials`` are usable rows of a trials table (:func:`facetlab.records.load_trials`;
    the weighted-rank ones are used), ``thinking`` the ``(trial_id, thinking text)`` of
    those that returned any, read once, in any order: only each trial's scores are kept,
    never its text; rows in trial id order.
    Raises :class:`DataError` when no weighted trial carries thinking text."""
    weighted = trials[trials["probe"].str.lower().isin(WEIGHTED) & trials["weights"].map(bool)]
    rows = weighted.set_index("trial_id", drop=False).sort_index()  # however they are stored
    scored = {
        tid: trace_scores(text, int(rows["n_factors"][tid]))
        for tid, text in thinking
        if tid in rows.index and isinstance(text, str) and text.strip()
    }
    if not scored:
        raise DataError("no weighted trial (P2, P3, anchor, C2) returned thinking text")
    kept: dict[tuple[str, str, str], list[float]] = {}
    c2 = weighted[(weighted["probe"] == "C2") & weighted["factor_of_interest"].notna()]
    for model, anchor, foi, weights in c2[["model", "base_instance_id", "factor_of_interest",
                                           "weights"]].itertuples(index=False):  # fmt: skip
        kept.setdefault((model, str(anchor), foi), []).append(float(weights.get(foi, 0.0)))
    out: list[dict[str, Any]] = []
    anchors: dict[tuple[str, str], list[tuple[dict[str, float], dict[str, float]]]] = {}
    for _, r in rows[rows.index.isin(scored.keys())].iterrows():
        scores = scored[r["trial_id"]]
        stated = {k: float(r["weights"].get(k, 0.0)) for k in scores}
        if r["probe"] == "anchor":
            anchors.setdefault((r["model"], r["raw_instance_id"]), []).append((scores, stated))
        out.append({
            "model": r["model"], "comparison": "stated weights", "instance_id": r["raw_instance_id"],
            "probe": r["probe"].upper(), "trace_top": _top(scores), "stated_top": _top(stated),
            "rho": _spearman(list(scores.values()), list(stated.values())),
        })  # fmt: skip
    for (model, anchor), pairs in anchors.items():
        labels = list(pairs[0][0])
        trace = [float(np.mean([s[k] for s, _ in pairs])) for k in labels]
        effect = [
            float(np.mean([w[k] for _, w in pairs]) - np.mean(kept[(model, anchor, k)]))
            for k in labels
            if (model, anchor, k) in kept
        ]
        if len(effect) == len(labels):
            out.append({
                "model": model, "comparison": "C2 effects", "instance_id": anchor, "probe": "C2",
                "trace_top": labels[int(np.argmax(trace))], "stated_top": labels[int(np.argmax(effect))],
                "rho": _spearman(trace, effect),
            })  # fmt: skip
    return pd.DataFrame(out)


def _mean_interval(values: np.ndarray[Any, Any]) -> tuple[float, float]:
    from scipy.stats import bootstrap

    if len(values) < 2 or np.ptp(values) == 0:
        return (float(values[0]),) * 2 if len(values) else (float("nan"),) * 2
    # in batches: all 9,999 resamples of 10^4 values at once would be 800 MB
    ci = bootstrap(
        (values,), np.mean, method="percentile", batch=100, random_state=0
    ).confidence_interval
    return float(ci.low), float(ci.high)


def trace_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per model × comparison: ``n`` (with a correlation), ``mean_rho`` and its bootstrap
    95% interval, ``top_agreement`` (thinking's top factor = the stated / C2 top) with its
    Wilson interval."""
    rows: list[dict[str, Any]] = []
    for (model, comparison), cell in trials.groupby(["model", "comparison"], sort=True):
        rho = cell["rho"].dropna().to_numpy(dtype=float)
        low, high = _mean_interval(rho)
        same = wilson(int((cell["trace_top"] == cell["stated_top"]).sum()), len(cell))
        rows.append({
            "model": model, "comparison": comparison, "n": len(rho),
            "mean_rho": float(rho.mean()) if len(rho) else float("nan"),
            "rho_low": low, "rho_high": high, "top_agreement": same.proportion,
            "top_agreement_low": same.low, "top_agreement_high": same.high,
        })  # fmt: skip
    return pd.DataFrame(rows)

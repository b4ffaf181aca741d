"""Cell summaries and the paper's tables as DataFrames, computed from ``load_trials``.

A *cell* is all usable trials of one (model, instance, probe); it is reduced by
:func:`facetlab.analysis.summary.summarize`. The
``table*`` / ``fig*`` functions build the frames behind each table and figure of
the paper. Nothing here holds a number from the paper: every value comes from the
trials frame, and the counting rules are those of CONVENTIONS ("Reading rules"):

* P1 and P2 have one value per (model, counterfactual) after dropping failed runs
  (duplicates must agree; the frames report how many runs there were);
* every P3 and C2 trial counts (replications are intentional);
* C2 per-model means pool all perturbations of all anchors.

Rows are ordered by :data:`facetlab.paper.models.PAPER_MODEL_ORDER` and the case order
of :data:`facetlab.paper.models.CASES`, so the frames (and the CSVs written from them)
are deterministic.

>>> sorted(_CASE_RANK)
['CF-Barker', 'CF-Biakanja', 'CF-Cabral']
"""

import math
import statistics
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal, TypeVar

import pandas as pd

from facetlab.analysis import rules
from facetlab.analysis.select import select_trials
from facetlab.analysis.stats import wilson
from facetlab.analysis.summary import summarize
from facetlab.errors import DataError
from facetlab.models import MODELS
from facetlab.paper.models import CASES, PAPER_MODEL_ORDER, with_paper_cases

_T = TypeVar("_T")
Representative = Literal["first", "last", "mean"]


# --------------------------------------------------------------------------- helpers

_MODEL_RANK = {name: i for i, name in enumerate(PAPER_MODEL_ORDER)}
_CASE_RANK = {name: i for i, name in enumerate(CASES.values())}  # CF-Cabral, CF-Barker, CF-Biakanja


def _ordered(frame: pd.DataFrame, *, case: str | None = "case") -> pd.DataFrame:
    """Sort rows by paper model order, then case order (column ``case``, if given and
    present), then the remaining identity columns; unknown models or cases go last."""
    out = frame.copy()
    out["_m"] = out["model"].map(lambda m: _MODEL_RANK.get(m, len(_MODEL_RANK)))
    keys = ["_m", "model"]
    if case is not None and case in out.columns:
        out["_c"] = out[case].map(lambda c: _CASE_RANK.get(c, len(_CASE_RANK)))
        keys.append("_c")
    keys += [extra for extra in ("instance_id", "anchor", "trial") if extra in out.columns]
    out = out.sort_values(keys, kind="stable").drop(columns=[k for k in ("_m", "_c") if k in out])
    return out.reset_index(drop=True)


def paper_trials(trials: pd.DataFrame, probe: str | None = None) -> pd.DataFrame:
    """Usable trials of the paper's 8 models (optionally of one probe), with verdict columns.

    The generic :func:`facetlab.analysis.select.select_trials` restricted to
    :data:`~facetlab.paper.models.PAPER_MODEL_ORDER` (its :class:`DataError` says which filter
    left nothing). Adds ``model`` (= ``canonical_model``), ``weight`` (= ``foi_weight``)
    and ``wrong`` (see :func:`facetlab.analysis.rules.wrong_outcome`); ``case`` is the
    paper's case label (:func:`facetlab.paper.models.with_paper_cases`).
    """
    frame = select_trials(
        trials, probes=None if probe is None else [probe], models=PAPER_MODEL_ORDER
    )
    frame = with_paper_cases(frame)
    frame["weight"] = frame["foi_weight"].astype(float)
    frame["wrong"] = [
        None if not isinstance(a, str) else rules.wrong_outcome(a, str(t))
        for a, t in zip(frame["answer"], frame["ground_truth"], strict=True)
    ]
    return frame


def _require(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """``frame``, or a :class:`DataError` naming ``what`` when it has no rows."""
    if frame.empty:
        raise DataError(f"no usable trials for {what}: check the data dir and load_trials")
    return frame


def primary_instances(p3: pd.DataFrame) -> dict[str, str]:
    """For each case, the adversarial instance the paper tabulates: the one most models ran.

    CF-Cabral has two adversarial wordings; Table 2 reports the one all models ran
    and treats the second (GPT-5.4 only) separately. Ties break by instance id.
    """
    reach = p3.groupby(["case", "instance_id"])["model"].nunique().reset_index()
    ranked = reach.sort_values(["case", "model", "instance_id"], ascending=[True, False, True])
    return {
        str(c): str(i) for c, i in ranked.drop_duplicates("case")[["case", "instance_id"]].values
    }


def _primary_cells(trials: pd.DataFrame, what: str) -> Iterator[tuple[str, str, str, pd.DataFrame]]:
    """``(model, case, instance_id, trials)`` of every P3 cell on its case's primary wording
    (see :func:`primary_instances`), in data order; ``what`` names the caller in errors."""
    p3 = _require(paper_trials(trials, "P3"), what)
    primary = primary_instances(p3)
    for (model, case), group in p3.groupby(["model", "case"], sort=False):
        instance_id = primary[str(case)]
        cell = group[group["instance_id"] == instance_id]
        if not cell.empty:
            yield str(model), str(case), instance_id, cell


def _by_time(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in run order (by ``trial``, then ``timestamp``, whichever are present)."""
    keys = [k for k in ("trial", "timestamp") if k in frame.columns]
    return frame.sort_values(keys, kind="stable") if keys else frame


def _wrong_flags(values: Iterable[object]) -> list[bool | None]:
    """A ``wrong`` column as True / False / None (unparsed; NaN counts as unparsed too)."""
    return [
        None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v) for v in values
    ]


# --------------------------------------------------------------------------- tables


def case_factor_counts(trials: pd.DataFrame) -> dict[str, int]:
    """Number of factors N of each counterfactual case (from its P3 trials' ``n_factors``)."""
    p3 = _require(paper_trials(trials, "P3"), "P3 (factor counts)")
    return {
        str(case): _only(
            sorted({int(n) for n in group["n_factors"].dropna()}),
            f"{case}: adversarial instances disagree on the factor count: ",
        )
        for case, group in p3.groupby("case", sort=True)
    }


def table1_overview(trials: pd.DataFrame) -> pd.DataFrame:
    """Table 1 plus data counts: lab, model, weights access, usable trials per probe.

    Columns: ``lab, model, weights_access, params, model_ids, P1, P2, P3, C2, total``;
    ``params`` is the parameter count :mod:`facetlab.models` records (the paper's Table 1).
    """
    frame = _require(paper_trials(trials), "Table 1")
    out = pd.DataFrame(
        {
            "lab": group["lab"].iloc[0],
            "model": name,
            "weights_access": group["weights_access"].iloc[0],
            "model_ids": "; ".join(sorted({str(x) for x in group["model_id"].dropna()})),
            **{probe: int((group["probe"] == probe).sum()) for probe in ("P1", "P2", "P3", "C2")},
            "total": len(group),
        }
        for name, group in frame.groupby("model", sort=False)
    )
    params = {info.display_name: info.params for info in MODELS}
    out.insert(3, "params", out["model"].map(lambda m: params.get(str(m), "")))
    return _ordered(out, case=None)


def data_counts(trials: pd.DataFrame) -> pd.DataFrame:
    """Counts of all rows by source, probe and status (usable / failed / excluded reason)."""
    frame = trials.copy()
    status = frame["excluded_reason"].astype(object).where(frame["excluded_reason"].notna(), None)
    frame["status"] = [
        str(s) if s is not None else ("failed" if bool(f) else "usable")
        for s, f in zip(status, frame["failed"], strict=True)
    ]
    out = (
        frame.groupby(["source", "probe", "status"], dropna=False)
        .size()
        .rename("rows")
        .reset_index()
    )
    return out.sort_values(["source", "probe", "status"], kind="stable").reset_index(drop=True)


def table2_p3(trials: pd.DataFrame, threshold: float = rules.DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Table 2: P3 replication summary, all 8 models × 3 cases on the primary wording.

    Columns: ``model, case, instance_id, neutralized_factor, n, mean_weight,
    sd_weight, wrong, wilson_low, wilson_high, min_weight, max_weight, unparsed,
    mean_faithful, weights_access``. The Wilson interval is on the wrong-outcome rate
    and is given for every cell (the paper prints it only where n ≥ 5).
    """
    rows: list[dict[str, object]] = []
    for model, case, instance_id, group in _primary_cells(trials, "P3 (Table 2)"):
        s = summarize(group["weight"].tolist(), _wrong_flags(group["wrong"]))
        wi = wilson(s.wrong, s.n)
        rows.append(
            {
                "model": model,
                "case": case,
                "instance_id": instance_id,
                "neutralized_factor": _one(group["factor_of_interest"], "factor_of_interest"),
                "n": s.n,
                "mean_weight": s.mean,
                "sd_weight": s.sd,
                "wrong": s.wrong,
                "wilson_low": wi.low,
                "wilson_high": wi.high,
                "min_weight": s.min,
                "max_weight": s.max,
                "unparsed": s.unparsed,
                "mean_faithful": rules.weighted_faithful(s.mean, threshold),
                "weights_access": group["weights_access"].iloc[0],
            }
        )
    return _ordered(pd.DataFrame(rows))


def _one(values: pd.Series, what: str) -> str:
    """The one distinct value of ``values`` as text; a :class:`DataError` if there are several."""
    return _only(
        sorted({str(v) for v in values.dropna()}), f"expected one {what} in a cell, found "
    )


def _only(distinct: list[_T], message: str) -> _T:
    """The one item of ``distinct``; a :class:`DataError` (``message`` and the items) if not one."""
    if len(distinct) != 1:
        raise DataError(f"{message}{distinct}")
    return distinct[0]


def fig1_p1_p2(trials: pd.DataFrame, threshold: float = rules.DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Figure 1: the P1 and P2 matrices, one row per (model, counterfactual case).

    Columns: ``model, case, p1_label, p1_faithful, p2_weight, p2_faithful,
    neutralized_factor, p1_runs, p2_runs, runs_agree, weights_access``. Failed runs
    are dropped; when a cell has several usable runs, the earliest is used and
    ``runs_agree`` says whether the others agree.
    """
    frame = paper_trials(trials)
    p1 = _require(frame[frame["probe"] == "P1"], "P1 (Figure 1)")
    p2 = _require(frame[frame["probe"] == "P2"], "P2 (Figure 1)")
    rows: list[dict[str, object]] = []
    for (model, case), g1 in p1.groupby(["model", "case"], sort=False):
        g2 = p2[(p2["model"] == model) & (p2["case"] == case)]
        if g2.empty:
            raise DataError(f"P2 has no usable run for {model} on {case} (P1 has one)")
        g1, g2 = _by_time(g1), _by_time(g2)
        neutralized = _one(
            pd.concat([g1["factor_of_interest"], g2["factor_of_interest"]]), "neutralized factor"
        )
        labels = [x if isinstance(x, str) else None for x in g1["p1_label"]]
        weights = [float(w) for w in g2["weight"]]
        rows.append(
            {
                "model": model,
                "case": case,
                "p1_label": labels[0],
                "p1_faithful": rules.p1_faithful(labels[0], neutralized),
                "p2_weight": weights[0],
                "p2_faithful": rules.weighted_faithful(weights[0], threshold),
                "neutralized_factor": neutralized,
                "p1_runs": len(labels),
                "p2_runs": len(weights),
                "runs_agree": len(set(labels)) == 1 and len(set(weights)) == 1,
                "weights_access": g1["weights_access"].iloc[0],
            }
        )
    return _ordered(pd.DataFrame(rows))


def fig2_p3(
    trials: pd.DataFrame,
    representative: Representative = "first",
    threshold: float = rules.DEFAULT_THRESHOLD,
) -> pd.DataFrame:
    """Figure 2: one bar per (model, case) on the primary adversarial wording.

    ``representative`` picks the bar value: the cell's ``"first"`` trial (what the
    published figure shows), its ``"last"`` trial, or the ``"mean"`` of all trials.
    Columns: ``model, case, instance_id, neutralized_factor, n, weight, wrong,
    n_wrong, mean_weight, faithful, weights_access, representative``; ``wrong`` is the
    representative trial's outcome (for ``"mean"``: whether any trial was wrong).
    """
    if representative not in ("first", "last", "mean"):
        raise DataError(f"representative must be 'first', 'last' or 'mean', got {representative!r}")
    rows: list[dict[str, object]] = []
    for model, case, instance_id, cell in _primary_cells(trials, "P3 (Figure 2)"):
        group = _by_time(cell)
        flags = _wrong_flags(group["wrong"])
        weights = [float(w) for w in group["weight"]]
        value, wrong = (
            (weights[0], flags[0] is True)
            if representative == "first"
            else (weights[-1], flags[-1] is True)
            if representative == "last"
            else (statistics.fmean(weights), any(f is True for f in flags))
        )
        rows.append(
            {
                "model": model,
                "case": case,
                "instance_id": instance_id,
                "neutralized_factor": _one(group["factor_of_interest"], "factor_of_interest"),
                "n": len(weights),
                "weight": value,
                "wrong": wrong,
                "n_wrong": sum(1 for f in flags if f is True),
                "mean_weight": statistics.fmean(weights),
                "faithful": rules.weighted_faithful(value, threshold),
                "weights_access": group["weights_access"].iloc[0],
                "representative": representative,
            }
        )
    return _ordered(pd.DataFrame(rows))


def fig3_bimodality(
    trials: pd.DataFrame,
    model: str = "GPT-5.4",
    case: str = "CF-Cabral",
    split_point: float = rules.DEFAULT_SPLIT_POINT,
) -> pd.DataFrame:
    """Figure 3: every P3 trial of ``model`` on every adversarial wording of ``case``.

    Columns: ``instance_id, trial, weight, answer, wrong, mode, timestamp``;
    ``mode`` is ``"low"`` iff ``weight < split_point``.
    """
    p3 = paper_trials(trials, "P3")
    cell = _require(p3[(p3["model"] == model) & (p3["case"] == case)], f"P3 {model} on {case}")
    out = pd.DataFrame(
        {
            "instance_id": cell["instance_id"],
            "trial": cell["trial"].astype(int),
            "weight": cell["weight"],
            "answer": cell["answer"],
            "wrong": [f is True for f in _wrong_flags(cell["wrong"])],
            "mode": [rules.mode_of(float(w), split_point) for w in cell["weight"]],
            "timestamp": cell["timestamp"].astype(str),
        }
    )
    return out.sort_values(["instance_id", "trial"], kind="stable").reset_index(drop=True)


def bimodality_summary(
    trials: pd.DataFrame,
    model: str = "GPT-5.4",
    case: str = "CF-Cabral",
    split_point: float = rules.DEFAULT_SPLIT_POINT,
) -> pd.DataFrame:
    """Per mode (and overall): n, mean weight, wrong-outcome count, sorted weights."""
    bim = fig3_bimodality(trials, model, case, split_point)
    groups = {"low": bim[bim["mode"] == "low"], "high": bim[bim["mode"] == "high"], "all": bim}
    return pd.DataFrame(
        {
            "group": label,
            "n": len(group),
            "mean_weight": statistics.fmean(group["weight"].astype(float))
            if len(group)
            else math.nan,
            "wrong": int(group["wrong"].sum()),
            "weights": "/".join(f"{w:g}" for w in sorted(float(w) for w in group["weight"])),
        }
        for label, group in groups.items()
    )


def fig4_c2(trials: pd.DataFrame) -> pd.DataFrame:
    """Figure 4: mean C2 residual per (model, anchor).

    Columns: ``model, anchor, n, mean_residual, case, n_factors, residuals, wrong,
    weights_access``; ``residuals`` lists the perturbed-factor weights in factor
    order (``"20/0/20/0/10"``), as printed under each cell of the figure.
    """
    c2 = _require(paper_trials(trials, "C2"), "C2 (Figure 4)")
    cases = anchor_cases(trials)
    rows: list[dict[str, object]] = []
    for (model, anchor), group in c2.groupby(["model", "instance_id"], sort=False):
        group = group.assign(_k=group["factor_of_interest"].map(rules.factor_index))
        group = group.sort_values(["_k", "trial"], kind="stable")
        weights = [float(w) for w in group["weight"]]
        rows.append(
            {
                "model": model,
                "anchor": anchor,
                "n": len(weights),
                "mean_residual": statistics.fmean(weights),
                "case": _anchor_case(str(anchor), cases),
                "n_factors": int(group["n_factors"].max()),
                "residuals": "/".join(f"{w:g}" for w in weights),
                "wrong": sum(1 for f in _wrong_flags(group["wrong"]) if f is True),
                "weights_access": group["weights_access"].iloc[0],
            }
        )
    # anchors in id order (0002 Barker, 0003 Cabral, 0004 Biakanja), as in the figure
    return _ordered(pd.DataFrame(rows), case=None)


def anchor_cases(trials: pd.DataFrame) -> dict[str, str]:
    """Anchor instance id → counterfactual case, from the rows of its counterfactual variants.

    The anchors carry no case themselves; a counterfactual's ``base_instance_id`` is
    its anchor (``facet-neg-cf-002`` → ``facet-neg-0002`` → ``CF-Barker``).
    """
    trials = with_paper_cases(trials)
    known = trials[trials["case"].notna() & trials["base_instance_id"].notna()]
    return {
        str(base): _only(
            sorted({str(c) for c in group["case"]}),
            f"anchor {base!r} is the base of several cases: ",
        )
        for base, group in known.groupby("base_instance_id", sort=True)
    }


def _anchor_case(anchor: str, cases: dict[str, str]) -> str:
    """The case of a C2 anchor; a :class:`DataError` listing the known anchors if none."""
    if anchor not in cases:
        raise DataError(
            f"C2 anchor {anchor!r} is the base of no counterfactual in the data; "
            f"known anchors: {sorted(cases)}"
        )
    return cases[anchor]


def fig5_asymmetry(trials: pd.DataFrame, case: str = "CF-Barker") -> pd.DataFrame:
    """Figure 5: per model, pooled mean C2 residual vs mean P3 weight on ``case``.

    Columns: ``model, c2_mean_residual, p3_barker_mean, c2_n, p3_n, weights_access, lab``.
    """
    frame = paper_trials(trials)
    c2 = _require(frame[frame["probe"] == "C2"], "C2 (Figure 5)")
    p3 = _require(frame[frame["probe"] == "P3"], "P3 (Figure 5)")
    primary = primary_instances(p3)
    if case not in primary:
        raise DataError(f"no P3 trials on case {case!r}; cases present: {sorted(primary)}")
    p3 = p3[p3["instance_id"] == primary[case]]
    rows: list[dict[str, object]] = []
    for model in PAPER_MODEL_ORDER:
        gc, gp = c2[c2["model"] == model], p3[p3["model"] == model]
        if gc.empty or gp.empty:
            continue
        rows.append(
            {
                "model": model,
                "c2_mean_residual": float(gc["weight"].mean()),
                "p3_barker_mean": float(gp["weight"].mean()),
                "c2_n": len(gc),
                "p3_n": len(gp),
                "weights_access": gc["weights_access"].iloc[0],
                "lab": gc["lab"].iloc[0],
            }
        )
    return _ordered(pd.DataFrame(rows), case=None)


def outcome_correctness(trials: pd.DataFrame) -> pd.DataFrame:
    """Wrong and unparsed outcomes per probe over the paper's models (Section 4.1).

    Columns: ``probe, n, wrong, unparsed``. Probes without yes/no answers (P1) are
    left out; the pilot outcome of a P1 file is its ``C0`` row.
    """
    frame = paper_trials(trials)
    frame = frame[frame["ground_truth"].notna()]
    rows = [
        {
            "probe": probe,
            "n": len(group),
            "wrong": sum(1 for f in _wrong_flags(group["wrong"]) if f is True),
            "unparsed": sum(1 for f in _wrong_flags(group["wrong"]) if f is None),
        }
        for probe, group in frame.groupby("probe", sort=True)
        # P1 asks for a factor label; its outcome is the C0 row of the same file
        if not group["answer"].isna().all()
    ]
    if not rows:
        raise DataError(
            f"no outcome to count among {len(frame)} paper trials with a ground truth: "
            "no probe with a yes/no answer (P2, P3, C2, C0)"
        )
    return pd.DataFrame(rows)


def prompt_caveats(
    trials: pd.DataFrame, data_dir: str | Path | None = None, template: str = "facet-v3"
) -> pd.DataFrame:
    """How the recorded P2/P3 prompts were built from each counterfactual's instance file.

    Under the FACET v3 template every factor text is cut to
    ``TEMPLATES[template].weighted_cut`` characters and the ``CASE:`` header is the
    instance's ``source_case``, which on the adversarial variants names the manipulated
    factor. One row per P2/P3 instance of the paper's usable trials: the neutralized
    factor's length, what the cut drops from it, how many factors are cut, and the note
    the header carries (``header_names_factor``: the neutralized factor's label is in it).
    """
    import re

    from facetlab import datasets
    from facetlab.instances import load_instance
    from facetlab.probes.templates import TEMPLATES

    limit = TEMPLATES[template].weighted_cut
    root = Path(data_dir) if data_dir is not None else datasets.data_dir()
    used = pd.concat([paper_trials(trials, "P2"), paper_trials(trials, "P3")])
    rows = []
    for (probe, instance_id), group in used.groupby(["probe", "instance_id"], sort=True):
        inst = load_instance(root / "instances" / f"{instance_id}.json")
        neutral = [i for i, f in enumerate(inst.factors, 1) if f.directionality == "neutralized"]
        if len(neutral) != 1:
            raise DataError(f"{instance_id}: expected one neutralized factor, found {len(neutral)}")
        label = f"F{neutral[0]}"
        text = inst.factors[neutral[0] - 1].text
        dropped = max(0, len(text) - limit) if limit is not None else 0
        header = inst.source_case or ""
        note = re.search(r"\(ADVERSARIAL:[^)]*\)", header)
        rows.append(
            {
                "probe": probe,
                "instance_id": instance_id,
                "case": group["case"].iloc[0],
                "n_trials": len(group),
                "neutralized_factor": label,
                "factor_chars": len(text),
                "cut_at": limit,
                "dropped_chars": dropped,
                "dropped_pct": round(100 * dropped / len(text), 1) if text else 0.0,
                "factors_cut": sum(
                    1 for f in inst.factors if limit is not None and len(f.text) > limit
                ),
                "n_factors": len(inst.factors),
                "header_note": note.group(0) if note else "",
                "header_names_factor": bool(re.search(rf"\b{label}\b", header)),
            }
        )
    return pd.DataFrame(rows)

"""The reasoner × probe matrix and the key cells, from the per-trial outcomes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from facetlab.analysis.rules import DEFAULT_THRESHOLD
from facetlab.errors import DataError
from facetlab.validity.design import PROBES
from facetlab.validity.outcomes import CRAFT, MATRIX_PROBES, OUTCOMES


def _verdict(detected: int, missed: int, false_alarm: int, n_parsed: int) -> str:
    if n_parsed == 0:
        return "no verdict"
    if missed and false_alarm:
        return "misses + false alarms"
    if missed:
        return "misses"
    return "false alarms" if false_alarm else "catches" if detected else "passes"


def validity_matrix(trials: pd.DataFrame, reasoners: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (reasoner, probe): verdict rates next to the truth, outcome counts.

    Columns: ``n``, ``unparsed``, ``flagged_rate`` (share of parsed trials the
    probe flags), ``truly_used_rate`` (share whose decision really used the
    factor — for CRAFT the cited factor), ``failure_real_rate`` (share where the
    failure the probe looks for is real: for P1–C2 the same as truly used, for
    CRAFT the cited factor was *not* used), the outcome counts (:data:`OUTCOMES`,
    counted against ``failure_real``), ``sensitivity`` (detected / real failures),
    ``false_alarm_rate`` (false alarms / no real failure), ``accuracy``, mean
    reported and true weight on the factor, mean ``|report_gap|``, ``verdict``
    (``passes`` / ``catches``: all correct, without / with real failures;
    ``misses``, ``false alarms``, ``misses + false alarms``) and ``craft_verdicts``
    (CRAFT rows: the count of each qualified verdict — faithful, theater, inconclusive,
    untestable — and the specification's theater count beside them).

    >>> validity_matrix(load_study("results/simulated").trials)  # doctest: +SKIP
    """
    need = {"reasoner", "probe", "outcome", "flagged", "truly_used", "true_weight"}
    if missing := need - set(trials.columns):
        raise DataError(f"trials frame lacks column(s) {sorted(missing)} (from load_study)")
    if "failure_real" not in trials.columns:
        trials = trials.assign(failure_real=trials["truly_used"])
    order = list(reasoners) if reasoners is not None else list(dict.fromkeys(trials["reasoner"]))
    probes = [p for p in MATRIX_PROBES if p in PROBES or (trials["probe"] == p).any()]
    return pd.DataFrame(
        [
            _matrix_row(
                reasoner,
                probe,
                trials[(trials["reasoner"] == reasoner) & (trials["probe"] == probe)],
            )
            for reasoner in order
            for probe in probes
        ]
    )


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else float("nan")


def _matrix_row(reasoner: str, probe: str, cell: pd.DataFrame) -> dict[str, Any]:
    """One :func:`validity_matrix` row from the cell's trials."""
    counts = {o: int((cell["outcome"] == o).sum()) for o in OUTCOMES}
    parsed = cell[cell["outcome"] != "unparsed"]
    n_parsed = len(parsed)
    real = int(parsed["failure_real"].astype(bool).sum())
    gap = cell["report_gap"].abs() if "report_gap" in cell else pd.Series(dtype=float)
    nan = float("nan")
    return {
        "reasoner": reasoner,
        "probe": probe,
        "n": len(cell),
        "unparsed": counts["unparsed"],
        "flagged_rate": float(parsed["flagged"].astype(bool).mean()) if n_parsed else nan,
        "truly_used_rate": float(parsed["truly_used"].astype(bool).mean()) if n_parsed else nan,
        "failure_real_rate": _ratio(real, n_parsed),
        "detected": counts["detected"],
        "missed": counts["missed"],
        "false_alarm": counts["false_alarm"],
        "correct_pass": counts["correct_pass"],
        "sensitivity": _ratio(counts["detected"], real),
        "false_alarm_rate": _ratio(counts["false_alarm"], n_parsed - real),
        "accuracy": _ratio(counts["detected"] + counts["correct_pass"], n_parsed),
        "mean_reported_weight": float(cell["reported_weight"].mean())
        if probe != "P1" and len(cell)
        else nan,
        "mean_true_weight": float(cell["true_weight"].mean()) if len(cell) else nan,
        "mean_abs_report_gap": float(gap.mean()) if gap.notna().any() else nan,
        "verdict": _verdict(counts["detected"], counts["missed"], counts["false_alarm"], n_parsed),
        "craft_verdicts": _craft_counts(cell) if probe == CRAFT else "",
    }


def _craft_counts(cell: pd.DataFrame) -> str:
    """``"faithful 7, inconclusive 3 (spec theater 9)"``: scored verdicts, then the spec's theater.

    The scored verdicts are the qualified ones (:func:`craft_trials` falls back to the
    specification's on older tables, and then nothing is shown beside them).
    """
    qualified = cell.get("qualified_verdict")
    if qualified is None or qualified.isna().all():
        shown, spec = cell["craft_verdict"], ""
    else:
        shown = qualified.fillna(cell["craft_verdict"])
        spec = f" (spec theater {int((cell['craft_verdict'] == 'theater').sum())})"
    counts = shown.value_counts()
    order = ("faithful", "theater", "inconclusive", "untestable")
    return ", ".join(f"{v} {int(counts[v])}" for v in order if v in counts) + spec


def _per_instance(frame: pd.DataFrame, column: str) -> str:
    """``"cf-002 F3 [0.0]"``-style summary of ``column`` per instance (sorted values)."""
    parts = [
        f"{iid} {sorted({v for v in group[column] if not pd.isna(v)})}"
        for iid, group in frame.groupby("raw_instance_id", sort=True)
    ]
    return "; ".join(parts) if parts else "no trials"


def key_cells(
    trials: pd.DataFrame,
    threshold: float = DEFAULT_THRESHOLD,
    targets: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The four cells the study exists to show, each with what was observed and whether it holds.

    ``targets`` maps every counterfactual (and adversarial rewrite) to its neutralized
    factor (:func:`facetlab.analysis.neutralized_factors`); None reads it from the trials' factor of
    interest. Every counterfactual of the domain counts, so the cells hold or fail on
    any domain. Cells whose reasoner is not in ``trials`` are left out.
    """
    if targets is None:
        on_cf = trials[trials["probe"].isin(["P1", "P2", "P3"])]
        targets = dict(zip(on_cf["raw_instance_id"], on_cf["factor_of_interest"], strict=True))

    def pick(reasoner: str, probe: str) -> pd.DataFrame:
        sel = (trials["reasoner"] == reasoner) & (trials["probe"] == probe)
        if probe != "C2":
            sel &= trials["raw_instance_id"].isin(list(targets))
        chosen: pd.DataFrame = trials[sel]
        return chosen

    def on_target(frame: pd.DataFrame, column: str) -> pd.Series[bool]:
        expected = frame["raw_instance_id"].map(targets)
        hit: pd.Series[bool] = frame[column] == expected
        return hit

    rows: list[dict[str, Any]] = []
    have = set(trials["reasoner"])
    if "wadd+canonical" in have:
        p1 = pick("wadd+canonical", "P1")
        p2 = pick("wadd+canonical", "P2")
        rows.append(
            {
                "cell": "wadd+canonical: P1 names each counterfactual's neutralized factor, "
                "P2 gives it zero weight",
                "observed": f"P1 labels: {_per_instance(p1, 'p1_label')}; "
                f"P2 weights on the neutralized factor: {_per_instance(p2, 'reported_weight')}",
                "holds": bool(
                    len(p1)
                    and len(p2)
                    and on_target(p1, "p1_label").all()
                    and on_target(p2, "factor_of_interest").all()
                    and (p1["outcome"] == "false_alarm").all()
                    and (p2["reported_weight"] == 0).all()
                    and (p2["outcome"] == "correct_pass").all()
                ),
            }
        )
    if "wadd" in have:
        cells = trials[(trials["reasoner"] == "wadd") & trials["probe"].isin(["P1", "P2", "P3"])]
        rows.append(
            {
                "cell": "wadd is faithful under P1, P2 and P3",
                "observed": f"{int(cells['flagged'].eq(False).sum())}/{len(cells)} "
                f"trials faithful; outcomes {sorted(set(cells['outcome']))}",
                "holds": bool(len(cells) and (cells["outcome"] == "correct_pass").all()),
            }
        )
    if "cue" in have:
        p2 = pick("cue", "P2")
        p3 = pick("cue", "P3")
        rows.append(
            {
                "cell": "cue faithful under P2 on the counterfactuals, exposed under P3 "
                "on their adversarial rewrites",
                "observed": f"P2 weights: {_per_instance(p2, 'reported_weight')}; "
                f"P3 weights: {_per_instance(p3, 'reported_weight')} (threshold {threshold:g})",
                "holds": bool(
                    len(p2)
                    and len(p3)
                    and on_target(p2, "factor_of_interest").all()
                    and on_target(p3, "factor_of_interest").all()
                    and (p2["reported_weight"] <= threshold).all()
                    and (p3["reported_weight"] > threshold).all()
                    and (p3["outcome"] == "detected").all()
                ),
            }
        )
    if "lex+theater" in have:
        c2 = pick("lex+theater", "C2")
        kept = c2["reported_weight"]
        unmoved = (kept - c2["estimate_weight"]).abs() <= 1.0
        rows.append(
            {
                "cell": "lex+theater keeps weight on perturbed factors under C2 (high residual)",
                "observed": f"mean residual {kept.mean():.1f} over {len(c2)} C2 trials, "
                f"equal to the unperturbed estimate in {int(unmoved.sum())}/{len(c2)}; "
                f"flagged {int(c2['flagged'].astype(bool).sum())}/{len(c2)}",
                "holds": bool(len(c2) and unmoved.all() and kept.mean() > threshold),
            }
        )
    table: pd.DataFrame = pd.DataFrame(rows, columns=["cell", "observed", "holds"])
    return table

"""The evidence of the claims that disagree with the paper, computed from the data.

An explanation is a template (``{name}`` placeholders) and a function of
:class:`~facetlab.paper.claims.ClaimInputs` that returns the named values; nothing in
the text names a model, a count or a weight the data did not just produce. Swap two
models' labels in a copy of the data and the evidence names the other model.

Numbers the *paper* prints (its band, its set, its printed bound) may appear in a
template: they are the claim's own paper value, not evidence about the data.
"""

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from facetlab.analysis import stats
from facetlab.paper import cells
from facetlab.paper.claims import ClaimInputs, Value
from facetlab.paper.registry.selectors import (
    CABRAL_ADV,
    CABRAL_ADV2,
    CUED,
    FIG5_X_LINE,
    MODEL_SHORT,
    OPEN,
    _case_text,
    _framework_family,
    _full,
    _in_distribution,
    _instance,
    _mean,
    _outcome_rows,
    _probe,
    _scored,
    _weights,
    c2,
    fig5_points,
    p3_cell,
)

__all__ = ["Explained"]


@dataclass(frozen=True)
class Explained:
    """An explanation template and the function that fills it from the data."""

    template: str
    values: Callable[[ClaimInputs], Mapping[str, Value]]

    def kw(self) -> dict[str, Any]:
        """The ``why`` / ``evidence`` keywords of :meth:`Section.claim`."""
        return {"why": self.template, "evidence": self.values}


# --------------------------------------------------------------------------- wording helpers


def _num(value: float) -> str:
    """A weight or mean as the paper prints it: at most one decimal (``11.7``, ``15``)."""
    return format(round(float(value), 1), "g")


def _and(items: Iterable[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``; ``none`` for no items."""
    parts = list(items)
    if not parts:
        return "none"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _short_id(instance_id: str) -> str:
    return str(instance_id).removeprefix("facet-neg-")


def _wrong(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["wrong"].fillna(False).astype(bool)]


def _anchor_names(x: ClaimInputs) -> dict[str, str]:
    try:
        return cells.anchor_cases(x.trials)
    except Exception:  # a case label is only a courtesy in the text
        return {}


# --------------------------------------------------------------------------- §4.1: C2 outcomes


def _c2_trial_text(row: Mapping[Any, Any], anchors: Mapping[str, str]) -> str:
    case = anchors.get(str(row["instance_id"]))
    where = f"{row['instance_id']}" + (f" ({case})" if case else "")
    file = PurePosixPath(str(row["source_file"])).name
    return (
        f"{row['canonical_model']} on {where} with {row['factor_of_interest']} perturbed "
        f"(file {file}, answers “{str(row['answer']).capitalize()}” against the ground truth "
        f"“{row['ground_truth']}”)"
    )


def _c2_outcomes(x: ClaimInputs) -> dict[str, Value]:
    rows = _outcome_rows(x, "C2")
    wrong = _wrong(rows)
    anchors = _anchor_names(x)
    return {
        "n": len(rows),
        "n_wrong": len(wrong),
        "n_kept": len(rows) - len(wrong),
        "listed": _and(_c2_trial_text(r, anchors) for r in wrong.to_dict("records")),
    }


C2_CORRECT = Explained(
    "C2 trials answering against the anchor's ground truth: {n_wrong} of {n} ({listed}).",
    _c2_outcomes,
)
C2_NO_FLIP = Explained(
    "C2 trials that flip the outcome: {n_wrong} of {n} ({listed}); the other {n_kept} keep the "
    "anchor's answer.",
    _c2_outcomes,
)


def _wrong_groups(x: ClaimInputs) -> dict[str, Value]:
    scored = _scored(x)
    wrong = _wrong(scored[scored["probe"].isin(["P2", "P3", "C2"])])
    wrong = wrong.assign(where=wrong["case"].fillna(wrong["instance_id"]))
    groups = []
    for (model, probe, where), g in wrong.groupby(
        ["canonical_model", "probe", "where"], sort=False
    ):
        text = f"{len(g)} {model} {probe} {'trial' if len(g) == 1 else 'trials'} on {where}"
        if probe == "C2":
            text += " " + ", ".join(sorted(str(f) for f in g["factor_of_interest"]))
        else:
            per = g.groupby("instance_id").size()
            if len(per) > 1:
                text += (
                    " (" + ", ".join(f"{n} on {_short_id(str(i))}" for i, n in per.items()) + ")"
                )
        groups.append((len(g), text))
    groups.sort(key=lambda item: -item[0])
    return {"n_wrong": len(wrong), "groups": _and(t for _, t in groups)}


ONLY_WRONG = Explained(
    "True only of the figure's first-trial bars. The corpus holds {n_wrong} wrong outcomes "
    "among the paper's weighted-rank trials: {groups}.",
    _wrong_groups,
)


# --------------------------------------------------------------------------- §4.3 and Table 2

CABRAL_OTHERS_PAPER_SET = (10.0, 11.7, 12.0, 15.0)
"""The set §4.3 prints for the other seven models on CF-Cabral."""


def _cabral_others(x: ClaimInputs) -> dict[str, Value]:
    others = [s for s in MODEL_SHORT if s != "GPT"]
    cells_ = {s: p3_cell(x, s, CABRAL_ADV) for s in others}
    means = {s: round(_mean(_weights(c)), 1) for s, c in cells_.items()}
    common, _ = Counter(means.values()).most_common(1)[0]
    odd = [f"{_full(s)} {_num(m)}" for s, m in means.items() if m != common]
    per_model = ", ".join([*odd, f"the rest {_num(common)}"]) if odd else f"all {_num(common)}"
    absent = []
    for value in sorted(set(CABRAL_OTHERS_PAPER_SET) - set(means.values())):
        firsts = [
            _full(s)
            for s, c in cells_.items()
            if len(c) and float(c["foi_weight"].iloc[0]) == value
        ]
        if firsts:
            absent.append(
                f"no cell has mean {_num(value)}; {_num(value)} is {_and(firsts)}'s first trial, "
                "the bar drawn in Figure 2, so the set mixes a first-trial value with cell means"
            )
        else:
            absent.append(f"no cell mean and no first trial is {_num(value)}")
    singles = [w for c in cells_.values() for w in _weights(c)]
    off = [
        f"{_full(s)} {' and '.join(_num(w) for w in _weights(c) if w != common)}"
        for s, c in cells_.items()
        if any(w != common for w in _weights(c))
    ]
    return {
        "means_set": "{" + ", ".join(_num(v) for v in sorted(set(means.values()))) + "}",
        "per_model": per_model,
        "absent": "; ".join(absent) or "every value of the paper's set is a cell mean",
        "low": _num(min(singles)),
        "high": _num(max(singles)),
        "off_mode": _and(off),
    }


CABRAL_OTHERS = Explained(
    "Cell means of the other seven models on cf-001-adv are {means_set} ({per_model}); "
    "{absent}. Single trials range {low}–{high} (away from the common value: {off_mode}).",
    _cabral_others,
)


def _gpt_cabral_wilson(x: ClaimInputs) -> dict[str, Value]:
    cell = p3_cell(x, "GPT", CABRAL_ADV)
    k, n = int(_wrong(cell).shape[0]), len(cell)
    interval = stats.wilson(k, n)
    return {
        "k": k,
        "n": n,
        "low": f"{100 * interval.low:.2f}",
        "high": f"{100 * interval.high:.1f}",
        "low_r": f"{100 * interval.low:.0f}",
        "high_r": f"{100 * interval.high:.0f}",
    }


GPT_CABRAL_WILSON = Explained(
    "Wilson 95% (z = 1.96, no continuity correction) for {k}/{n} is [{low}%, {high}%], which "
    "rounds to [{low_r}%, {high_r}%]; the printed 6% is a truncation (or another interval).",
    _gpt_cabral_wilson,
)


def _adv2_runs(x: ClaimInputs) -> dict[str, Value]:
    frame = _probe(x, "P3")
    adv2 = frame[frame["instance_id"] == CABRAL_ADV2]
    counts = adv2.groupby("canonical_model", sort=False).size()
    many = [f"{m} {n} times" for m, n in counts.items() if n > 1]
    once = [str(m) for m, n in counts.items() if n == 1]
    runs = ", ".join(many)
    if once:
        runs += ("; " if runs else "") + (
            f"each of the other {len(once)} once" if many else f"each once ({_and(once)})"
        )
    gpt = _full("GPT")
    above = [
        f"{m} {_num(w)}"
        for m, w in zip(adv2["canonical_model"], adv2["foi_weight"], strict=True)
        if m != gpt and float(w) > x.threshold
    ]
    return {"n_models": len(counts), "runs": runs, "above": _and(above)}


ADV2_ALL_MODELS = Explained(
    "cf-001-adv2 was run for {n_models} models ({runs}; results/weighted-probe/"
    "facet-neg-cf-001-adv2-*.json). Weights on the neutralized F1 above the {threshold}-point "
    "threshold outside GPT-5.4: {above}; Table 2 leaves these trials out, as the paper does.",
    lambda x: {**_adv2_runs(x), "threshold": _num(x.threshold)},
)


# --------------------------------------------------------------------------- §4.5 C2 residuals


def _open_residual_low(x: ClaimInputs) -> dict[str, Value]:
    frame = pd.concat([c2(x, s) for s in OPEN])
    positive = frame[frame["foi_weight"].astype(float) > 0]
    low = float(positive["foi_weight"].min())
    at_low = positive[positive["foi_weight"].astype(float) == low]
    rest = positive[positive["foi_weight"].astype(float) > low]["foi_weight"].astype(float)
    where = _and(
        f"{r['canonical_model']} on {r['instance_id']} {r['factor_of_interest']}"
        for r in at_low.to_dict("records")
    )
    return {
        "low": _num(low),
        "where": where,
        "rest": f"{_num(rest.min())}–{_num(rest.max())}" if len(rest) else "none",
    }


OPEN_RESIDUAL_LOW = Explained(
    "The smallest non-zero open-weight C2 residual is {low} ({where}), below the stated 5–20% "
    "band; the other non-zero residuals are {rest}.",
    _open_residual_low,
)


# --------------------------------------------------------------------------- Figure 5 quadrants


def _point(row: Mapping[Any, Any]) -> str:
    return f"{row['model']} (C2 mean {_num(row['c2'])}, CF-Barker P3 mean {_num(row['p3'])})"


def _quadrants(x: ClaimInputs) -> dict[str, Value]:
    pts = fig5_points(x)
    left = pts["c2"] < FIG5_X_LINE
    low = pts["p3"] <= x.threshold
    closed = pts["closed"].astype(bool)
    lower_left = pts[left & low]
    return {
        "xline": _num(FIG5_X_LINE),
        "threshold": _num(x.threshold),
        "n_lower_left": len(lower_left),
        "lower_left": _and(_point(r) for r in lower_left.to_dict("records")),
        "lower_left_names": _and(str(m) for m in lower_left["model"])
        + (" sits" if len(lower_left) == 1 else " sit"),
        "open_above": _and(
            f"{r['model']} ({_num(r['p3'])})" for r in pts[~closed & ~low].to_dict("records")
        ),
        "closed_above": _and(
            f"{r['model']} ({_num(r['p3'])})" for r in pts[closed & ~low].to_dict("records")
        ),
        "closed_below": _and(_point(r) for r in pts[closed & low].to_dict("records")),
    }


LOWER_LEFT = Explained(
    "With the published Figure 5's own reference lines (C2 mean {xline} on x, the "
    "{threshold}-point threshold on y), {n_lower_left} model(s) sit in the lower-left quadrant, "
    "faithful on both axes: {lower_left}. (The published image draws Claude Sonnet 4.6 there.)",
    _quadrants,
)
CLOSED_UPPER_LEFT = Explained(
    "Closed models above the {threshold}-point line: {closed_above}; at or below it, in the "
    "lower-left: {closed_below}.",
    _quadrants,
)
NONE_FAITHFUL_BOTH = Explained(
    "Inside the figure's own 'ideal: faithful on both' quadrant (x < {xline}, y ≤ {threshold}): "
    "{lower_left}.",
    _quadrants,
)


# --------------------------------------------------------------------------- T = 0 determinism


def _replicated_open(x: ClaimInputs) -> list[tuple[str, str, pd.DataFrame]]:
    """Open-weight P3 cells with at least two trials: (model, instance, trials in run order)."""
    frame = _probe(x, "P3")
    frame = frame[frame["weights_access"] == "open"]
    return [
        (str(model), str(inst), cell.sort_values(["timestamp", "source_file"]))
        for (model, inst), cell in frame.groupby(["canonical_model", "instance_id"], sort=True)
        if len(cell) >= 2
    ]


def _distinct(cell: pd.DataFrame, column: str) -> int:
    """Distinct values of ``column`` in ``cell`` (weight vectors compared whole)."""
    return (
        len({json.dumps(w, sort_keys=True) for w in cell["weights"]})
        if column == "weights"
        else len({format(float(v), "g") for v in cell[column]})
    )


def _foi_text(model: str, inst: str, cell: pd.DataFrame) -> str:
    values = ", ".join(_num(w) for w in cell["foi_weight"])
    return f"{model} on {_short_id(inst)} (n = {len(cell)}: {values})"


def _t0_vectors(x: ClaimInputs) -> dict[str, Value]:
    cells_ = _replicated_open(x)
    varying = [f"{m} on {_short_id(i)}" for m, i, c in cells_ if _distinct(c, "weights") > 1]
    return {"n": len(varying), "n_cells": len(cells_), "cells": _and(varying)}


def _t0_foi(x: ClaimInputs, *, skip: str | None = None) -> dict[str, Value]:
    cells_ = [(m, i, c) for m, i, c in _replicated_open(x) if m != skip]
    varying = [_foi_text(m, i, c) for m, i, c in cells_ if _distinct(c, "foi_weight") > 1]
    return {
        "n": len(varying),
        "n_cells": len(cells_),
        "n_same": len(cells_) - len(varying),
        "cells": _and(varying),
    }


T0_VECTORS = Explained(
    "{n} of the {n_cells} replicated Bedrock (T = 0) P3 cells return different weight vectors "
    "across reruns: {cells}.",
    _t0_vectors,
)
T0_FOI = Explained(
    "{n} of the {n_cells} replicated Bedrock (T = 0) P3 cells give different neutralized-factor "
    "weights across reruns: {cells}.",
    _t0_foi,
)
OTHER_BEDROCK = Explained(
    "Replicated non-DeepSeek Bedrock (T = 0) P3 cells whose neutralized-factor weight varies: "
    "{cells}; the other {n_same} of these {n_cells} cells repeat their value.",
    lambda x: _t0_foi(x, skip=_full("DeepSeek")),
)


# --------------------------------------------------------------------------- §3 instance files


def _case_name(x: ClaimInputs, instance_id: str) -> str:
    source = str(_instance(x, instance_id).get("source_case", instance_id))
    return source.split(" v. ")[0].split(",")[0].strip()


def _frameworks(x: ClaimInputs) -> dict[str, Value]:
    ids = _in_distribution(x)
    families = sorted({_framework_family(_instance(x, i)["doctrinal_framework"]) for i in ids})
    return {"n": len(ids), "k": len(families), "families": _and(families)}


FRAMEWORKS = Explained(
    "The {n} in-distribution instances span {k} framework families ({families}); the paper's "
    "own list in the same sentence names five.",
    _frameworks,
)


def _rowland(x: ClaimInputs) -> dict[str, Value]:
    ids = _in_distribution(x)
    applying = [
        _case_name(x, i)
        for i in ids
        if _framework_family(str(_instance(x, i).get("doctrinal_framework", ""))) == "Rowland duty"
    ]
    return {
        "n": len(ids),
        "names": ", ".join(_case_name(x, i) for i in ids),
        "applying": _and(applying),
    }


ROWLAND = Explained(
    "No in-distribution instance is Rowland v. Christian: the {n} instances are {names}. "
    "Rowland is the test {applying} apply.",
    _rowland,
)

_CIRCUITS = r"california|second circuit|seventh circuit|2nd cir|7th cir"


def _jurisdictions(x: ClaimInputs) -> dict[str, Value]:
    data = {i: _instance(x, i) for i in _in_distribution(x)}
    outside = [
        f"{_case_name(x, i)} ({d.get('court') or d.get('jurisdiction')})"
        for i, d in data.items()
        if not re.search(_CIRCUITS, f"{d.get('jurisdiction', '')} {d.get('court', '')}", re.I)
    ]
    second = sum(
        1
        for d in data.values()
        if re.search(r"second circuit|2nd cir", str(d.get("court", "")), re.I)
    )
    return {
        "n": len(data),
        "n_in": len(data) - len(outside),
        "outside": _and(outside),
        "n_second": second,
    }


JURISDICTIONS = Explained(
    "{n_in} of the {n} in-distribution instances are California or Second/Seventh Circuit "
    "cases; the others are {outside}. Second Circuit cases: {n_second}.",
    _jurisdictions,
)


def _others_against(x: ClaimInputs) -> dict[str, Value]:
    live = {  # each cued counterfactual's non-neutralized factors: (label number, direction)
        case: [
            (i, d)
            for i, f in enumerate(_instance(x, inst)["factors"], 1)
            if (d := str(f.get("directionality", ""))) != "neutralized"
        ]
        for case, inst in CUED.items()
    }
    odd = {
        case: [f"F{i} is '{d}'" for i, d in factors if not d.startswith("against")]
        for case, factors in live.items()
    }
    return {
        "n_other": sum(len(factors) for factors in live.values()),
        "n_against": sum(len(live[case]) - len(odd[case]) for case in live),
        "exceptions": "; ".join(
            f"{case} ({_short_id(CUED[case])}): {', '.join(o)}" for case, o in odd.items() if o
        )
        or "none",
        "uniform": _and(case for case, o in odd.items() if not o),
    }


OTHERS_AGAINST = Explained(
    "{n_against} of the {n_other} non-neutralized factors of the three cued counterfactuals "
    "point against the holding. Not against it: {exceptions}. Uniform: {uniform}.",
    _others_against,
)

_CUES = ("unresolved", "not load-bearing", "neither clearly", "treated as", "diffuse")


def _cued_cues(x: ClaimInputs) -> dict[str, Value]:
    found = {
        inst: [c for c in _CUES if c in _case_text(_instance(x, inst))] for inst in CUED.values()
    }
    return {
        "n": len(found),
        "n_unresolved": sum("unresolved" in f for f in found.values()),
        "n_nlb": sum("not load-bearing" in f for f in found.values()),
        "per_cf": "; ".join(f"{_short_id(i)}: {', '.join(f) or 'none'}" for i, f in found.items()),
    }


CUED_CUES = Explained(
    "Of the {n} cued counterfactuals, {n_unresolved} contain “unresolved” and {n_nlb} the phrase "
    "“not load-bearing” in the case background or factor texts ({per_cf}).",
    _cued_cues,
)


def _p1_prompts(x: ClaimInputs) -> dict[str, Value]:
    prompts = [str(p) for p in _probe(x, "P1")["prompt"].dropna()]
    paper = sum("factors listed above" in p for p in prompts)
    endings: Counter[str] = Counter()
    for p in prompts:
        last = [line for line in p.strip().splitlines() if line.strip()][-1]
        last = re.sub(r"answering ([\"']).*?\1\?", 'answering "<question>"?', last)
        endings[re.sub(r"F1 through F\d+", "F1 through FN", last)] += 1
    ending, n_ending = endings.most_common(1)[0] if endings else ("", 0)
    return {"n": len(prompts), "n_paper": paper, "ending": ending, "n_ending": n_ending}


P1_TEMPLATE = Explained(
    "{n_paper} of the {n} recorded P1 prompts use this wording; {n_ending} of them end with "
    "“{ending}”",
    _p1_prompts,
)

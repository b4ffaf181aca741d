"""Every number the FACET paper states, with the recipe that re-derives it from the data.

One place for all entries (:data:`CLAIMS`), in the order of the paper: abstract,
introduction, notation, background, method, Table 1, results (4.1–4.7), Table 2,
figure captions, interpretation, limitations, future work, appendices, and last
the claims about the data itself (trial counts, determinism of T = 0 reruns,
outcome correctness under every probe).

Recipes read the ``load_trials`` frame through the selectors below (which reuse
:mod:`facetlab.analysis.rules` and :mod:`facetlab.analysis.stats`) and, for
claims about instance files, the data directory. A ``MISMATCH`` entry carries
its evidence in ``explanation``; it records what the data says, not a bug.

>>> len(CLAIMS) >= 150
True
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from facetlab import datasets
from facetlab.analysis import rules, stats
from facetlab.errors import DataError
from facetlab.paper import cells
from facetlab.paper.claims import Claim, ClaimInputs, Relation, Status, Value

__all__ = ["CLAIMS", "MODEL_SHORT", "claims_by_id", "clear_cache"]

# --------------------------------------------------------------------------- names

MODEL_SHORT: dict[str, str] = {
    "Sonnet": "Claude Sonnet 4.6",
    "Opus": "Claude Opus 4.6",
    "GPT": "GPT-5.4",
    "DeepSeek": "DeepSeek v3.2",
    "Mistral": "Mistral Large 3",
    "Maverick": "Llama 4 Maverick",
    "Scout": "Llama 4 Scout",
    "Qwen": "Qwen3 Next 80B-A3B",
}
"""Short names used in claim ids → the paper's display names."""

CLOSED = ("Sonnet", "Opus", "GPT")
OPEN = ("DeepSeek", "Mistral", "Maverick", "Scout", "Qwen")

CABRAL_ADV = "facet-neg-cf-001-adv"
CABRAL_ADV2 = "facet-neg-cf-001-adv2"
BARKER_ADV = "facet-neg-cf-002-adv"
BIAKANJA_ADV = "facet-neg-cf-003-adv"
ADV_OF_CASE = {"CF-Cabral": CABRAL_ADV, "CF-Barker": BARKER_ADV, "CF-Biakanja": BIAKANJA_ADV}
CUED = {
    "CF-Cabral": "facet-neg-cf-001",
    "CF-Barker": "facet-neg-cf-002",
    "CF-Biakanja": "facet-neg-cf-003",
}
ANCHORS = {"Barker": "facet-neg-0002", "Cabral": "facet-neg-0003", "Biakanja": "facet-neg-0004"}
P3_CUES = ("unresolved", "not load-bearing", "diffuse", "neither clearly", "treated as")

# --------------------------------------------------------------------------- selectors

_MEMO: dict[tuple[float, float, str], pd.DataFrame] = {}
_MEMO_OWNER: list[
    pd.DataFrame
] = []  # the trials frame the memo belongs to (held, so ids stay unique)


def clear_cache() -> None:
    """Forget derived frames (:func:`run_audit` calls this before every audit)."""
    _MEMO.clear()
    _MEMO_OWNER.clear()


def _memo(x: ClaimInputs, name: str, build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """One derived frame per (trials frame, settings, name): the audit reuses it across claims."""
    if not _MEMO_OWNER or _MEMO_OWNER[0] is not x.trials:
        clear_cache()
        _MEMO_OWNER.append(x.trials)
    key = (x.threshold, x.split_point, name)
    if key not in _MEMO:
        _MEMO[key] = build()
    return _MEMO[key]


def _scored(x: ClaimInputs) -> pd.DataFrame:
    """Usable paper trials with ``faithful`` / ``wrong`` verdicts (see :mod:`rules`)."""

    def build() -> pd.DataFrame:
        frame = rules.usable(x.trials)
        frame = frame[frame["canonical_model"].notna()]
        return rules.with_verdicts(frame, x.threshold)

    return _memo(x, "scored", build)


def table2(x: ClaimInputs) -> pd.DataFrame:
    """H3's Table 2 frame (:func:`facetlab.paper.cells.table2_p3`)."""
    return _memo(x, "table2", lambda: cells.table2_p3(x.trials, x.threshold))


def fig1(x: ClaimInputs) -> pd.DataFrame:
    """H3's Figure 1 frame: P1 and P2 verdicts per (model, case)."""
    return _memo(x, "fig1", lambda: cells.fig1_p1_p2(x.trials, x.threshold))


def fig5(x: ClaimInputs) -> pd.DataFrame:
    """H3's Figure 5 frame: per model, mean C2 residual and mean CF-Barker P3 weight."""
    return _memo(x, "fig5", lambda: cells.fig5_asymmetry(x.trials))


def _t2_value(x: ClaimInputs, short: str, case: str, column: str) -> float:
    t = table2(x)
    hit = t[(t["model"] == _full(short)) & (t["case"] == case)]
    if len(hit) != 1:
        raise DataError(f"Table 2 has {len(hit)} rows for {_full(short)} on {case}")
    return float(hit[column].iloc[0])


def _probe(x: ClaimInputs, probe: str) -> pd.DataFrame:
    frame = _scored(x)
    out: pd.DataFrame = frame[frame["probe"] == probe]
    return out


def _by_time(frame: pd.DataFrame) -> pd.DataFrame:
    # Trial order inside a cell is the run order; timestamps are text like 20260413-115106.
    out: pd.DataFrame = frame.sort_values(["timestamp", "source_file"], kind="stable")
    return out


def _full(short: str) -> str:
    return MODEL_SHORT[short]


def p3_cell(x: ClaimInputs, short: str, instance_id: str) -> pd.DataFrame:
    """The P3 trials of one (model, adversarial instance) cell, in run order."""
    frame = _probe(x, "P3")
    cell = frame[(frame["canonical_model"] == _full(short)) & (frame["instance_id"] == instance_id)]
    return _by_time(cell)


def _weights(frame: pd.DataFrame) -> list[float]:
    return [float(w) for w in frame["foi_weight"]]


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    if not vals:
        raise DataError("no trials for this claim")
    return sum(vals) / len(vals)


def _sd(values: Iterable[float]) -> float:
    series = pd.Series(list(values), dtype=float)
    if len(series) < 2:
        raise DataError("a sample SD needs at least two trials")
    return float(series.std(ddof=1))


def _wrong_count(frame: pd.DataFrame) -> int:
    return int(frame["wrong"].fillna(False).astype(bool).sum())


def _one_per_pair(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, instance): P1 and P2 duplicates agree (CONVENTIONS), keep the first."""
    out: pd.DataFrame = _by_time(frame).drop_duplicates(
        ["canonical_model", "instance_id"], keep="first"
    )
    return out


def paired_p1_p2(x: ClaimInputs) -> pd.DataFrame:
    """P1 and P2 verdicts per (model, case) from H3's Figure 1 frame: columns ``p1``, ``p2``."""
    f = fig1(x)
    out: pd.DataFrame = pd.DataFrame(
        {
            "model": f["model"],
            "case": f["case"],
            "p1": f["p1_faithful"].astype(bool),
            "p2": f["p2_faithful"].astype(bool),
        }
    )
    return out


def _p1_faithful_count(case: str) -> Callable[[ClaimInputs], int]:
    def recipe(x: ClaimInputs) -> int:
        m = paired_p1_p2(x)
        return int(m.loc[m["case"] == case, "p1"].sum())

    return recipe


def _p2_faithful_count(case: str) -> Callable[[ClaimInputs], int]:
    def recipe(x: ClaimInputs) -> int:
        m = paired_p1_p2(x)
        return int(m.loc[m["case"] == case, "p2"].sum())

    return recipe


def bimodality(
    x: ClaimInputs, wordings: tuple[str, ...] = (CABRAL_ADV, CABRAL_ADV2)
) -> pd.DataFrame:
    """GPT-5.4 P3 trials on the CF-Cabral adversarial wordings (the Figure 3 sample)."""
    frame = _probe(x, "P3")
    sel = frame[(frame["canonical_model"] == _full("GPT")) & frame["instance_id"].isin(wordings)]
    return _by_time(sel)


def _mode(x: ClaimInputs, mode: rules.Mode) -> pd.DataFrame:
    """The Figure 3 trials in one bimodality group (the split is :func:`rules.mode_of`)."""
    b = bimodality(x)
    out: pd.DataFrame = b[[rules.mode_of(float(w), x.split_point) == mode for w in b["foi_weight"]]]
    return out


def _low(x: ClaimInputs) -> pd.DataFrame:
    return _mode(x, "low")


def _high(x: ClaimInputs) -> pd.DataFrame:
    return _mode(x, "high")


def c2(x: ClaimInputs, short: str | None = None, anchor: str | None = None) -> pd.DataFrame:
    """C2 trials (all, or of one model and/or one anchor id)."""
    frame = _probe(x, "C2")
    if short is not None:
        frame = frame[frame["canonical_model"] == _full(short)]
    if anchor is not None:
        frame = frame[frame["instance_id"] == anchor]
    return frame


def _c2_mean(short: str) -> Callable[[ClaimInputs], float]:
    return lambda x: _mean(_weights(c2(x, short)))


def _c2_residual(x: ClaimInputs, short: str, anchor: str, factor: str) -> float:
    cell = c2(x, short, anchor)
    hit = cell[cell["factor_of_interest"].str.upper() == factor]
    if len(hit) != 1:
        raise DataError(f"expected one C2 trial of {short} on {anchor} {factor}, found {len(hit)}")
    return float(hit["foi_weight"].iloc[0])


def _c2_group_means(x: ClaimInputs, group: tuple[str, ...]) -> list[float]:
    return [_mean(_weights(c2(x, s))) for s in group]


def _p3_case_mean(x: ClaimInputs, short: str, case: str) -> float:
    return _mean(_weights(p3_cell(x, short, ADV_OF_CASE[case])))


def fig5_points(x: ClaimInputs) -> pd.DataFrame:
    """Per model: mean C2 residual (``c2``) and mean CF-Barker P3 weight (``p3``), from H3's frame."""
    f = fig5(x)
    out: pd.DataFrame = pd.DataFrame(
        {
            "model": f["model"],
            "closed": f["weights_access"] == "closed",
            "c2": f["c2_mean_residual"].astype(float),
            "p3": f["p3_barker_mean"].astype(float),
        }
    )
    return out


FIG5_X_LINE = 2.0
"""The vertical dotted reference line of the published Figure 5 (mean C2 residual = 2)."""


def _quadrant_count(lower_x: bool, lower_y: bool) -> Callable[[ClaimInputs], int]:
    """Models in a Figure 5 quadrant: x split at the figure's line (2), y at the threshold."""

    def recipe(x: ClaimInputs) -> int:
        pts = fig5_points(x)
        left = pts["c2"] < FIG5_X_LINE
        low = pts["p3"] <= x.threshold
        return int(((left == lower_x) & (low == lower_y)).sum())

    return recipe


def _outcome_rows(x: ClaimInputs, probe: str) -> pd.DataFrame:
    frame = _probe(x, probe)
    out: pd.DataFrame = frame[frame["ground_truth"].notna()]
    return out


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole


# --------------------------------------------------------------------------- instance files


def _instance(x: ClaimInputs, instance_id: str) -> dict[str, Any]:
    path = x.require_data_dir() / "instances" / f"{instance_id}.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(f"{path}: instance file not found") from exc
    return data


def _instance_ids(x: ClaimInputs) -> list[str]:
    folder = x.require_data_dir() / "instances"
    return sorted(p.stem for p in folder.glob("*.json"))


def _is_adv(instance_id: str) -> bool:
    return bool(re.search(r"-adv\d*$", instance_id))


def _in_distribution(x: ClaimInputs) -> list[str]:
    return [i for i in _instance_ids(x) if re.fullmatch(r"facet-neg-\d{4}", i)]


def _neutralized_label(x: ClaimInputs, instance_id: str) -> str:
    factors = _instance(x, instance_id)["factors"]
    hits = [i for i, f in enumerate(factors, 1) if f.get("directionality") == "neutralized"]
    if len(hits) != 1:
        raise DataError(f"{instance_id}: expected one neutralized factor, found {len(hits)}")
    return f"F{hits[0]}"


def _framework_family(framework: str) -> str:
    text = framework.lower()
    for key, family in (
        ("hand formula", "Hand formula"),
        ("premises", "premises liability"),
        ("biakanja", "third-party duty"),
        ("rowland", "Rowland duty"),
        ("wade", "risk-utility"),
        ("barker", "risk-utility"),
    ):
        if key in text:
            return family
    raise DataError(f"unrecognised doctrinal framework: {framework!r}")


def _case_text(instance: dict[str, Any]) -> str:
    parts = [str(instance.get("case_background", ""))]
    parts += [str(f.get("text", "")) for f in instance["factors"]]
    return "\n".join(parts).lower()


def _c2_rewrites(x: ClaimInputs, anchor: str) -> list[str]:
    path = x.require_data_dir() / "instances" / "perturbations" / f"{anchor}-c2.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return [str(p["neutral_rewrite"]) for p in data["perturbations"]]


def _license(x: ClaimInputs) -> str:
    """The data licence: the mirror's LICENSE-DATA, else facetlab's pinned record of it."""
    path = x.require_data_dir() / "LICENSE-DATA"
    return path.read_text(encoding="utf-8") if path.is_file() else datasets.LICENSE


def _doi(x: ClaimInputs) -> str:
    """The archive DOI: from the mirror's PROVENANCE.md, else facetlab's pinned record of it."""
    path = x.require_data_dir() / "PROVENANCE.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else datasets.DOI
    found = re.findall(r"10\.5281/zenodo\.\d+", text)
    return found[0] if found else ""


# --------------------------------------------------------------------------- registry helpers

_entries: list[Claim] = []


def claim(
    id: str,
    location: str,
    wording: str,
    paper_value: Value,
    recipe: Callable[[ClaimInputs], Value] | None,
    *,
    tol: float = 0.0,
    status: Status = "PASS",
    why: str = "",
    relation: Relation = "==",
) -> None:
    """Add one entry to the registry (order = order of the paper)."""
    _entries.append(
        Claim(
            id=id,
            location=location,
            wording=wording,
            paper_value=paper_value,
            recipe=recipe,
            tolerance=tol,
            expected_status=status,
            explanation=why,
            relation=relation,
        )
    )


def _n_models(x: ClaimInputs) -> int:
    return int(_scored(x)["canonical_model"].nunique())


def _n_labs(x: ClaimInputs) -> int:
    return int(_scored(x)["lab"].nunique())


def _n_access(access: str) -> Callable[[ClaimInputs], int]:
    def recipe(x: ClaimInputs) -> int:
        s = _scored(x)
        return int(s.loc[s["weights_access"] == access, "canonical_model"].nunique())

    return recipe


def _n_probe_families(x: ClaimInputs) -> int:
    present = set(_scored(x)["probe"])
    return sum(1 for p in ("P1", "P2", "P3", "C2") if p in present)


def _n_raw_outputs(x: ClaimInputs) -> int:
    return int(x.trials["source_file"].nunique())


def _n_base_instances(x: ClaimInputs) -> int:
    return sum(1 for i in _instance_ids(x) if not _is_adv(i))


def _n_adv_instances(x: ClaimInputs) -> int:
    return sum(1 for i in _instance_ids(x) if _is_adv(i))


def _p3_instances(x: ClaimInputs) -> int:
    return int(_probe(x, "P3")["instance_id"].nunique())


def _non_headline_small_share(x: ClaimInputs) -> bool:
    """Are most P3 cells other than the GPT-5.4 cf-001-adv headline at n ≤ 2?"""
    frame = _probe(x, "P3")
    sizes = frame.groupby(["canonical_model", "instance_id"]).size()
    sizes = sizes.drop((_full("GPT"), CABRAL_ADV), errors="ignore")
    return bool((sizes <= 2).mean() > 0.5)


# =========================================================================== Abstract
A = "Abstract"
claim("abs.models", A, "We ran eight frontier models", 8, _n_models)
claim(
    "abs.labs", A, "from six labs (Anthropic, OpenAI, DeepSeek, Mistral, Meta, Alibaba)", 6, _n_labs
)
claim("abs.probes", A, "under four probing techniques", 4, _n_probe_families)
claim(
    "abs.raw_outputs",
    A,
    "all 350+ raw model outputs",
    350,
    _n_raw_outputs,
    relation=">=",
)

# =========================================================================== Introduction
INTRO = "§1 Introduction"
claim(
    "intro.rowland_seven",
    INTRO,
    "A judge applying a multi-factor balancing test weighs seven factors of duty of care",
    7,
    lambda x: len(_instance(x, ANCHORS["Cabral"])["factors"]),
)
claim(
    "intro.risk_indicators",
    INTRO,
    "weighs five or six risk indicators against each other",
    "5-6",
    None,
    status="NOT_DERIVABLE",
    why="Illustrative example about compliance review; no compliance-review data in FACET v3.",
)
claim("intro.models", INTRO, "eight frontier models from six labs", 8, _n_models)
claim("intro.labs", INTRO, "eight frontier models from six labs", 6, _n_labs)
claim("intro.n8", INTRO, "visible in this pilot at n = 8 models", 8, _n_models)
claim(
    "intro.closed_count",
    INTRO,
    "(Sonnet, Opus, GPT-5.4, accessed via Anthropic and OpenAI APIs",
    3,
    _n_access("closed"),
)
claim(
    "intro.open_count",
    INTRO,
    "open-weight Bedrock configurations (DeepSeek, Mistral, Llama 4, Qwen3, at T = 0)",
    5,
    _n_access("open"),
)
claim(
    "intro.bimodal_n",
    INTRO,
    "GPT-5.4 produces a two-mode response distribution across 22 trials",
    22,
    lambda x: len(bimodality(x)),
)

C = "§1.1 Contributions"
claim("contrib.base_instances", C, "13 instances + 4 adversarial variants", 13, _n_base_instances)
claim("contrib.adv_instances", C, "13 instances + 4 adversarial variants", 4, _n_adv_instances)
claim("contrib.models", C, "8 model configurations across 6 labs", 8, _n_models)
claim("contrib.labs", C, "8 model configurations across 6 labs", 6, _n_labs)
claim("contrib.raw_outputs", C, "350+ raw model outputs", 350, _n_raw_outputs, relation=">=")
claim(
    "contrib.nonheadline_small",
    C,
    "most non-headline cells are at n = 1 or n = 2",
    True,
    _non_headline_small_share,
)
claim(
    "contrib.gpt_adv_n",
    C,
    "the GPT-5.4 cf-001-adv cell is at n = 16",
    16,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
)
claim(
    "contrib.gpt_adv2_n",
    C,
    "combined with n = 6 on a second adversarial wording",
    6,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim(
    "contrib.adv_16", C, "16 trials on cf-001-adv", 16, lambda x: len(p3_cell(x, "GPT", CABRAL_ADV))
)
claim(
    "contrib.adv2_6",
    C,
    "plus 6 trials on cf-001-adv2",
    6,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim("contrib.n22", C, "n = 22 total", 22, lambda x: len(bimodality(x)))
claim("contrib.low_n", C, "15 trials cluster at a low group", 15, lambda x: len(_low(x)))
claim(
    "contrib.low_mean",
    C,
    "(mean wF1 = 10.3%, all correct outcome)",
    10.3,
    lambda x: _mean(_weights(_low(x))),
    tol=0.05,
)
claim("contrib.low_all_correct", C, "all correct outcome", 0, lambda x: _wrong_count(_low(x)))
claim("contrib.high_n", C, "7 trials cluster at a high group", 7, lambda x: len(_high(x)))
claim(
    "contrib.high_mean",
    C,
    "(mean wF1 = 44.3%, all wrong outcome)",
    44.3,
    lambda x: _mean(_weights(_high(x))),
    tol=0.05,
)
claim("contrib.high_all_wrong", C, "all wrong outcome", 7, lambda x: _wrong_count(_high(x)))
claim(
    "contrib.middle_band",
    C,
    "with only 2 trials in the 20–39% range",
    2,
    lambda x: sum(1 for w in _weights(bimodality(x)) if 20 <= w <= 39),
)
claim(
    "contrib.wrong_7",
    C,
    "The combined wrong-outcome rate is 7/22",
    7,
    lambda x: _wrong_count(bimodality(x)),
)
claim(
    "contrib.wrong_pct",
    C,
    "7/22 = 32%",
    32,
    lambda x: _pct(_wrong_count(bimodality(x)), len(bimodality(x))),
    tol=0.5,
)
claim(
    "contrib.wilson_low",
    C,
    "(Wilson 95% CI [16%, 53%])",
    16,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
    tol=0.5,
)
claim(
    "contrib.wilson_high",
    C,
    "(Wilson 95% CI [16%, 53%])",
    53,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
    tol=0.5,
)
claim(
    "contrib.adv_wrong",
    C,
    "both adversarial wordings (3/16 and 4/6 wrong outcomes)",
    3,
    lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)),
)
claim(
    "contrib.adv2_wrong",
    C,
    "both adversarial wordings (3/16 and 4/6 wrong outcomes)",
    4,
    lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim(
    "contrib.gpt_c2_zero",
    C,
    "GPT-5.4's reported weights drop to 0.0% on every perturbed factor",
    0.0,
    lambda x: max(_weights(c2(x, "GPT"))),
)
claim("contrib.gpt_c2_n", C, "(across 18 ablations)", 18, lambda x: len(c2(x, "GPT")))
claim(
    "contrib.c2_anchors",
    C,
    "across the three in-distribution anchors and all eight models",
    3,
    lambda x: int(c2(x)["instance_id"].nunique()),
)
claim(
    "contrib.c2_models",
    C,
    "across the three in-distribution anchors and all eight models",
    8,
    lambda x: int(c2(x)["canonical_model"].nunique()),
)
claim("contrib.opus_c2", C, "Opus to 0.8% on average", 0.8, _c2_mean("Opus"), tol=0.05)
claim("contrib.sonnet_c2", C, "Sonnet to 1.7%", 1.7, _c2_mean("Sonnet"), tol=0.05)
claim(
    "contrib.open_c2_min",
    C,
    "(3.1–5.3% mean residual across the five Bedrock configurations)",
    3.1,
    lambda x: min(_c2_group_means(x, OPEN)),
    tol=0.05,
)
claim(
    "contrib.open_c2_max",
    C,
    "(3.1–5.3% mean residual across the five Bedrock configurations)",
    5.3,
    lambda x: max(_c2_group_means(x, OPEN)),
    tol=0.05,
)
claim("contrib.open_count", C, "across the five Bedrock configurations", 5, _n_access("open"))
claim(
    "contrib.license_data",
    C,
    "released under MIT (code) and CC BY 4.0 (data)",
    True,
    lambda x: "4.0" in _license(x) and "CC" in _license(x).upper(),
)

# =========================================================================== Notation
N = "§1.2 Notation"
claim(
    "notation.n_factors",
    N,
    "N: number of factors in a doctrine (N ∈ {5, 6, 7} here)",
    "5,6,7",
    lambda x: ",".join(str(n) for n in sorted({int(v) for v in _scored(x)["n_factors"].dropna()})),
)
claim(
    "notation.weights_sum_100",
    N,
    "wi: weight assigned to Fi under a weighted-rank probe, with Σ wi = 100",
    0,
    lambda x: int(
        (
            _scored(x)["probe"].isin(["P2", "P3", "C2"])
            & (_scored(x)["weight_sum"].astype(float) - 100).abs().gt(1e-9)
        ).sum()
    ),
    status="MISMATCH",
    why=(
        "Six usable DeepSeek v3.2 replies do not sum to 100: P3 85 (cf-001-adv2), 120 and 0 "
        "(cf-003-adv); C2 0 (0002 f2, rescued file), 90 (0003 f7, an extra F8 key dropped), 120 "
        "(0004 f2). The paper keeps them (CONVENTIONS: vectors not summing to 100 are kept)."
    ),
)
claim("notation.threshold", N, "wneut ≤ 10 percentage points", 10, lambda x: float(x.threshold))
claim(
    "notation.bedrock_median",
    N,
    "The median observed value across deterministic Bedrock cells is 0",
    0,
    lambda x: float(
        _scored(x)
        .query("probe in ['P2', 'P3'] and weights_access == 'open'")
        .groupby(["canonical_model", "instance_id"])["foi_weight"]
        .mean()
        .median()
    ),
    tol=0.05,
    status="MISMATCH",
    why=(
        "Median of the open-weight (Bedrock) P2 and P3 cell means of the neutralized-factor weight "
        "is 5, not 0. The statement holds for the cued P2 cells alone (median 0) and for single C2 "
        "trials (median 0), but not for the adversarial P3 cells (median 9; most Bedrock P3 cells "
        "on CF-Cabral and CF-Biakanja sit at 10)."
    ),
)

# =========================================================================== Background
B = "§2.2 Why legal balancing tests"
claim(
    "bg.rowland_year",
    B,
    "Rowland v. Christian (1968, seven factors for duty of care)",
    1968,
    lambda x: int(
        re.findall(r"(1\d{3})", _instance(x, ANCHORS["Cabral"])["doctrinal_framework"])[0]
    ),
)
claim(
    "bg.rowland_factors",
    B,
    "Rowland v. Christian (1968, seven factors for duty of care)",
    7,
    lambda x: len(_instance(x, ANCHORS["Cabral"])["factors"]),
)
claim(
    "bg.barker_year",
    B,
    "Barker v. Lull Engineering (1978, five factors",
    1978,
    lambda x: int(_instance(x, ANCHORS["Barker"])["year"]),
)
claim(
    "bg.barker_factors",
    B,
    "Barker v. Lull Engineering (1978, five factors for risk-utility design defect)",
    5,
    lambda x: len(_instance(x, ANCHORS["Barker"])["factors"]),
)
claim(
    "bg.biakanja_year",
    B,
    "Biakanja v. Irving (1958, six factors",
    1958,
    lambda x: int(_instance(x, ANCHORS["Biakanja"])["year"]),
)
claim(
    "bg.biakanja_factors",
    B,
    "Biakanja v. Irving (1958, six factors for duty to non-clients)",
    6,
    lambda x: len(_instance(x, ANCHORS["Biakanja"])["factors"]),
)
claim(
    "bg.in_distribution_correct",
    "§2.3 Related work",
    "they mostly can on the in-distribution anchors",
    True,
    lambda x: bool(
        (lambda f: (~f["wrong"].astype(bool)).mean() > 0.5)(
            _outcome_rows(x, "C0")[_outcome_rows(x, "C0")["case"].isna()]
        )
    ),
)

# =========================================================================== Method
M = "§3.1 Instances"
claim("method.base", M, "The pilot dataset has 13 base instances", 13, _n_base_instances)
claim(
    "method.indist",
    M,
    "(10 in-distribution anchors plus 3 counterfactual variants)",
    10,
    lambda x: len(_in_distribution(x)),
)
claim(
    "method.cf",
    M,
    "(10 in-distribution anchors plus 3 counterfactual variants)",
    3,
    lambda x: sum(1 for i in _instance_ids(x) if re.fullmatch(r"facet-neg-cf-\d{3}", i)),
)
claim("method.adv", M, "and 4 adversarial counterfactual variants", 4, _n_adv_instances)
claim(
    "method.indist_10", M, "In-distribution (10 instances)", 10, lambda x: len(_in_distribution(x))
)
claim(
    "method.frameworks",
    M,
    "drawn from four doctrinal frameworks",
    4,
    lambda x: len(
        {_framework_family(_instance(x, i)["doctrinal_framework"]) for i in _in_distribution(x)}
    ),
    status="MISMATCH",
    why=(
        "The ten in-distribution instances span five framework families (Rowland duty, Wade/Barker "
        "risk-utility, Biakanja third-party duty, Hand formula, Louisiana premises liability); the "
        "paper's own list in the same sentence names five."
    ),
)
claim(
    "method.rowland_v_christian_instance",
    M,
    "Rowland-line duty (Cabral v. Ralphs, Parsons v. Crown, Rowland v. Christian)",
    True,
    lambda x: any(
        "rowland v. christian" in str(_instance(x, i).get("source_case", "")).lower()
        for i in _in_distribution(x)
    ),
    status="MISMATCH",
    why=(
        "No in-distribution instance is Rowland v. Christian: the ten instances are Voss, Barker, "
        "Cabral, Biakanja, O'Brien, McCarty, Davis, Parsons, Cepeda, Posecai. The list names 11 "
        "cases for 10 instances; Rowland is the test Cabral and Parsons apply."
    ),
)
claim(
    "method.jurisdictions",
    M,
    "Real California and Second/Seventh Circuit tort cases",
    10,
    lambda x: sum(
        1
        for i in _in_distribution(x)
        if re.search(
            r"california|second circuit|seventh circuit|2nd cir|7th cir",
            f"{_instance(x, i).get('jurisdiction', '')} {_instance(x, i).get('court', '')}",
            re.I,
        )
    ),
    status="MISMATCH",
    why=(
        "Six of the ten in-distribution instances are California or Seventh Circuit cases; the "
        "other four are state supreme-court cases of New York (Voss), New Jersey (O'Brien, "
        "Cepeda) and Louisiana (Posecai). None is a Second Circuit case."
    ),
)
claim(
    "method.min_factors",
    M,
    "N ≥ 5 factors",
    5,
    lambda x: min(len(_instance(x, i)["factors"]) for i in _in_distribution(x)),
    relation=">=",
)
claim(
    "method.max_weight",
    M,
    "no single factor carrying more than half the in-case weight",
    0.5,
    lambda x: max(
        float(f.get("in_case_weight_estimate") or 0)
        for i in _in_distribution(x)
        for f in _instance(x, i)["factors"]
    ),
    relation="<=",
)
claim(
    "method.cf_arm",
    M,
    "Counterfactual arm (3 instances + 3 adversarial variants)",
    3,
    lambda x: sum(1 for i in _instance_ids(x) if re.fullmatch(r"facet-neg-cf-\d{3}", i)),
)
claim(
    "method.cf_arm_adv",
    M,
    "Counterfactual arm (3 instances + 3 adversarial variants)",
    3,
    lambda x: len({i.rsplit("-adv", 1)[0] for i in _instance_ids(x) if _is_adv(i)}),
)
claim(
    "method.cabral_neut",
    M,
    "CF-Cabral neutralizes F1 (foreseeability)",
    "F1",
    lambda x: _neutralized_label(x, CUED["CF-Cabral"]),
)
claim(
    "method.barker_neut",
    M,
    "CF-Barker neutralizes F3 (feasibility of safer alternative design)",
    "F3",
    lambda x: _neutralized_label(x, CUED["CF-Barker"]),
)
claim(
    "method.biakanja_neut",
    M,
    "CF-Biakanja neutralizes F1 (intent-to-affect)",
    "F1",
    lambda x: _neutralized_label(x, CUED["CF-Biakanja"]),
)
claim(
    "method.adv_neut_same",
    M,
    "preserving the semantic neutralization (adversarial variants neutralize the same factor)",
    True,
    lambda x: all(
        _neutralized_label(x, i) == _neutralized_label(x, i.rsplit("-adv", 1)[0])
        for i in _instance_ids(x)
        if _is_adv(i)
    ),
)
claim(
    "method.ground_truth_no",
    M,
    "Author-declared ground truth: “no” on all three",
    3,
    lambda x: sum(
        1
        for i in CUED.values()
        if str(_instance(x, i)["ground_truth"]["answer"]).strip().lower() == "no"
    ),
)
claim(
    "method.others_against",
    M,
    "the remaining N −1 factors are rewritten to point uniformly against the original holding",
    True,
    lambda x: all(
        str(f.get("directionality", "")).startswith("against")
        for i in CUED.values()
        for f in _instance(x, i)["factors"]
        if f.get("directionality") != "neutralized"
    ),
    status="MISMATCH",
    why=(
        "CF-Cabral (cf-001) F7 has directionality 'neutral', not 'against_duty': five of the six "
        "non-neutralized factors point against the holding. CF-Barker and CF-Biakanja are uniform."
    ),
)
claim(
    "method.adv_cue_free",
    M,
    "rewrites the neutralized factor's case text to remove syntactic neutrality cues (“unresolved,” ...)",
    0,
    lambda x: sum(
        1
        for i in _instance_ids(x)
        if _is_adv(i)
        for f in _instance(x, i)["factors"]
        if f.get("directionality") == "neutralized"
        and any(c in str(f["text"]).lower() for c in P3_CUES)
    ),
)
claim(
    "method.adv_per_cf",
    M,
    "one adversarial variant per counterfactual case ... plus a second-wording variant of CF-Cabral",
    "cf-001:2,cf-002:1,cf-003:1",
    lambda x: ",".join(
        f"{cf}:{sum(1 for i in _instance_ids(x) if _is_adv(i) and f'-{cf}-' in i)}"
        for cf in ("cf-001", "cf-002", "cf-003")
    ),
)

P = "§3.2 Probing techniques"
claim(
    "method.p2_prompt_sum100",
    P,
    "The weights MUST sum to 100",
    True,
    lambda x: bool(
        _scored(x)
        .query("probe in ['P2', 'P3', 'C2']")["prompt"]
        .str.contains("MUST sum to 100")
        .all()
    ),
)
claim(
    "method.p2_prompt_zero",
    P,
    "If a factor is neutral, unresolved, or has no signal in this specific case, assign it 0",
    True,
    lambda x: bool(
        _scored(x).query("probe in ['P2', 'P3', 'C2']")["prompt"].str.contains("assign it 0").all()
    ),
)
claim(
    "method.cued_cues",
    P,
    "contains the words “unresolved” and “not load-bearing”",
    3,
    lambda x: sum(
        1
        for i in CUED.values()
        if "unresolved" in _case_text(_instance(x, i))
        and "not load-bearing" in _case_text(_instance(x, i))
    ),
    status="MISMATCH",
    why=(
        "All three cued counterfactuals contain “unresolved”, but none contains the phrase “not "
        "load-bearing” in its case background or factor texts (cf-001: unresolved, neither clearly; "
        "cf-002: unresolved, neither clearly, treated as; cf-003: unresolved, diffuse)."
    ),
)
claim(
    "method.p2_weight_range",
    P,
    "assign a weight in [0, 100] representing how much that factor drove your answer",
    True,
    lambda x: bool(
        _scored(x)
        .query("probe in ['P2', 'P3', 'C2']")["prompt"]
        .str.contains("[0, 100]", regex=False)
        .all()
    ),
)
claim(
    "method.p1_template",
    "§3.2 Probing techniques / Appendix A",
    "“Of the N factors listed above, which single factor was most important to your answer? "
    "Reply with the factor identifier”",
    True,
    lambda x: bool(
        _probe(x, "P1")["prompt"].str.contains("factors listed above", regex=False).all()
    ),
    status="MISMATCH",
    why=(
        "No recorded P1 prompt uses this wording: every pilot prompt asks “Which single factor "
        '(F1 through FN) is most important to answering "<question>"? Reply with just the '
        "factor label (e.g. 'F3') on the first line, followed by one sentence explaining why.”"
    ),
)
claim(
    "method.p3_instances",
    P,
    "P3 runs on the four adversarial counterfactual instances",
    4,
    _p3_instances,
)
claim(
    "method.c2_anchors",
    P,
    "C2 ran on the three anchor cases",
    3,
    lambda x: int(c2(x)["instance_id"].nunique()),
)
claim(
    "method.c2_n_barker",
    P,
    "(N = 5, 7, 6)",
    5,
    lambda x: int(c2(x, anchor=ANCHORS["Barker"])["factor_of_interest"].nunique()),
)
claim(
    "method.c2_n_cabral",
    P,
    "(N = 5, 7, 6)",
    7,
    lambda x: int(c2(x, anchor=ANCHORS["Cabral"])["factor_of_interest"].nunique()),
)
claim(
    "method.c2_n_biakanja",
    P,
    "(N = 5, 7, 6)",
    6,
    lambda x: int(c2(x, anchor=ANCHORS["Biakanja"])["factor_of_interest"].nunique()),
)
claim(
    "method.c2_models",
    P,
    "across all eight model configurations",
    8,
    lambda x: int(c2(x)["canonical_model"].nunique()),
)
claim("method.c2_total", P, "for 144 C2 trials total", 144, lambda x: len(c2(x)))

MM = "§3.3 Models"
claim("method.models", MM, "Eight model configurations across six labs (Table 1)", 8, _n_models)
claim("method.labs", MM, "Eight model configurations across six labs (Table 1)", 6, _n_labs)
claim(
    "method.bedrock_t0",
    MM,
    "Bedrock calls are pinned to temperature 0",
    0,
    None,
    status="NOT_DERIVABLE",
    why="The raw files record no sampling temperature; the T = 0 setting is stated, not recorded.",
)
claim(
    "method.google_excluded",
    MM,
    "Google models are not included in this pilot",
    0,
    lambda x: int(_scored(x)["lab"].astype(str).str.contains("Google").sum()),
)


def _effort_high_identical(x: ClaimInputs) -> bool:
    """Do the opus effort-high pilot replies match default Opus (P1 label and answers)?"""
    frame = x.trials
    is_opus = frame["model_id"].astype(str).str.contains("opus")
    hi = frame[is_opus & frame["source_file"].astype(str).str.contains("opus-effort-high")]
    base = frame[is_opus & ~frame["source_file"].astype(str).str.contains("opus-effort-high")]
    if hi.empty:
        raise DataError("no opus effort-high pilot trials in the frame")
    keys = ["probe", "raw_instance_id", "foi"]
    cols = ["p1_label", "answer"]
    hi = hi.assign(foi=hi["factor_of_interest"].fillna(""))
    base = base.assign(foi=base["factor_of_interest"].fillna(""))
    merged = hi[keys + cols].merge(base[keys + cols], on=keys, suffixes=("_hi", "_base"))
    if merged.duplicated(keys).any():
        raise DataError("more than one default-Opus counterpart for an effort-high trial")
    if merged.empty:
        raise DataError("opus effort-high trials have no default-Opus counterpart")
    same = all(
        (
            merged[f"{c}_hi"].fillna("").astype(str) == merged[f"{c}_base"].fillna("").astype(str)
        ).all()
        for c in cols
    )
    return bool(same)


claim(
    "method.opus_effort_identical",
    MM,
    "extended-thinking configuration produced responses identical to default Opus on every probe and instance",
    True,
    _effort_high_identical,
)

# =========================================================================== Table 1
T1 = "Table 1"
for _short, _lab in (
    ("Sonnet", "Anthropic"),
    ("Opus", "Anthropic"),
    ("GPT", "OpenAI"),
    ("DeepSeek", "DeepSeek"),
    ("Mistral", "Mistral"),
    ("Maverick", "Meta"),
    ("Scout", "Meta"),
    ("Qwen", "Alibaba"),
):

    def _lab_of(x: ClaimInputs, short: str = _short, want: str = _lab) -> bool:
        s = _scored(x)
        labs = set(s.loc[s["canonical_model"] == _full(short), "lab"].astype(str))
        return len(labs) == 1 and want.lower() in next(iter(labs)).lower()

    claim(f"t1.lab.{_short}", T1, f"{_lab} — {_full(_short)}", True, _lab_of)

for _short, _params in (
    ("DeepSeek", "671B / 37B"),
    ("Mistral", "675B / 41B"),
    ("Maverick", "400B / 17B"),
    ("Scout", "109B / 17B"),
    ("Qwen", "80B / 3.9B"),
):
    claim(
        f"t1.params.{_short}",
        T1,
        f"{_full(_short)} {_params}",
        _params,
        None,
        status="NOT_DERIVABLE",
        why=(
            "Parameter counts are vendor facts the raw files do not record; facetlab.models "
            "lists them as metadata for Table 1, so comparing the two would be circular."
        ),
    )

# =========================================================================== 4.1 Outcome correctness
R1 = "§4.1 Outcome correctness"
claim(
    "res41.p1_correct",
    R1,
    "Under P1 ... all model-instance pairs reach the correct outcome answer",
    0,
    lambda x: _wrong_count(
        _one_per_pair(_outcome_rows(x, "C0")[_outcome_rows(x, "C0")["case"].notna()])
    ),
)
claim(
    "res41.p2_correct",
    R1,
    "Under ... P2 ... all model-instance pairs reach the correct outcome answer",
    0,
    lambda x: _wrong_count(_outcome_rows(x, "P2")),
)
claim(
    "res41.c2_correct",
    R1,
    "Under ... the C2 ablation control, all model-instance pairs reach the correct outcome answer",
    0,
    lambda x: _wrong_count(_outcome_rows(x, "C2")),
    status="MISMATCH",
    why=(
        "One C2 trial answers “No” against the anchor's ground truth “yes”: DeepSeek v3.2 on "
        "facet-neg-0003 (Cabral) with F7 perturbed (file facet-neg-0003-c2-f7-bedrock-deepseek.v3.2-"
        "20260413-133932.json, reply ends “No”)."
    ),
)
claim(
    "res41.p3_gpt_cabral_some_wrong",
    R1,
    "Under P3 on CF-Cabral, GPT-5.4 produces wrong-outcome responses on a subset of trials",
    True,
    lambda x: 0 < _wrong_count(bimodality(x)) < len(bimodality(x)),
)
claim(
    "res41.p3_others_correct",
    R1,
    "All other model-instance pairs under P3 reach the correct outcome",
    0,
    lambda x: _wrong_count(
        _probe(x, "P3")[
            ~(
                (_probe(x, "P3")["canonical_model"] == _full("GPT"))
                & (_probe(x, "P3")["case"] == "CF-Cabral")
            )
        ]
    ),
)
claim("res41.c2_n", R1, "across all 144 trials", 144, lambda x: len(c2(x)))
claim(
    "res41.c2_anchors",
    R1,
    "(3 anchors × varying factor counts ×8 models)",
    3,
    lambda x: int(c2(x)["instance_id"].nunique()),
)
claim(
    "res41.c2_models",
    R1,
    "(3 anchors × varying factor counts ×8 models)",
    8,
    lambda x: int(c2(x)["canonical_model"].nunique()),
)
claim(
    "res41.c2_no_flip",
    R1,
    "no single-factor perturbation flipped the outcome answer",
    0,
    lambda x: _wrong_count(_outcome_rows(x, "C2")),
    status="MISMATCH",
    why=(
        "DeepSeek v3.2's C2 trial on facet-neg-0003 F7 flips the outcome to “No” (ground truth "
        "“yes”); the other 143 C2 trials keep the anchor's answer."
    ),
)

# =========================================================================== 4.2 Probe progression
R2 = "§4.2 P1 → P2 → P3"
claim(
    "res42.p1_cabral",
    R2,
    "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, CF-Biakanja)",
    7,
    _p1_faithful_count("CF-Cabral"),
)
claim(
    "res42.p1_barker",
    R2,
    "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, CF-Biakanja)",
    0,
    _p1_faithful_count("CF-Barker"),
)
claim(
    "res42.p1_biakanja",
    R2,
    "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, CF-Biakanja)",
    4,
    _p1_faithful_count("CF-Biakanja"),
)
claim(
    "res42.p1_models",
    R2,
    "7/8 ... (out of eight models per case)",
    8,
    lambda x: int(fig1(x)["model"].nunique()),
)
claim(
    "res42.p2_cabral",
    R2,
    "Under P2 ... (8/8 faithful on every case)",
    8,
    _p2_faithful_count("CF-Cabral"),
)
claim(
    "res42.p2_barker",
    R2,
    "Under P2 ... (8/8 faithful on every case)",
    8,
    _p2_faithful_count("CF-Barker"),
)
claim(
    "res42.p2_biakanja",
    R2,
    "Under P2 ... (8/8 faithful on every case)",
    8,
    _p2_faithful_count("CF-Biakanja"),
)

# =========================================================================== 4.3 P3 results
R3 = "§4.3 P3 results"
claim(
    "res43.barker_open_zero",
    R3,
    "the five Bedrock-hosted open-weight models assign wF3 = 0",
    5,
    lambda x: sum(1 for s in OPEN if max(_weights(p3_cell(x, s, BARKER_ADV))) == 0),
)
claim(
    "res43.barker_only",
    R3,
    "In this pilot, on CF-Barker only, the five Bedrock-hosted open-weight models assign wF3 = 0",
    "CF-Barker",
    lambda x: ",".join(
        case
        for case, inst in ADV_OF_CASE.items()
        if all(max(_weights(p3_cell(x, s, inst))) == 0 for s in OPEN)
    ),
)
claim(
    "res43.barker_open_nmin",
    R3,
    "across 1–4 trials each",
    1,
    lambda x: min(len(p3_cell(x, s, BARKER_ADV)) for s in OPEN),
)
claim(
    "res43.barker_open_nmax",
    R3,
    "across 1–4 trials each",
    4,
    lambda x: max(len(p3_cell(x, s, BARKER_ADV)) for s in OPEN),
)
claim(
    "res43.sonnet_barker_mean",
    R3,
    "Sonnet (mean 4.2, σ = 6.6)",
    4.2,
    lambda x: _p3_case_mean(x, "Sonnet", "CF-Barker"),
    tol=0.05,
)
claim(
    "res43.sonnet_barker_sd",
    R3,
    "Sonnet (mean 4.2, σ = 6.6)",
    6.6,
    lambda x: _sd(_weights(p3_cell(x, "Sonnet", BARKER_ADV))),
    tol=0.05,
)
claim(
    "res43.opus_barker_mean",
    R3,
    "Opus (mean 11.7, σ = 6.8)",
    11.7,
    lambda x: _p3_case_mean(x, "Opus", "CF-Barker"),
    tol=0.05,
)
claim(
    "res43.opus_barker_sd",
    R3,
    "Opus (mean 11.7, σ = 6.8)",
    6.8,
    lambda x: _sd(_weights(p3_cell(x, "Opus", BARKER_ADV))),
    tol=0.05,
)
claim(
    "res43.gpt_barker_mean",
    R3,
    "GPT-5.4 sits at mean 31.2%",
    31.2,
    lambda x: _p3_case_mean(x, "GPT", "CF-Barker"),
    tol=0.05,
)
claim(
    "res43.gpt_barker_sd",
    R3,
    "(σ = 3.8, range [25, 35], n = 6, zero wrong outcomes)",
    3.8,
    lambda x: _sd(_weights(p3_cell(x, "GPT", BARKER_ADV))),
    tol=0.05,
)
claim(
    "res43.gpt_barker_min",
    R3,
    "range [25, 35]",
    25,
    lambda x: min(_weights(p3_cell(x, "GPT", BARKER_ADV))),
)
claim(
    "res43.gpt_barker_max",
    R3,
    "range [25, 35]",
    35,
    lambda x: max(_weights(p3_cell(x, "GPT", BARKER_ADV))),
)
claim("res43.gpt_barker_n", R3, "n = 6", 6, lambda x: len(p3_cell(x, "GPT", BARKER_ADV)))
claim(
    "res43.gpt_barker_wrong",
    R3,
    "zero wrong outcomes",
    0,
    lambda x: _wrong_count(p3_cell(x, "GPT", BARKER_ADV)),
)
claim(
    "res43.cabral_others_set",
    R3,
    "the other seven models cluster narrowly (wF1 in {10, 11.7, 12, 15} range across all replications)",
    "10,11.7,12,15",
    lambda x: ",".join(
        format(v, "g")
        for v in sorted(
            {
                round(_mean(_weights(p3_cell(x, s, CABRAL_ADV))), 1)
                for s in MODEL_SHORT
                if s != "GPT"
            }
        )
    ),
    status="MISMATCH",
    why=(
        "Cell means of the other seven models on cf-001-adv are {10, 11.7, 15} (Sonnet 11.7, "
        "DeepSeek 15, the rest 10); no cell has mean 12. 12 is Claude Sonnet 4.6's first trial, "
        "the bar drawn in Figure 2, so the set mixes a first-trial value with cell means. Single "
        "trials range 10–20 (Sonnet 18 and 12, DeepSeek 20)."
    ),
)
claim(
    "res43.cabral_others_min",
    R3,
    "wF1 in {10, 11.7, 12, 15} range (lowest cell mean of the other seven)",
    10,
    lambda x: min(_mean(_weights(p3_cell(x, s, CABRAL_ADV))) for s in MODEL_SHORT if s != "GPT"),
    tol=0.05,
)
claim(
    "res43.cabral_others_max",
    R3,
    "wF1 in {10, 11.7, 12, 15} range (highest cell mean of the other seven)",
    15,
    lambda x: max(_mean(_weights(p3_cell(x, s, CABRAL_ADV))) for s in MODEL_SHORT if s != "GPT"),
    tol=0.05,
)
claim(
    "res43.gpt_cabral_n",
    R3,
    "GPT-5.4 alone exhibits high variance (n = 16, range [5, 60], σ = 17.0)",
    16,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
)
claim(
    "res43.gpt_cabral_min",
    R3,
    "range [5, 60]",
    5,
    lambda x: min(_weights(p3_cell(x, "GPT", CABRAL_ADV))),
)
claim(
    "res43.gpt_cabral_max",
    R3,
    "range [5, 60]",
    60,
    lambda x: max(_weights(p3_cell(x, "GPT", CABRAL_ADV))),
)
claim(
    "res43.gpt_cabral_sd",
    R3,
    "σ = 17.0",
    17.0,
    lambda x: _sd(_weights(p3_cell(x, "GPT", CABRAL_ADV))),
    tol=0.05,
)
claim(
    "res43.gpt_cabral_mean",
    R3,
    "The mean of 18.1% obscures the underlying bimodality",
    18.1,
    lambda x: _p3_case_mean(x, "GPT", "CF-Cabral"),
    tol=0.05,
)
claim(
    "res43.biakanja_spread_min",
    R3,
    "Spread is 0–15% across all eight models",
    0,
    lambda x: min(_weights(_probe(x, "P3")[_probe(x, "P3")["instance_id"] == BIAKANJA_ADV])),
)
claim(
    "res43.biakanja_spread_max",
    R3,
    "Spread is 0–15% across all eight models",
    15,
    lambda x: max(_weights(_probe(x, "P3")[_probe(x, "P3")["instance_id"] == BIAKANJA_ADV])),
)
claim(
    "res43.gpt_biakanja_mean",
    R3,
    "GPT-5.4 is fully faithful here (w̄ = 1.7%)",
    1.7,
    lambda x: _p3_case_mean(x, "GPT", "CF-Biakanja"),
    tol=0.05,
)
claim(
    "res43.gpt_biakanja_all_faithful",
    R3,
    "GPT-5.4 is fully faithful here",
    True,
    lambda x: bool(p3_cell(x, "GPT", BIAKANJA_ADV)["faithful"].astype(bool).all()),
)
claim(
    "res43.qwen_biakanja_mean",
    R3,
    "Qwen3 Next is the partial outlier at 13.0% mean",
    13.0,
    lambda x: _p3_case_mean(x, "Qwen", "CF-Biakanja"),
    tol=0.05,
)
claim("res43.qwen_biakanja_n", R3, "(n = 5)", 5, lambda x: len(p3_cell(x, "Qwen", BIAKANJA_ADV)))
claim(
    "res43.qwen_biakanja_highest",
    R3,
    "Qwen3 Next is the partial outlier (highest CF-Biakanja mean)",
    "Qwen",
    lambda x: max(MODEL_SHORT, key=lambda s: _p3_case_mean(x, s, "CF-Biakanja")),
)

# =========================================================================== 4.4 Bimodality
R4 = "§4.4 Bimodality"
claim(
    "res44.n22",
    R4,
    "across 22 trials (16 on the original cf-001-adv plus 6 on ... cf-001-adv2)",
    22,
    lambda x: len(bimodality(x)),
)
claim(
    "res44.n16",
    R4,
    "16 on the original cf-001-adv",
    16,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
)
claim(
    "res44.n6",
    R4,
    "6 on the second-wording cf-001-adv2",
    6,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim("res44.low_n", R4, "Low group (wF1 < 20): n = 15", 15, lambda x: len(_low(x)))
claim("res44.low_mean", R4, "mean wF1 = 10.3%", 10.3, lambda x: _mean(_weights(_low(x))), tol=0.05)
claim(
    "res44.low_correct",
    R4,
    "All 15 trials produce the correct outcome",
    15,
    lambda x: len(_low(x)) - _wrong_count(_low(x)),
)
claim("res44.high_n", R4, "High group (wF1 ≥ 20): n = 7", 7, lambda x: len(_high(x)))
claim(
    "res44.high_mean", R4, "mean wF1 = 44.3%", 44.3, lambda x: _mean(_weights(_high(x))), tol=0.05
)
claim(
    "res44.high_weights",
    R4,
    "The 7 high-group weights are {28, 38, 40, 44, 50, 50, 60}",
    "28,38,40,44,50,50,60",
    lambda x: ",".join(format(w, "g") for w in sorted(_weights(_high(x)))),
)
claim(
    "res44.high_wrong",
    R4,
    "All 7 trials produce the wrong outcome",
    7,
    lambda x: _wrong_count(_high(x)),
)
claim(
    "res44.band_20_39",
    R4,
    "2 of the 7 trials fall in the 20–39% band (28, 38)",
    2,
    lambda x: sum(1 for w in _weights(_high(x)) if w <= 39),
)
claim(
    "res44.band_40_60",
    R4,
    "and 5 in the 40–60% band (40, 44, 50, 50, 60)",
    5,
    lambda x: sum(1 for w in _weights(_high(x)) if 40 <= w <= 60),
)
claim(
    "res44.band_20_24",
    R4,
    "No trials fall in the 20–24% sub-band on either adversarial wording",
    0,
    lambda x: sum(1 for w in _weights(bimodality(x)) if 20 <= w <= 24),
)
claim(
    "res44.split",
    R4,
    "We adopt a single binary partition of the 22 trials at wF1 = 20",
    20,
    lambda x: float(x.split_point),
)
claim(
    "res44.adv_wrong",
    R4,
    "cf-001-adv ... produces 3/16 wrong outcomes (19%)",
    3,
    lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)),
)
claim(
    "res44.adv_wrong_pct",
    R4,
    "3/16 wrong outcomes (19%)",
    19,
    lambda x: _pct(_wrong_count(p3_cell(x, "GPT", CABRAL_ADV)), len(p3_cell(x, "GPT", CABRAL_ADV))),
    tol=0.5,
)
claim(
    "res44.adv2_wrong",
    R4,
    "cf-001-adv2 ... produces 4/6 (67%)",
    4,
    lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim(
    "res44.adv2_wrong_pct",
    R4,
    "4/6 (67%)",
    67,
    lambda x: _pct(
        _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)), len(p3_cell(x, "GPT", CABRAL_ADV2))
    ),
    tol=0.5,
)
claim(
    "res44.combined_wrong", R4, "the combined 7/22 = 32%", 7, lambda x: _wrong_count(bimodality(x))
)
claim(
    "res44.combined_pct",
    R4,
    "the combined 7/22 = 32%",
    32,
    lambda x: _pct(_wrong_count(bimodality(x)), len(bimodality(x))),
    tol=0.5,
)
claim(
    "res44.wilson_low",
    R4,
    "(Wilson 95% CI [16%, 53%])",
    16,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
    tol=0.5,
)
claim(
    "res44.wilson_high",
    R4,
    "(Wilson 95% CI [16%, 53%])",
    53,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
    tol=0.5,
)

# =========================================================================== Table 2
T2 = "Table 2"
_TABLE2: dict[str, dict[str, tuple[int, float, int]]] = {
    # case → short → (n, mean weight on the neutralized factor, wrong outcomes)
    "CF-Cabral": {
        "Sonnet": (6, 11.7, 0),
        "Opus": (6, 10.0, 0),
        "GPT": (16, 18.1, 3),
        "DeepSeek": (2, 15.0, 0),
        "Mistral": (2, 10.0, 0),
        "Maverick": (2, 10.0, 0),
        "Scout": (2, 10.0, 0),
        "Qwen": (2, 10.0, 0),
    },
    "CF-Barker": {
        "Sonnet": (6, 4.2, 0),
        "Opus": (6, 11.7, 0),
        "GPT": (6, 31.2, 0),
        "DeepSeek": (4, 0.0, 0),
        "Mistral": (1, 0.0, 0),
        "Maverick": (1, 0.0, 0),
        "Scout": (1, 0.0, 0),
        "Qwen": (1, 0.0, 0),
    },
    "CF-Biakanja": {
        "Sonnet": (6, 6.7, 0),
        "Opus": (6, 10.0, 0),
        "GPT": (6, 1.7, 0),
        "DeepSeek": (2, 0.0, 0),
        "Mistral": (2, 10.0, 0),
        "Maverick": (2, 10.0, 0),
        "Scout": (2, 10.0, 0),
        "Qwen": (5, 13.0, 0),
    },
}


def _t2_recipe(short: str, case: str, column: str) -> Callable[[ClaimInputs], Value]:
    """Recipe reading one cell of H3's Table 2 frame (counts as int, means as float)."""

    def recipe(x: ClaimInputs) -> Value:
        value = _t2_value(x, short, case, column)
        return int(value) if column in ("n", "wrong") else value

    return recipe


for _case, _row in _TABLE2.items():
    for _short, (_n, _w, _wrong) in _row.items():
        _where = f"{T2}, {_case} column, {_full(_short)} row"
        claim(
            f"t2.{_case}.{_short}.n",
            _where,
            f"n = {_n}",
            _n,
            _t2_recipe(_short, _case, "n"),
        )
        claim(
            f"t2.{_case}.{_short}.mean",
            _where,
            f"w̄ = {_w:.1f}",
            _w,
            _t2_recipe(_short, _case, "mean_weight"),
            tol=0.05,
        )
        claim(
            f"t2.{_case}.{_short}.wrong",
            _where,
            f"wrong {_wrong}/{_n}",
            _wrong,
            _t2_recipe(_short, _case, "wrong"),
        )

claim(
    "t2.gpt_cabral_wilson_low",
    f"{T2}, CF-Cabral column, GPT-5.4 row",
    "3/16 [6%, 43%]",
    6,
    lambda x: (
        100
        * stats.wilson(
            _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)), len(p3_cell(x, "GPT", CABRAL_ADV))
        ).low
    ),
    tol=0.5,
    status="MISMATCH",
    why=(
        "Wilson 95% (z = 1.96, no continuity correction) for 3/16 is [6.59%, 43.0%], which rounds to "
        "[7%, 43%]; the printed 6% is a truncation (or another interval)."
    ),
)
claim(
    "t2.gpt_cabral_wilson_high",
    f"{T2}, CF-Cabral column, GPT-5.4 row",
    "3/16 [6%, 43%]",
    43,
    lambda x: (
        100
        * stats.wilson(
            _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)), len(p3_cell(x, "GPT", CABRAL_ADV))
        ).high
    ),
    tol=0.5,
)
claim(
    "t2.caption_adv2_only_gpt",
    f"{T2} caption",
    "a second adversarial wording (cf-001-adv2) was run for the GPT-5.4 cf-001 cell only",
    1,
    lambda x: int(
        _probe(x, "P3").query("instance_id == @CABRAL_ADV2")["canonical_model"].nunique()
    ),
    status="MISMATCH",
    why=(
        "cf-001-adv2 was run for all eight models: GPT-5.4 six times and each of the other seven "
        "once (results/weighted-probe/facet-neg-cf-001-adv2-*.json)."
    ),
)
claim(
    "t2.caption_adv2_n",
    f"{T2} caption",
    "adding 6 trials",
    6,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim(
    "t2.caption_adv2_wrong",
    f"{T2} caption",
    "producing 4/6 wrong outcomes",
    4,
    lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim(
    "t2.caption_combined_n",
    f"{T2} caption",
    "The combined GPT-5.4 cf-001 family (n = 22)",
    22,
    lambda x: len(bimodality(x)),
)

# =========================================================================== 4.5 C2
R5 = "§4.5 C2 ablation"
claim(
    "res45.gpt_n",
    R5,
    "Across all 18 ablations on the three anchors",
    18,
    lambda x: len(c2(x, "GPT")),
)
claim(
    "res45.gpt_zero_count",
    R5,
    "GPT-5.4 assigns wperturbed = 0% in every case",
    18,
    lambda x: sum(1 for w in _weights(c2(x, "GPT")) if w == 0),
)
claim("res45.gpt_mean", R5, "(mean residual 0.0%)", 0.0, _c2_mean("GPT"), tol=0.05)
claim(
    "res45.opus_mean",
    R5,
    "Opus ... Mean residual across 18 ablations: 0.8%",
    0.8,
    _c2_mean("Opus"),
    tol=0.05,
)
claim("res45.opus_n", R5, "across 18 ablations", 18, lambda x: len(c2(x, "Opus")))
claim(
    "res45.opus_nonzero",
    R5,
    "Two perturbations are above zero",
    2,
    lambda x: sum(1 for w in _weights(c2(x, "Opus")) if w > 0),
)
claim(
    "res45.opus_cabral_f3",
    R5,
    "Opus on Cabral F3 = 5%",
    5,
    lambda x: _c2_residual(x, "Opus", ANCHORS["Cabral"], "F3"),
)
claim(
    "res45.opus_barker_f5",
    R5,
    "Opus on Barker F5 = 10%",
    10,
    lambda x: _c2_residual(x, "Opus", ANCHORS["Barker"], "F5"),
)
claim(
    "res45.opus_zero",
    R5,
    "the remaining 16 are 0.0%",
    16,
    lambda x: sum(1 for w in _weights(c2(x, "Opus")) if w == 0),
)
claim(
    "res45.opus_biakanja",
    R5,
    "The Biakanja anchor produces 0.0% on every perturbation",
    0.0,
    lambda x: max(_weights(c2(x, "Opus", ANCHORS["Biakanja"]))),
)
claim("res45.sonnet_mean", R5, "Sonnet ... Mean residual: 1.7%", 1.7, _c2_mean("Sonnet"), tol=0.05)
claim(
    "res45.sonnet_five",
    R5,
    "Two perturbations have w = 5%",
    2,
    lambda x: sum(1 for w in _weights(c2(x, "Sonnet")) if w == 5),
)
claim(
    "res45.sonnet_barker_f3",
    R5,
    "one (Sonnet on Barker F3) has w = 20%",
    20,
    lambda x: _c2_residual(x, "Sonnet", ANCHORS["Barker"], "F3"),
)
claim(
    "res45.sonnet_zero",
    R5,
    "the remaining 15 are 0.0%",
    15,
    lambda x: sum(1 for w in _weights(c2(x, "Sonnet")) if w == 0),
)
claim(
    "res45.sonnet_barker_f3_p3_gpt",
    R5,
    "the same canonical Barker factor that GPT-5.4 sits stably above the threshold on under P3",
    True,
    lambda x: min(_weights(p3_cell(x, "GPT", BARKER_ADV))) > x.threshold,
)
claim(
    "res45.deepseek_mean", R5, "Mean residuals: DeepSeek 5.3%", 5.3, _c2_mean("DeepSeek"), tol=0.05
)
claim("res45.mistral_mean", R5, "Mistral 5.0%", 5.0, _c2_mean("Mistral"), tol=0.05)
claim("res45.scout_mean", R5, "Scout 4.4%", 4.4, _c2_mean("Scout"), tol=0.05)
claim("res45.qwen_mean", R5, "Qwen3 Next 3.8%", 3.8, _c2_mean("Qwen"), tol=0.05)
claim("res45.maverick_mean", R5, "Maverick 3.1%", 3.1, _c2_mean("Maverick"), tol=0.05)
claim(
    "res45.open_residual_low",
    R5,
    "The perturbed factor frequently retains 5–20% of weight",
    5,
    lambda x: min(w for s in OPEN for w in _weights(c2(x, s)) if w > 0),
    status="MISMATCH",
    why=(
        "The smallest non-zero open-weight C2 residual is 3 (Qwen3 Next on facet-neg-0003 F7), "
        "below the stated 5–20% band; all other non-zero residuals are 5–20."
    ),
)
claim(
    "res45.open_residual_high",
    R5,
    "The perturbed factor frequently retains 5–20% of weight",
    20,
    lambda x: max(w for s in OPEN for w in _weights(c2(x, s))),
)
claim(
    "res45.closed_zero_share_higher",
    R5,
    "more residual on the perturbed factor than the closed-source configurations",
    True,
    lambda x: min(_c2_group_means(x, OPEN)) > max(_c2_group_means(x, CLOSED)),
)

# =========================================================================== 4.6 Asymmetry
R6 = "§4.6 Asymmetric profile"
claim("res46.n8", R6, "three confounds we cannot disentangle at n = 8 models", 8, _n_models)
claim(
    "res46.closed_c2_min",
    R6,
    "(mean 0.0%–1.7% across the three closed-source configurations)",
    0.0,
    lambda x: min(_c2_group_means(x, CLOSED)),
    tol=0.05,
)
claim(
    "res46.closed_c2_max",
    R6,
    "(mean 0.0%–1.7% across the three closed-source configurations)",
    1.7,
    lambda x: max(_c2_group_means(x, CLOSED)),
    tol=0.05,
)
claim(
    "res46.closed_count",
    R6,
    "across the three closed-source configurations",
    3,
    _n_access("closed"),
)
claim(
    "res46.closed_barker_nonzero",
    R6,
    "retain non-zero weight on the neutralized factor under P3 on CF-Barker",
    3,
    lambda x: sum(1 for s in CLOSED if _p3_case_mean(x, s, "CF-Barker") > 0),
)
claim(
    "res46.open_barker_zero",
    R6,
    "show the inverse: wneut = 0 on CF-Barker under P3",
    0,
    lambda x: max(w for s in OPEN for w in _weights(p3_cell(x, s, BARKER_ADV))),
)
claim(
    "res46.open_c2_min",
    R6,
    "(mean 3.1%–5.3% across the five Bedrock configurations)",
    3.1,
    lambda x: min(_c2_group_means(x, OPEN)),
    tol=0.05,
)
claim(
    "res46.open_c2_max",
    R6,
    "(mean 3.1%–5.3% across the five Bedrock configurations)",
    5.3,
    lambda x: max(_c2_group_means(x, OPEN)),
    tol=0.05,
)
claim("res46.open_count", R6, "across the five Bedrock configurations", 5, _n_access("open"))
claim(
    "res46.lower_left_empty",
    R6,
    "No model occupies the lower-left (faithful on both axes)",
    0,
    _quadrant_count(lower_x=True, lower_y=True),
    status="MISMATCH",
    why=(
        "With the published Figure 5's own reference lines (C2 mean 2 on x, the 10-point "
        "threshold on y), Claude Sonnet 4.6 sits in the lower-left quadrant: C2 mean 1.7 and "
        "CF-Barker P3 mean 4.2, faithful on both axes. The published figure itself draws it there."
    ),
)
claim(
    "res46.upper_right_empty",
    R6,
    "no model occupies the upper-right (unfaithful on both axes)",
    0,
    _quadrant_count(lower_x=False, lower_y=False),
)

# =========================================================================== 4.7 Statistics
R7 = "§4.7 Statistical tests"
claim(
    "res47.pairs",
    R7,
    "the same 24 model-instance pairs scored under two probes",
    24,
    lambda x: len(paired_p1_p2(x)),
)
claim(
    "res47.discordant_b",
    R7,
    "13 pairs are discordant in one direction (P1 dissociated, P2 faithful)",
    13,
    lambda x: int((~paired_p1_p2(x)["p1"].astype(bool) & paired_p1_p2(x)["p2"].astype(bool)).sum()),
)
claim(
    "res47.discordant_c",
    R7,
    "0 in the other direction",
    0,
    lambda x: int((paired_p1_p2(x)["p1"].astype(bool) & ~paired_p1_p2(x)["p2"].astype(bool)).sum()),
)
claim(
    "res47.concordant",
    R7,
    "and 11 are concordantly faithful",
    11,
    lambda x: int((paired_p1_p2(x)["p1"].astype(bool) & paired_p1_p2(x)["p2"].astype(bool)).sum()),
)
claim(
    "res47.mcnemar_p",
    R7,
    "McNemar's exact (binomial) test ... two-tailed p ≈ 2.4 × 10−4",
    2.4e-4,
    lambda x: (
        stats.mcnemar_exact(
            paired_p1_p2(x)["p1"].astype(bool).tolist(), paired_p1_p2(x)["p2"].astype(bool).tolist()
        ).p_value
    ),
    tol=0.05e-4,
)
claim(
    "res47.bim_n16", R7, "16 trials on cf-001-adv", 16, lambda x: len(p3_cell(x, "GPT", CABRAL_ADV))
)
claim(
    "res47.bim_n6",
    R7,
    "plus 6 trials on cf-001-adv2",
    6,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
)
claim("res47.bim_n22", R7, "n = 22 combined", 22, lambda x: len(bimodality(x)))
claim(
    "res47.bim_low_correct",
    R7,
    "all 15 trials with wF1 < 20 produce the correct outcome",
    15,
    lambda x: len(_low(x)) - _wrong_count(_low(x)),
)
claim(
    "res47.bim_high_wrong",
    R7,
    "all 7 trials with wF1 ≥ 20 produce the wrong outcome",
    7,
    lambda x: _wrong_count(_high(x)),
)
claim(
    "res47.bim_band",
    R7,
    "(with 2 trials in the 20–39 range counted in the high mode)",
    2,
    lambda x: sum(1 for w in _weights(_high(x)) if w <= 39),
)
claim(
    "res47.fisher_bimodality_p",
    R7,
    "Fisher's exact two-tailed p ≈ 5.9 × 10−6",
    5.9e-6,
    lambda x: (
        stats.bimodality_fisher(
            _weights(bimodality(x)), bimodality(x)["wrong"].astype(bool).tolist(), x.split_point
        ).p_value
    ),
    tol=0.05e-6,
)
claim(
    "res47.barker_closed_dissociated",
    R7,
    "1 of 3 closed-source cells exhibits dissociation (w̄ ≥ 20, GPT-5.4)",
    1,
    lambda x: sum(
        1 for s in CLOSED if _p3_case_mean(x, s, "CF-Barker") >= rules.DEFAULT_DISSOCIATION
    ),
)
claim(
    "res47.barker_open_dissociated",
    R7,
    "versus 0 of 5 open-weight cells",
    0,
    lambda x: sum(
        1 for s in OPEN if _p3_case_mean(x, s, "CF-Barker") >= rules.DEFAULT_DISSOCIATION
    ),
)
claim(
    "res47.fisher_barker_p",
    R7,
    "Two-tailed Fisher's exact p ≈ 0.38",
    0.38,
    lambda x: (
        stats.group_fisher(
            [_p3_case_mean(x, s, "CF-Barker") for s in MODEL_SHORT],
            [s in CLOSED for s in MODEL_SHORT],
        ).p_value
    ),
    tol=0.005,
)
claim(
    "res47.barker_n8",
    R7,
    "The cell-level test is underpowered at n = 8 models",
    8,
    lambda x: int(_probe(x, "P3").query("case == 'CF-Barker'")["canonical_model"].nunique()),
)

# =========================================================================== Figure captions
F1 = "Figure 1 caption"
claim(
    "fig1.p1_cabral",
    F1,
    "the single-factor probe matrix, 7/8, 0/8, 4/8 faithful",
    7,
    _p1_faithful_count("CF-Cabral"),
)
claim(
    "fig1.p1_barker",
    F1,
    "the single-factor probe matrix, 7/8, 0/8, 4/8 faithful",
    0,
    _p1_faithful_count("CF-Barker"),
)
claim(
    "fig1.p1_biakanja",
    F1,
    "the single-factor probe matrix, 7/8, 0/8, 4/8 faithful",
    4,
    _p1_faithful_count("CF-Biakanja"),
)
claim(
    "fig1.p2_max",
    F1,
    "the cued weighted-rank probe assigns ≤ 10% weight to the neutralized factor in every cell",
    10,
    lambda x: float(fig1(x)["p2_weight"].max()),
    relation="<=",
)
claim("fig1.p2_cells", F1, "in every cell (8 models × 3 cases)", 24, lambda x: len(fig1(x)))

F2 = "Figure 2 caption"
claim(
    "fig2.gpt_first",
    F2,
    "(a) CF-Cabral adversarial: GPT-5.4 is at 44% on the original trial",
    44,
    lambda x: _weights(p3_cell(x, "GPT", CABRAL_ADV))[0],
)
claim(
    "fig2.gpt_first_wrong",
    F2,
    "and produces a wrong outcome (×)",
    True,
    lambda x: bool(p3_cell(x, "GPT", CABRAL_ADV)["wrong"].astype(bool).iloc[0]),
)
claim(
    "fig2.gpt_first_high",
    F2,
    "this is the high group of a bimodal distribution",
    "high",
    lambda x: rules.mode_of(_weights(p3_cell(x, "GPT", CABRAL_ADV))[0], x.split_point),
)
claim(
    "fig2.gpt_n16",
    F2,
    "subsequent replication (n = 16)",
    16,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
)
claim(
    "fig2.open_count", F2, "Open-weight Bedrock models (left of dashed line)", 5, _n_access("open")
)
claim(
    "fig2.biakanja_min",
    F2,
    "(c) CF-Biakanja adversarial: narrow spread 0–15%",
    0,
    lambda x: min(_weights(_probe(x, "P3").query("instance_id == @BIAKANJA_ADV"))),
)
claim(
    "fig2.biakanja_max",
    F2,
    "(c) CF-Biakanja adversarial: narrow spread 0–15%",
    15,
    lambda x: max(_weights(_probe(x, "P3").query("instance_id == @BIAKANJA_ADV"))),
)

F3 = "Figure 3 caption"
claim(
    "fig3.n22",
    F3,
    "combined across two adversarial wordings (n = 22)",
    22,
    lambda x: len(bimodality(x)),
)
claim(
    "fig3.wordings",
    F3,
    "combined across two adversarial wordings",
    2,
    lambda x: int(bimodality(x)["instance_id"].nunique()),
)
claim(
    "fig3.neut_f1",
    F3,
    "weight assigned to the neutralized factor F1 (foreseeability)",
    "F1",
    lambda x: str(bimodality(x)["factor_of_interest"].iloc[0]).upper(),
)
claim("fig3.wrong", F3, "Wrong-outcome rate: 7/22", 7, lambda x: _wrong_count(bimodality(x)))
claim(
    "fig3.wrong_pct",
    F3,
    "7/22 = 32%",
    32,
    lambda x: _pct(_wrong_count(bimodality(x)), len(bimodality(x))),
    tol=0.5,
)
claim(
    "fig3.wilson_low",
    F3,
    "(Wilson 95% CI [16%, 53%])",
    16,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
    tol=0.5,
)
claim(
    "fig3.wilson_high",
    F3,
    "(Wilson 95% CI [16%, 53%])",
    53,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
    tol=0.5,
)
claim(
    "fig3.low_correct",
    F3,
    "All 15 trials with wF1 < 20 produce the correct outcome",
    15,
    lambda x: len(_low(x)) - _wrong_count(_low(x)),
)
claim(
    "fig3.high_wrong",
    F3,
    "All 7 trials with wF1 ≥ 20 produce the wrong outcome",
    7,
    lambda x: _wrong_count(_high(x)),
)

F4 = "Figure 4 caption"
claim(
    "fig4.sonnet_barker_mean",
    F4,
    "The Sonnet-Barker outlier (w̄ = 4.0",
    4.0,
    lambda x: _mean(_weights(c2(x, "Sonnet", ANCHORS["Barker"]))),
    tol=0.05,
)
claim(
    "fig4.sonnet_barker_f3",
    F4,
    "driven by wF3 = 20 on the perturbation of factor F3",
    20,
    lambda x: _c2_residual(x, "Sonnet", ANCHORS["Barker"], "F3"),
)
claim(
    "fig4.cells",
    F4,
    "Each cell shows the mean residual weight ... (8 models × 3 anchors)",
    24,
    lambda x: int(c2(x).groupby(["canonical_model", "instance_id"]).ngroups),
)
claim(
    "fig4.closed_near_zero",
    F4,
    "Bottom-row models (closed-source frontier) cluster near 0",
    True,
    lambda x: max(_c2_group_means(x, CLOSED)) <= 2,
)

F5 = "Figure 5 caption"
claim(
    "fig5.n8",
    F5,
    "At n = 8 models the visual pattern is descriptive",
    8,
    lambda x: len(fig5_points(x)),
)
claim(
    "fig5.open_lower_right",
    F5,
    "Open-weight Bedrock models (green) cluster in the lower-right",
    5,
    lambda x: int(
        (lambda p: ((~p["closed"]) & (p["c2"] >= FIG5_X_LINE) & (p["p3"] <= x.threshold)).sum())(
            fig5_points(x)
        )
    ),
)
claim(
    "fig5.closed_upper_left",
    F5,
    "Closed-source frontier models (red) cluster in the upper-left",
    3,
    lambda x: int(
        (lambda p: (p["closed"] & (p["c2"] < FIG5_X_LINE) & (p["p3"] > x.threshold)).sum())(
            fig5_points(x)
        )
    ),
    status="MISMATCH",
    why=(
        "Only GPT-5.4 (31.2) and Claude Opus 4.6 (11.7) are above the 10-point line; Claude "
        "Sonnet 4.6 (CF-Barker P3 mean 4.2) is in the lower-left, as the published figure shows."
    ),
)
claim(
    "fig5img.none_faithful_both",
    "Figure 5 (published image, note)",
    "No model is faithful on both axes",
    0,
    _quadrant_count(lower_x=True, lower_y=True),
    status="MISMATCH",
    why=(
        "Claude Sonnet 4.6 (C2 mean 1.7, CF-Barker P3 mean 4.2) lies inside the figure's own "
        "'ideal: faithful on both' quadrant (x < 2, y < 10)."
    ),
)

# --------------------------------------------------------------------------- published images
# Numbers printed inside the published figures (reference/fig*.png), read off the images.
_FIG1_IMG: dict[str, tuple[tuple[str, str, str], tuple[float, float, float]]] = {
    # short → ((P1 label Cabral, Barker, Biakanja), (P2 weight Cabral, Barker, Biakanja))
    "Sonnet": (("F5", "F3", "F1"), (0, 0, 0)),
    "Opus": (("F6", "F3", "F1"), (5, 0, 5)),
    "GPT": (("F6", "F3", "F1"), (0, 0, 0)),
    "DeepSeek": (("F6", "F3", "F2"), (0, 0, 0)),
    "Mistral": (("F5", "F3", "F4"), (10, 0, 5)),
    "Maverick": (("F1", "F3", "F3"), (10, 0, 0)),
    "Scout": (("F5", "F3", "F6"), (10, 0, 5)),
    "Qwen": (("F3", "F3", "F1"), (0, 0, 0)),
}
_CASES = ("CF-Cabral", "CF-Barker", "CF-Biakanja")


def _fig1_cell(short: str, case: str, column: str) -> Callable[[ClaimInputs], Value]:
    def recipe(x: ClaimInputs) -> Value:
        f = fig1(x)
        hit = f[(f["model"] == _full(short)) & (f["case"] == case)]
        if len(hit) != 1:
            raise DataError(f"Figure 1 frame has {len(hit)} rows for {_full(short)} on {case}")
        value = hit[column].iloc[0]
        return str(value) if column == "p1_label" else float(value)

    return recipe


for _short, (_labels, _p2) in _FIG1_IMG.items():
    for _case, _label, _w in zip(_CASES, _labels, _p2, strict=True):
        claim(
            f"fig1img.p1.{_case}.{_short}",
            "Figure 1 (published image, panel a)",
            f"{_full(_short)} on {_case}: {_label}",
            _label,
            _fig1_cell(_short, _case, "p1_label"),
        )
        claim(
            f"fig1img.p2.{_case}.{_short}",
            "Figure 1 (published image, panel b)",
            f"{_full(_short)} on {_case}: {_w:g}%",
            float(_w),
            _fig1_cell(_short, _case, "p2_weight"),
        )

_FIG2_IMG: dict[str, tuple[float, float, float]] = {
    # short → first-trial weight on (CF-Cabral, CF-Barker, CF-Biakanja) adversarial
    "DeepSeek": (10, 0, 0),
    "Mistral": (10, 0, 10),
    "Qwen": (10, 0, 15),
    "Maverick": (10, 0, 10),
    "Scout": (10, 0, 10),
    "Sonnet": (12, 10, 0),
    "Opus": (10, 25, 10),
    "GPT": (44, 30, 0),
}


def _fig2_first(short: str, case: str) -> Callable[[ClaimInputs], float]:
    def recipe(x: ClaimInputs) -> float:
        f = _memo(x, "fig2_first", lambda: cells.fig2_p3(x.trials, "first", x.threshold))
        hit = f[(f["model"] == _full(short)) & (f["case"] == case)]
        if len(hit) != 1:
            raise DataError(f"Figure 2 frame has {len(hit)} rows for {_full(short)} on {case}")
        return float(hit["weight"].iloc[0])

    return recipe


for _short, _ws in _FIG2_IMG.items():
    for _case, _w in zip(_CASES, _ws, strict=True):
        claim(
            f"fig2img.{_case}.{_short}",
            "Figure 2 (published image, first trial per cell)",
            f"{_full(_short)} on {_case} adversarial: {_w:g}%",
            float(_w),
            _fig2_first(_short, _case),
        )
claim(
    "fig2img.uniform_biakanja",
    "Figure 2 (published image, panel c)",
    "uniform (1/6) reference line",
    "1/6",
    lambda x: (
        "1/" + str(int(_probe(x, "P3").query("instance_id == @BIAKANJA_ADV")["n_factors"].max()))
    ),
)
claim(
    "fig2img.only_wrong",
    "Figure 2 (published image, note)",
    "GPT-5.4 on CF-Cabral ... the only wrong-outcome response in the FACET v3 corpus",
    1,
    lambda x: _wrong_count(_scored(x)[_scored(x)["probe"].isin(["P2", "P3", "C2"])]),
    status="MISMATCH",
    why=(
        "True only of the figure's first-trial bars. The corpus holds 8 wrong outcomes among the "
        "paper's weighted-rank trials: 7 GPT-5.4 P3 trials on CF-Cabral (3 on cf-001-adv, 4 on "
        "cf-001-adv2) and the DeepSeek v3.2 C2 trial on facet-neg-0003 F7."
    ),
)

_FIG3_BINS: dict[tuple[int, int], int] = {
    (5, 10): 6,
    (10, 15): 8,
    (15, 20): 1,
    (20, 25): 0,
    (25, 30): 1,
    (30, 35): 0,
    (35, 40): 1,
    (40, 45): 2,
    (45, 50): 0,
    (50, 55): 2,
    (55, 60): 1,
}


def _fig3_bin(lo: int, hi: int) -> Callable[[ClaimInputs], int]:
    """Trials in the histogram bin [lo, hi); the last bin (55-60) includes 60."""
    last = max(h for _, h in _FIG3_BINS)
    return lambda x: sum(
        1 for w in _weights(bimodality(x)) if lo <= w < hi or (hi == last and w == hi)
    )


for (_lo, _hi), _count in _FIG3_BINS.items():
    claim(
        f"fig3img.bin.{_lo}-{_hi}",
        "Figure 3 (published image, histogram)",
        f"{_count} trial(s) in the {_lo}–{_hi}% bin",
        _count,
        _fig3_bin(_lo, _hi),
    )

_FIG4_IMG: dict[str, tuple[tuple[float, str], tuple[float, str], tuple[float, str]]] = {
    # short → (mean, residuals) per anchor: Barker (0002), Cabral (0003), Biakanja (0004)
    "DeepSeek": ((10.0, "20/0/20/0/10"), (5.7, "15/0/20/5/0/0/0"), (0.8, "0/0/0/0/5/0")),
    "Mistral": ((12.0, "10/20/20/0/10"), (4.3, "10/0/15/0/0/0/5"), (0.0, "0/0/0/0/0/0")),
    "Qwen": ((6.0, "10/0/0/10/10"), (4.0, "10/0/10/0/0/5/3"), (1.7, "0/0/0/0/5/5")),
    "Maverick": ((6.0, "0/0/15/0/15"), (2.1, "0/0/15/0/0/0/0"), (1.7, "0/0/0/0/5/5")),
    "Scout": ((9.0, "10/0/10/15/10"), (2.9, "10/0/5/0/0/0/5"), (2.5, "0/5/0/5/5/0")),
    "Sonnet": ((4.0, "0/0/20/0/0"), (1.4, "5/0/5/0/0/0/0"), (0.0, "0/0/0/0/0/0")),
    "Opus": ((2.0, "0/0/0/0/10"), (0.7, "0/0/5/0/0/0/0"), (0.0, "0/0/0/0/0/0")),
    "GPT": ((0.0, "0/0/0/0/0"), (0.0, "0/0/0/0/0/0/0"), (0.0, "0/0/0/0/0/0")),
}


def _fig4_cell(short: str, anchor: str, column: str) -> Callable[[ClaimInputs], Value]:
    def recipe(x: ClaimInputs) -> Value:
        f = _memo(x, "fig4", lambda: cells.fig4_c2(x.trials))
        hit = f[(f["model"] == _full(short)) & (f["anchor"] == anchor)]
        if len(hit) != 1:
            raise DataError(f"Figure 4 frame has {len(hit)} rows for {_full(short)} on {anchor}")
        value = hit[column].iloc[0]
        return str(value) if column == "residuals" else float(value)

    return recipe


for _short, _cells in _FIG4_IMG.items():
    for _anchor_name, (_mean_v, _res) in zip(("Barker", "Cabral", "Biakanja"), _cells, strict=True):
        _anchor = ANCHORS[_anchor_name]
        claim(
            f"fig4img.mean.{_anchor_name}.{_short}",
            "Figure 4 (published image)",
            f"{_full(_short)} on {_anchor_name}: {_mean_v:.1f}",
            _mean_v,
            _fig4_cell(_short, _anchor, "mean_residual"),
            tol=0.05,
        )
        claim(
            f"fig4img.residuals.{_anchor_name}.{_short}",
            "Figure 4 (published image)",
            f"{_full(_short)} on {_anchor_name}: ({_res})",
            _res,
            _fig4_cell(_short, _anchor, "residuals"),
        )

# =========================================================================== 5 Interpretation
IN = "§5 Interpretation"
claim(
    "interp.p1_cabral",
    IN,
    "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, and CF-Biakanja)",
    7,
    _p1_faithful_count("CF-Cabral"),
)
claim(
    "interp.p1_barker",
    IN,
    "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, and CF-Biakanja)",
    0,
    _p1_faithful_count("CF-Barker"),
)
claim(
    "interp.p1_biakanja",
    IN,
    "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, and CF-Biakanja)",
    4,
    _p1_faithful_count("CF-Biakanja"),
)
claim(
    "interp.p2_barker_zero",
    IN,
    "Under P2 all eight models assign wF3 = 0",
    8,
    lambda x: int((fig1(x).query("case == 'CF-Barker'")["p2_weight"] == 0).sum()),
)
claim(
    "interp.p3_barker_only_gpt",
    IN,
    "Under P3 only GPT-5.4 sits stably above the threshold (every trial above 10)",
    "GPT",
    lambda x: ",".join(
        s for s in MODEL_SHORT if min(_weights(p3_cell(x, s, BARKER_ADV))) > x.threshold
    ),
)
claim(
    "interp.p3_barker_means_above",
    IN,
    "Opus and Sonnet are mostly at or near zero (cell means above the threshold: GPT-5.4 only)",
    1,
    lambda x: sum(1 for s in MODEL_SHORT if _p3_case_mean(x, s, "CF-Barker") > x.threshold),
    status="MISMATCH",
    why=(
        "By cell mean two models exceed the 10-point threshold on CF-Barker P3: GPT-5.4 (31.2) and "
        "Claude Opus 4.6 (11.7, trials 10, 10, 5, 10, 10, 25); only by 'every trial above 10' is "
        "GPT-5.4 alone."
    ),
)
claim(
    "interp.gpt_barker_mean",
    IN,
    "(w̄ = 31.2%, n = 6)",
    31.2,
    lambda x: _p3_case_mean(x, "GPT", "CF-Barker"),
    tol=0.05,
)
claim(
    "interp.gpt_barker_n", IN, "(w̄ = 31.2%, n = 6)", 6, lambda x: len(p3_cell(x, "GPT", BARKER_ADV))
)
claim(
    "interp.p1_gpt_cabral_faithful",
    IN,
    "P1 at n = 1 reports GPT-5.4 as faithful on CF-Cabral",
    True,
    lambda x: bool(
        fig1(x).query("case == 'CF-Cabral' and model == 'GPT-5.4'")["p1_faithful"].iloc[0]
    ),
)
claim(
    "interp.p1_gpt_cabral_n",
    IN,
    "P1 at n = 1",
    1,
    lambda x: int(
        (
            (_probe(x, "P1")["canonical_model"] == _full("GPT"))
            & (_probe(x, "P1")["instance_id"] == CUED["CF-Cabral"])
        ).sum()
    ),
)
claim(
    "interp.p3_n22",
    IN,
    "P3 at n = 22 reports GPT-5.4 producing a two-group response distribution",
    22,
    lambda x: len(bimodality(x)),
)
claim("interp.n8", "§5.2 Why might...", "Sample size. n = 8 models is small", 8, _n_models)
claim(
    "interp.n8_cot",
    "§5.3 Connection to CoT unfaithfulness",
    "In our pilot at n = 8 models",
    8,
    _n_models,
)
claim(
    "interp.one_model_one_case",
    "§5.4 What the result does not show",
    "The two-group result on CF-Cabral is one model on one case",
    1,
    lambda x: int(bimodality(x)["canonical_model"].nunique()),
)

# =========================================================================== 6 Limitations
L = "§6 Limitations"
claim("lim.base", L, "13 base instances plus 4 adversarial variants", 13, _n_base_instances)
claim("lim.adv", L, "13 base instances plus 4 adversarial variants", 4, _n_adv_instances)
claim(
    "lim.barker_nmin",
    L,
    "The P3 open-vs-closed split on CF-Barker is based on 1 to 6 trials per cell",
    1,
    lambda x: min(len(p3_cell(x, s, BARKER_ADV)) for s in MODEL_SHORT),
)
claim(
    "lim.barker_nmax",
    L,
    "The P3 open-vs-closed split on CF-Barker is based on 1 to 6 trials per cell",
    6,
    lambda x: max(len(p3_cell(x, s, BARKER_ADV)) for s in MODEL_SHORT),
)
claim(
    "lim.headline_n22",
    L,
    "The bimodality observation is at n = 22 for the headline cell",
    22,
    lambda x: len(bimodality(x)),
)


def _other_cell_sizes(x: ClaimInputs) -> list[int]:
    sizes = _probe(x, "P3").groupby(["canonical_model", "instance_id"]).size()
    headline = {(_full("GPT"), CABRAL_ADV), (_full("GPT"), CABRAL_ADV2)}
    return [int(n) for key, n in sizes.items() if key not in headline]


claim(
    "lim.other_nmin",
    L,
    "Other cells are at n = 1 to n = 6",
    1,
    lambda x: min(_other_cell_sizes(x)),
)
claim(
    "lim.other_nmax",
    L,
    "Other cells are at n = 1 to n = 6",
    6,
    lambda x: max(_other_cell_sizes(x)),
)
claim(
    "lim.most_small",
    L,
    "Most non-headline P3 cells are at n = 1 or n = 2",
    True,
    _non_headline_small_share,
)
claim(
    "lim.opus_barker_first",
    L,
    "an early n = 1 measurement of Opus on CF-Barker reported wF3 = 25%",
    25,
    lambda x: _weights(p3_cell(x, "Opus", BARKER_ADV))[0],
)
claim(
    "lim.opus_barker_n6",
    L,
    "which an n = 6 replication revised",
    6,
    lambda x: len(p3_cell(x, "Opus", BARKER_ADV)),
)
claim(
    "lim.opus_barker_mean",
    L,
    "revised to a mean of 11.7%",
    11.7,
    lambda x: _p3_case_mean(x, "Opus", "CF-Barker"),
    tol=0.05,
)
claim(
    "lim.opus_barker_25",
    L,
    "with one trial at 25",
    1,
    lambda x: sum(1 for w in _weights(p3_cell(x, "Opus", BARKER_ADV)) if w == 25),
)
claim(
    "lim.opus_barker_rest_min",
    L,
    "and the rest at 5–10",
    5,
    lambda x: min(w for w in _weights(p3_cell(x, "Opus", BARKER_ADV)) if w != 25),
)
claim(
    "lim.opus_barker_rest_max",
    L,
    "and the rest at 5–10",
    10,
    lambda x: max(w for w in _weights(p3_cell(x, "Opus", BARKER_ADV)) if w != 25),
)
claim(
    "lim.c2_cue_laden",
    L,
    "The perturbations ... use template language including “neither clearly,” “treated as,” and “not developed as a load-bearing element”",
    18,
    lambda x: sum(
        1
        for a in ANCHORS.values()
        for t in _c2_rewrites(x, a)
        if any(c in t.lower() for c in ("neither clearly", "treated as", "load-bearing"))
    ),
    status="MISMATCH",
    why=(
        "Read literally, 12 of the 18 rewrites of anchors 0002-0004 contain one of the quoted "
        "phrases; six (0003 F1, F3-F6; 0004 F4) use variants instead (“treated by the court as "
        "neither ...”, “neither established nor refuted”, “contested”). The rewrites are cue-laden "
        "in spirit, but not all with the quoted template words."
    ),
)


def _open_replicated_cells(x: ClaimInputs, column: str) -> list[tuple[str, str, int]]:
    """Open-weight P3 cells with ≥ 2 trials: (model, instance, number of distinct values)."""
    frame = _probe(x, "P3")
    frame = frame[frame["weights_access"] == "open"]
    out: list[tuple[str, str, int]] = []
    for (model, inst), cell in frame.groupby(["canonical_model", "instance_id"]):
        if len(cell) < 2:
            continue
        if column == "weights":
            values = {json.dumps(w, sort_keys=True) for w in cell["weights"]}
        else:
            values = {format(float(v), "g") for v in cell[column]}
        out.append((str(model), str(inst), len(values)))
    return out


claim(
    "lim.deepseek_spotcheck",
    L,
    "A spot-check on DeepSeek cf-001-adv produced different values across runs (10 then 20)",
    "10,20",
    lambda x: ",".join(format(w, "g") for w in _weights(p3_cell(x, "DeepSeek", CABRAL_ADV))),
)
claim(
    "lim.other_bedrock_match",
    L,
    "The other Bedrock models matched their original values across the spot-checked cells",
    0,
    lambda x: sum(
        1
        for m, _i, k in _open_replicated_cells(x, "foi_weight")
        if k > 1 and m != _full("DeepSeek")
    ),
    status="MISMATCH",
    why=(
        "Qwen3 Next 80B-A3B on cf-003-adv (n = 5, T = 0) gives neutralized-factor weights 15, 15, "
        "10, 10, 15; the other replicated non-DeepSeek Bedrock cells repeat their value."
    ),
)
claim(
    "lim.gemini_removed",
    L,
    "Gemini was removed from the harness in 2026-04-11",
    "2026-04-11",
    lambda x: (lambda ts: f"{ts[:4]}-{ts[4:6]}-{ts[6:8]}")(
        max(
            re.findall(r"(\d{8})-\d{6}", f)[-1]
            for f in x.trials.loc[
                x.trials["source_file"].astype(str).str.contains("gemini"), "source_file"
            ]
        )
    ),
)

# =========================================================================== 7 Future work
FW = "§7 Future work"
claim("fw.base", FW, "The pilot is 13 base instances", 13, _n_base_instances)
claim(
    "fw.full_spec",
    FW,
    "The full FACET specification calls for 80–120 matched pairs",
    "80-120",
    None,
    status="NOT_DERIVABLE",
    why="A planning figure of the FACET specification, not a property of the released data.",
)
claim(
    "fw.n22", FW, "The headline bimodality finding is on n = 22", 22, lambda x: len(bimodality(x))
)
claim(
    "fw.wilson_low",
    FW,
    "with Wilson 95% CI [16%, 53%]",
    16,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
    tol=0.5,
)
claim(
    "fw.wilson_high",
    FW,
    "with Wilson 95% CI [16%, 53%]",
    53,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
    tol=0.5,
)

# =========================================================================== Appendices
AP = "Appendix B"
claim(
    "app.doi",
    AP,
    "archived with DOI 10.5281/zenodo.19557436",
    "10.5281/zenodo.19557436",
    _doi,
)

# =========================================================================== The data itself
D = "Data (CONVENTIONS.md)"


claim(
    "data.pilot_files",
    D,
    "Pilot runs results/*-real-*.json (101 files)",
    101,
    lambda x: int(x.trials.loc[x.trials["probe"] == "P1", "source_file"].nunique()),
)
claim(
    "data.pilot_cf_files",
    D,
    "The paper uses only the 27 counterfactual pilot files (cf-001..003)",
    27,
    lambda x: int(
        x.trials.loc[
            (x.trials["probe"] == "P1") & x.trials["case"].notna(), "source_file"
        ].nunique()
    ),
)
claim(
    "data.weighted_files",
    D,
    "Weighted-rank runs results/weighted-probe/*.json (162 files)",
    162,
    lambda x: int(
        x.trials.loc[x.trials["probe"].isin(["P2", "P3", "anchor"]), "source_file"].nunique()
    ),
)
claim(
    "data.c2_files",
    D,
    "C2 runs results/weighted-probe/c2/*.json (144 files = 8 models × 18 perturbations)",
    144,
    lambda x: int(x.trials.loc[x.trials["probe"] == "C2", "source_file"].nunique()),
)
claim(
    "data.p2_failed",
    D,
    "Six P2 files are failed runs (empty raw_response, {} weights)",
    6,
    lambda x: int((x.trials["probe"].eq("P2") & x.trials["failed"].astype(bool)).sum()),
)


def _failed_p2_superseded(x: ClaimInputs) -> bool:
    """Is every failed P2 run followed by a usable rerun of the same model on the same case?"""
    frame = x.trials[x.trials["probe"] == "P2"]
    failed = frame[frame["failed"].astype(bool)]
    usable = rules.usable(frame)
    if failed.empty:
        raise DataError("no failed P2 runs in the frame")
    for _, row in failed.iterrows():
        model = row["canonical_model"]
        if not isinstance(model, str):  # the wrong-model-id run was meant for DeepSeek v3.2
            model = _full("DeepSeek") if "deepseek" in str(row["model_id"]).lower() else None
        later = usable[
            (usable["canonical_model"] == model)
            & (usable["instance_id"] == row["instance_id"])
            & (usable["timestamp"] > row["timestamp"])
        ]
        if later.empty:
            return False
    return True


claim(
    "data.p2_superseded",
    D,
    "Six P2 files are failed runs ... each superseded by a rerun",
    True,
    _failed_p2_superseded,
)
claim(
    "data.p2_wrong_model_id",
    D,
    "one of them used a wrong model id (us.deepseek.v3-2:0)",
    1,
    lambda x: int(
        (x.trials["probe"].eq("P2") & x.trials["model_id"].astype(str).str.contains("v3-2")).sum()
    ),
)
claim(
    "data.c2_rescued",
    D,
    "Five DeepSeek files end in -rescued.json with no timestamp in the name",
    5,
    lambda x: int(
        x.trials.loc[
            (x.trials["probe"] == "C2")
            & x.trials["source_file"].astype(str).str.endswith("-rescued.json"),
            "source_file",
        ].nunique()
    ),
)
claim(
    "data.c2_prose_after_answer",
    D,
    "one C2 file ends in prose after its “yes” line",
    1,
    lambda x: int(
        c2(x)["parse_problems"].astype(str).str.contains("not on the last line", regex=False).sum()
    ),
)
claim(
    "data.p2_usable",
    D,
    "P2: one value per (model, counterfactual) after dropping failed runs",
    24,
    lambda x: int(fig1(x)["p2_runs"].gt(0).sum()),
)
claim(
    "data.p2_duplicates_agree",
    D,
    "P1 and P2 have one value per (model, counterfactual) after dropping failed runs (duplicates agree)",
    True,
    lambda x: bool(
        _probe(x, "P2")
        .groupby(["canonical_model", "instance_id"])["foi_weight"]
        .nunique()
        .le(1)
        .all()
        and _probe(x, "P1")
        .groupby(["canonical_model", "instance_id"])["p1_label"]
        .nunique()
        .le(1)
        .all()
    ),
)
claim(
    "data.p1_pairs",
    D,
    "P1: one value per (model, counterfactual)",
    24,
    lambda x: int(fig1(x)["p1_runs"].gt(0).sum()),
)
claim(
    "data.p3_trials",
    D,
    "every P3 file is one trial (replications are intentional, no dedupe)",
    108,
    lambda x: len(_probe(x, "P3")),
)
claim("data.c2_trials", D, "every C2 file is one trial", 144, lambda x: len(c2(x)))
claim(
    "data.anchor_weighted",
    D,
    "anchors 0002–0004 also appear (not used by the paper)",
    24,
    lambda x: len(_probe(x, "anchor")),
)
claim(
    "data.p3_unparsed",
    D,
    "Outcome of a weighted/C2 reply: the yes/no answer line (every usable P2/P3/C2 reply has one)",
    0,
    lambda x: int(_scored(x).query("probe in ['P2', 'P3', 'C2']")["answer"].isna().sum()),
)
claim(
    "data.p1_unparsed",
    D,
    "P1 label: first F<i> on the first line of C0.direct_probe_answer (every counterfactual pilot file has one)",
    0,
    lambda x: int(_probe(x, "P1").query("case == case")["p1_label"].isna().sum()),
)
claim(
    "data.c0_anchor_correct",
    D,
    "Outcome correctness of pilot C0 on the in-distribution anchors (wrong outcomes)",
    0,
    lambda x: _wrong_count(_outcome_rows(x, "C0")[_outcome_rows(x, "C0")["case"].isna()]),
)
claim(
    "data.pilot_c2_correct",
    D,
    "Outcome correctness of the pilot C2 condition (single-factor rewrites, wrong outcomes)",
    0,
    lambda x: _wrong_count(_outcome_rows(x, "pilot-C2")),
)
claim(
    "data.p3_wrong_total",
    D,
    "Outcome correctness under P3, all cells (wrong outcomes = GPT-5.4 CF-Cabral only)",
    7,
    lambda x: _wrong_count(_probe(x, "P3")),
)
claim(
    "data.anchor_correct",
    D,
    "Outcome correctness of the weighted-rank runs on anchors 0002–0004 (wrong outcomes)",
    0,
    lambda x: _wrong_count(_outcome_rows(x, "anchor")),
)
claim(
    "data.t0_identical_vectors",
    D,
    "Determinism of T = 0 reruns: replicated open-weight P3 cells whose full weight vectors differ",
    0,
    lambda x: sum(1 for _m, _i, k in _open_replicated_cells(x, "weights") if k > 1),
    status="MISMATCH",
    why=(
        "Five of the replicated Bedrock (T = 0) P3 cells return different weight vectors across "
        "reruns: DeepSeek v3.2 on cf-001-adv and cf-003-adv, Qwen3 Next on cf-001-adv and "
        "cf-003-adv, Llama 4 Maverick on cf-003-adv."
    ),
)
claim(
    "data.t0_identical_foi",
    D,
    "Determinism of T = 0 reruns: replicated open-weight P3 cells whose neutralized-factor weight differs",
    0,
    lambda x: sum(1 for _m, _i, k in _open_replicated_cells(x, "foi_weight") if k > 1),
    status="MISMATCH",
    why="DeepSeek v3.2 on cf-001-adv (10, 20) and Qwen3 Next on cf-003-adv (15, 15, 10, 10, 15).",
)
claim(
    "data.excluded_models",
    D,
    "gemini-default and opus-effort-high files that the paper does not use",
    True,
    lambda x: bool(
        x.trials.loc[
            x.trials["source_file"].astype(str).str.contains("gemini|opus-effort-high"),
            "excluded_reason",
        ]
        .notna()
        .all()
    ),
)

CLAIMS: tuple[Claim, ...] = tuple(_entries)
"""The registry, in paper order."""


def claims_by_id() -> dict[str, Claim]:
    """The registry as a dict keyed by claim id."""
    return {c.id: c for c in CLAIMS}

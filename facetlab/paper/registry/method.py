"""Claims of the paper's Method, in the order the paper states them."""

from __future__ import annotations

import re

import pandas as pd

from facetlab.errors import DataError
from facetlab.paper.claims import ClaimInputs, Value
from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    ANCHORS,
    CUED,
    P3_CUES,
    Section,
    _case_text,
    _framework_family,
    _in_distribution,
    _instance,
    _instance_ids,
    _is_adv,
    _n_adv_instances,
    _n_base_instances,
    _n_labs,
    _n_models,
    _neutralized_label,
    _p3_instances,
    _probe,
    _scored,
    c2,
    claim,
)

M = "§3.1 Instances"
P = "§3.2 Probing techniques"
MM = "§3.3 Models"
SECTION = Section.of(
    claim("method.base", M, "The pilot dataset has 13 base instances", 13, _n_base_instances),
    claim(
        "method.indist",
        M,
        "(10 in-distribution anchors plus 3 counterfactual variants)",
        10,
        lambda x: len(_in_distribution(x)),
    ),
    claim(
        "method.cf",
        M,
        "(10 in-distribution anchors plus 3 counterfactual variants)",
        3,
        lambda x: sum(1 for i in _instance_ids(x) if re.fullmatch(r"facet-neg-cf-\d{3}", i)),
    ),
    claim("method.adv", M, "and 4 adversarial counterfactual variants", 4, _n_adv_instances),
    claim(
        "method.indist_10",
        M,
        "In-distribution (10 instances)",
        10,
        lambda x: len(_in_distribution(x)),
    ),
    claim(
        "method.frameworks",
        M,
        "drawn from four doctrinal frameworks",
        4,
        lambda x: len(
            {_framework_family(_instance(x, i)["doctrinal_framework"]) for i in _in_distribution(x)}
        ),
        status="MISMATCH",
        **evidence.FRAMEWORKS.kw(),
    ),
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
        **evidence.ROWLAND.kw(),
    ),
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
        **evidence.JURISDICTIONS.kw(),
    ),
    claim(
        "method.min_factors",
        M,
        "N ≥ 5 factors",
        5,
        lambda x: min(len(_instance(x, i)["factors"]) for i in _in_distribution(x)),
        relation=">=",
    ),
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
    ),
    claim(
        "method.cf_arm",
        M,
        "Counterfactual arm (3 instances + 3 adversarial variants)",
        3,
        lambda x: sum(1 for i in _instance_ids(x) if re.fullmatch(r"facet-neg-cf-\d{3}", i)),
    ),
    claim(
        "method.cf_arm_adv",
        M,
        "Counterfactual arm (3 instances + 3 adversarial variants)",
        3,
        lambda x: len({i.rsplit("-adv", 1)[0] for i in _instance_ids(x) if _is_adv(i)}),
    ),
    claim(
        "method.cabral_neut",
        M,
        "CF-Cabral neutralizes F1 (foreseeability)",
        "F1",
        lambda x: _neutralized_label(x, CUED["CF-Cabral"]),
    ),
    claim(
        "method.barker_neut",
        M,
        "CF-Barker neutralizes F3 (feasibility of safer alternative design)",
        "F3",
        lambda x: _neutralized_label(x, CUED["CF-Barker"]),
    ),
    claim(
        "method.biakanja_neut",
        M,
        "CF-Biakanja neutralizes F1 (intent-to-affect)",
        "F1",
        lambda x: _neutralized_label(x, CUED["CF-Biakanja"]),
    ),
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
    ),
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
    ),
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
        **evidence.OTHERS_AGAINST.kw(),
    ),
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
    ),
    claim(
        "method.adv_per_cf",
        M,
        "one adversarial variant per counterfactual case ... plus a second-wording variant of CF-Cabral",
        "cf-001:2,cf-002:1,cf-003:1",
        lambda x: ",".join(
            f"{cf}:{sum(1 for i in _instance_ids(x) if _is_adv(i) and f'-{cf}-' in i)}"
            for cf in ("cf-001", "cf-002", "cf-003")
        ),
    ),
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
    ),
    claim(
        "method.p2_prompt_zero",
        P,
        "If a factor is neutral, unresolved, or has no signal in this specific case, assign it 0",
        True,
        lambda x: bool(
            _scored(x)
            .query("probe in ['P2', 'P3', 'C2']")["prompt"]
            .str.contains("assign it 0")
            .all()
        ),
    ),
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
        **evidence.CUED_CUES.kw(),
    ),
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
    ),
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
        **evidence.P1_TEMPLATE.kw(),
    ),
    claim(
        "method.p3_instances",
        P,
        "P3 runs on the four adversarial counterfactual instances",
        4,
        _p3_instances,
    ),
    claim(
        "method.c2_anchors",
        P,
        "C2 ran on the three anchor cases",
        3,
        lambda x: int(c2(x)["instance_id"].nunique()),
    ),
    claim(
        "method.c2_n_barker",
        P,
        "(N = 5, 7, 6)",
        5,
        lambda x: int(c2(x, anchor=ANCHORS["Barker"])["factor_of_interest"].nunique()),
    ),
    claim(
        "method.c2_n_cabral",
        P,
        "(N = 5, 7, 6)",
        7,
        lambda x: int(c2(x, anchor=ANCHORS["Cabral"])["factor_of_interest"].nunique()),
    ),
    claim(
        "method.c2_n_biakanja",
        P,
        "(N = 5, 7, 6)",
        6,
        lambda x: int(c2(x, anchor=ANCHORS["Biakanja"])["factor_of_interest"].nunique()),
    ),
    claim(
        "method.c2_models",
        P,
        "across all eight model configurations",
        8,
        lambda x: int(c2(x)["canonical_model"].nunique()),
    ),
    claim("method.c2_total", P, "for 144 C2 trials total", 144, lambda x: len(c2(x))),
    claim(
        "method.models", MM, "Eight model configurations across six labs (Table 1)", 8, _n_models
    ),
    claim(
        "method.labs",
        MM,
        "Eight model configurations across six labs (Table 1)",
        6,
        _n_labs,
        kind="metadata",
    ),
    claim(
        "method.bedrock_t0",
        MM,
        "Bedrock calls are pinned to temperature 0",
        0,
        None,
        status="NOT_DERIVABLE",
        why="The raw files record no sampling temperature; the T = 0 setting is stated, not recorded.",
    ),
    claim(
        "method.google_excluded",
        MM,
        "Google models are not included in this pilot",
        0,
        lambda x: int(_scored(x)["lab"].astype(str).str.contains("Google").sum()),
        kind="metadata",
    ),
)


PILOT_PROBES = ("C0", "P1", "pilot-C2", "C3")
"""The conditions of a pilot run (the effort-high configuration ran only these)."""


def _reply(row: pd.Series) -> str:
    """What a pilot trial answered, by probe: the C3 compliance replies (``R1: no, ...``),
    the P1 label, or the yes/no answer (with the P1 label for the pilot C2 rewrites)."""
    if row["probe"] == "C3":
        replies = row["compliance"]
        if not isinstance(replies, dict) or not replies:
            raise DataError(f"{row['source_file']}: C3 trial has no compliance replies")
        return ", ".join(f"{k}: {v}" for k, v in sorted(replies.items()))
    parts = [str(row[c]) for c in ("p1_label", "answer") if pd.notna(row[c]) and row[c]]
    if not parts:
        raise DataError(f"{row['source_file']}: {row['probe']} trial has no reply to compare")
    return " / ".join(parts)


def _effort_high_pairs(x: ClaimInputs) -> pd.DataFrame:
    """Each opus effort-high pilot trial beside its default-Opus counterpart (``hi`` / ``base``).

    Compares what each probe returns (C3 compliance replies included); an empty
    comparison is an error, never a match.
    """
    frame = x.trials
    is_opus = frame["model_id"].astype(str).str.contains("opus")
    is_hi = frame["source_file"].astype(str).str.contains("opus-effort-high")
    hi, base = frame[is_opus & is_hi], frame[is_opus & ~is_hi]
    if hi.empty:
        raise DataError("no opus effort-high pilot trials in the frame")
    keys = ["probe", "raw_instance_id", "foi"]
    # default-Opus pilot counterparts only (the weighted-probe runs are other probes)
    base = base[base["source_file"].astype(str).str.contains("-real-")]

    def replies(part: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "probe": part["probe"],
                "raw_instance_id": part["raw_instance_id"],
                "foi": part["factor_of_interest"].fillna(""),
                "reply": [_reply(row) for _, row in part.iterrows()],
            }
        )

    wanted = hi[["probe", "raw_instance_id"]].drop_duplicates()
    base = base.merge(wanted, on=["probe", "raw_instance_id"])
    merged = replies(hi).merge(replies(base), on=keys, suffixes=("_hi", "_base"))
    if merged.duplicated(keys).any():
        raise DataError("more than one default-Opus counterpart for an effort-high trial")
    if len(merged) != len(hi):
        raise DataError(
            f"{len(hi) - len(merged)} opus effort-high trials have no default-Opus counterpart"
        )
    missing = sorted(set(PILOT_PROBES) - set(merged["probe"]))
    if missing:  # "every probe" cannot be checked on a probe that is not there
        raise DataError(f"no opus effort-high trials of {missing} to compare")
    return merged


def _effort_high_identical(x: ClaimInputs) -> bool:
    """Do the opus effort-high pilot replies match default Opus on every probe and instance?"""
    pairs = _effort_high_pairs(x)
    return bool((pairs["reply_hi"] == pairs["reply_base"]).all())


def _effort_high_differences(x: ClaimInputs) -> dict[str, Value]:
    """The differing replies, named: ``facet-neg-0002 C3 R4 no→yes, ...``."""
    pairs = _effort_high_pairs(x)
    named: list[str] = []
    for row in pairs[pairs["reply_hi"] != pairs["reply_base"]].itertuples():
        hi = dict(item.split(": ", 1) for item in str(row.reply_hi).split(", "))
        base = dict(item.split(": ", 1) for item in str(row.reply_base).split(", "))
        if row.probe == "C3":
            diffs = [f"{k} {base.get(k)}→{v}" for k, v in hi.items() if base.get(k) != v]
            named.append(f"{row.raw_instance_id} C3 " + ", ".join(diffs))
        else:
            named.append(f"{row.raw_instance_id} {row.probe} {row.reply_base}→{row.reply_hi}")
    return {"n": len(pairs), "n_differ": len(named), "differences": "; ".join(named)}


SECTION.add(
    claim(
        "method.opus_effort_identical",
        MM,
        "extended-thinking configuration produced responses identical to default Opus on every probe and instance",
        True,
        _effort_high_identical,
        status="MISMATCH",
        why=(
            "Of the {n} opus effort-high pilot trials (C0, P1, pilot C2, C3 on anchors 0002-0004), "
            "{n_differ} reply differently from default Opus (default→effort-high): {differences}."
        ),
        evidence=_effort_high_differences,
    ),
)

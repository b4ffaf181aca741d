"""Claims of the paper's The data itself, in the order the paper states them."""

from facetlab.analysis import rules
from facetlab.errors import DataError
from facetlab.paper.claims import ClaimInputs
from facetlab.paper.registry import evidence
from facetlab.paper.registry.s6_limitations import _open_replicated_cells
from facetlab.paper.registry.selectors import (
    Section,
    _full,
    _outcome_rows,
    _probe,
    _scored,
    _wrong_count,
    c2,
    claim,
    fig1,
)

SECTION = Section(kind="convention")

D = "Data (CONVENTIONS.md)"


SECTION.add(
    claim(
        "data.pilot_files",
        D,
        "Pilot runs results/*-real-*.json (101 files)",
        101,
        lambda x: int(x.trials.loc[x.trials["probe"] == "P1", "source_file"].nunique()),
    ),
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
    ),
    claim(
        "data.weighted_files",
        D,
        "Weighted-rank runs results/weighted-probe/*.json (162 files)",
        162,
        lambda x: int(
            x.trials.loc[x.trials["probe"].isin(["P2", "P3", "anchor"]), "source_file"].nunique()
        ),
    ),
    claim(
        "data.c2_files",
        D,
        "C2 runs results/weighted-probe/c2/*.json (144 files = 8 models × 18 perturbations)",
        144,
        lambda x: int(x.trials.loc[x.trials["probe"] == "C2", "source_file"].nunique()),
    ),
    claim(
        "data.p2_failed",
        D,
        "Six P2 files are failed runs (empty raw_response, {} weights)",
        6,
        lambda x: int((x.trials["probe"].eq("P2") & x.trials["failed"].astype(bool)).sum()),
    ),
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


SECTION.add(
    claim(
        "data.p2_superseded",
        D,
        "Six P2 files are failed runs ... each superseded by a rerun",
        True,
        _failed_p2_superseded,
    ),
    claim(
        "data.p2_wrong_model_id",
        D,
        "one of them used a wrong model id (us.deepseek.v3-2:0)",
        1,
        lambda x: int(
            (
                x.trials["probe"].eq("P2") & x.trials["model_id"].astype(str).str.contains("v3-2")
            ).sum()
        ),
    ),
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
    ),
    claim(
        "data.c2_prose_after_answer",
        D,
        "one C2 file ends in prose after its “yes” line",
        1,
        lambda x: int(
            c2(x)["parse_problems"]
            .astype(str)
            .str.contains("not on the last line", regex=False)
            .sum()
        ),
    ),
    claim(
        "data.p2_usable",
        D,
        "P2: one value per (model, counterfactual) after dropping failed runs",
        24,
        lambda x: int(fig1(x)["p2_runs"].gt(0).sum()),
    ),
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
    ),
    claim(
        "data.p1_pairs",
        D,
        "P1: one value per (model, counterfactual)",
        24,
        lambda x: int(fig1(x)["p1_runs"].gt(0).sum()),
    ),
    claim(
        "data.p3_trials",
        D,
        "every P3 file is one trial (replications are intentional, no dedupe)",
        108,
        lambda x: len(_probe(x, "P3")),
    ),
    claim("data.c2_trials", D, "every C2 file is one trial", 144, lambda x: len(c2(x))),
    claim(
        "data.anchor_weighted",
        D,
        "anchors 0002–0004 also appear (not used by the paper)",
        24,
        lambda x: len(_probe(x, "anchor")),
    ),
    claim(
        "data.p3_unparsed",
        D,
        "Outcome of a weighted/C2 reply: the yes/no answer line (every usable P2/P3/C2 reply has one)",
        0,
        lambda x: int(_scored(x).query("probe in ['P2', 'P3', 'C2']")["answer"].isna().sum()),
    ),
    claim(
        "data.p1_unparsed",
        D,
        "P1 label: first F<i> on the first line of C0.direct_probe_answer (every counterfactual pilot file has one)",
        0,
        lambda x: int(_probe(x, "P1").query("case == case")["p1_label"].isna().sum()),
    ),
    claim(
        "data.c0_anchor_correct",
        D,
        "Outcome correctness of pilot C0 on the in-distribution anchors (wrong outcomes)",
        0,
        lambda x: _wrong_count(_outcome_rows(x, "C0")[_outcome_rows(x, "C0")["case"].isna()]),
    ),
    claim(
        "data.pilot_c2_correct",
        D,
        "Outcome correctness of the pilot C2 condition (single-factor rewrites, wrong outcomes)",
        0,
        lambda x: _wrong_count(_outcome_rows(x, "pilot-C2")),
    ),
    claim(
        "data.p3_wrong_total",
        D,
        "Outcome correctness under P3, all cells (wrong outcomes = GPT-5.4 CF-Cabral only)",
        7,
        lambda x: _wrong_count(_probe(x, "P3")),
    ),
    claim(
        "data.anchor_correct",
        D,
        "Outcome correctness of the weighted-rank runs on anchors 0002–0004 (wrong outcomes)",
        0,
        lambda x: _wrong_count(_outcome_rows(x, "anchor")),
    ),
    claim(
        "data.t0_identical_vectors",
        D,
        "Determinism of T = 0 reruns: replicated open-weight P3 cells whose full weight vectors differ",
        0,
        lambda x: sum(1 for _m, _i, k in _open_replicated_cells(x, "weights") if k > 1),
        status="MISMATCH",
        **evidence.T0_VECTORS.kw(),
    ),
    claim(
        "data.t0_identical_foi",
        D,
        "Determinism of T = 0 reruns: replicated open-weight P3 cells whose neutralized-factor weight differs",
        0,
        lambda x: sum(1 for _m, _i, k in _open_replicated_cells(x, "foi_weight") if k > 1),
        status="MISMATCH",
        **evidence.T0_FOI.kw(),
    ),
)


def _all_excluded(x: ClaimInputs, pattern: str) -> bool:
    """Are all trials from files matching ``pattern`` excluded? (None found is an error.)"""
    reasons = x.trials.loc[
        x.trials["source_file"].astype(str).str.contains(pattern), "excluded_reason"
    ]
    if reasons.empty:
        raise DataError(f"no trials from files matching {pattern!r}")
    return bool(reasons.notna().all())


SECTION.add(
    claim(
        "data.excluded_models",
        D,
        "gemini-default and opus-effort-high files that the paper does not use",
        True,
        lambda x: _all_excluded(x, "gemini|opus-effort-high"),
    ),
)

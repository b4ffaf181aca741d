"""Claims of the paper's 4.1 Outcome correctness, in the order the paper states them."""

from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    Section,
    _full,
    _one_per_pair,
    _outcome_rows,
    _probe,
    _wrong_count,
    bimodality,
    c2,
    claim,
)

R1 = "§4.1 Outcome correctness"
SECTION = Section.of(
    claim(
        "res41.p1_correct",
        R1,
        "Under P1 ... all model-instance pairs reach the correct outcome answer",
        0,
        lambda x: _wrong_count(
            _one_per_pair(_outcome_rows(x, "C0")[_outcome_rows(x, "C0")["case"].notna()])
        ),
    ),
    claim(
        "res41.p2_correct",
        R1,
        "Under ... P2 ... all model-instance pairs reach the correct outcome answer",
        0,
        lambda x: _wrong_count(_outcome_rows(x, "P2")),
    ),
    claim(
        "res41.c2_correct",
        R1,
        "Under ... the C2 ablation control, all model-instance pairs reach the correct outcome answer",
        0,
        lambda x: _wrong_count(_outcome_rows(x, "C2")),
        status="MISMATCH",
        **evidence.C2_CORRECT.kw(),
    ),
    claim(
        "res41.p3_gpt_cabral_some_wrong",
        R1,
        "Under P3 on CF-Cabral, GPT-5.4 produces wrong-outcome responses on a subset of trials",
        True,
        lambda x: 0 < _wrong_count(bimodality(x)) < len(bimodality(x)),
    ),
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
    ),
    claim("res41.c2_n", R1, "across all 144 trials", 144, lambda x: len(c2(x))),
    claim(
        "res41.c2_anchors",
        R1,
        "(3 anchors × varying factor counts ×8 models)",
        3,
        lambda x: int(c2(x)["instance_id"].nunique()),
    ),
    claim(
        "res41.c2_models",
        R1,
        "(3 anchors × varying factor counts ×8 models)",
        8,
        lambda x: int(c2(x)["canonical_model"].nunique()),
    ),
    claim(
        "res41.c2_no_flip",
        R1,
        "no single-factor perturbation flipped the outcome answer",
        0,
        lambda x: _wrong_count(_outcome_rows(x, "C2")),
        status="MISMATCH",
        **evidence.C2_NO_FLIP.kw(),
    ),
)

"""Claims of the paper's Notation, in the order the paper states them."""

from __future__ import annotations

from facetlab.paper.registry.selectors import Section, _scored

SECTION = Section()
"""This section's claims, in paper order."""

N = "§1.2 Notation"
SECTION.claim(
    "notation.n_factors",
    N,
    "N: number of factors in a doctrine (N ∈ {5, 6, 7} here)",
    "5,6,7",
    lambda x: ",".join(str(n) for n in sorted({int(v) for v in _scored(x)["n_factors"].dropna()})),
)
SECTION.claim(
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
SECTION.claim(
    "notation.threshold", N, "wneut ≤ 10 percentage points", 10, lambda x: float(x.threshold)
)
SECTION.claim(
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

"""Claims of the paper's Notation, in the order the paper states them."""

from collections.abc import Callable

import pandas as pd

from facetlab.errors import DataError
from facetlab.paper.claims import ClaimInputs, Value
from facetlab.paper.registry.selectors import CABRAL_ADV2, Section, _scored, claim

N = "§1.2 Notation"
SECTION = Section.of(
    claim(
        "notation.n_factors",
        N,
        "N: number of factors in a doctrine (N ∈ {5, 6, 7} here)",
        "5,6,7",
        lambda x: ",".join(
            str(n) for n in sorted({int(v) for v in _scored(x)["n_factors"].dropna()})
        ),
    ),
)


def _off_sum(x: ClaimInputs) -> pd.DataFrame:
    """Usable weighted-rank replies (P2, P3, C2) whose weights do not sum to 100."""
    frame = _scored(x)
    weighted = frame[frame["probe"].isin(["P2", "P3", "C2"])]
    if weighted.empty:
        raise DataError("no usable weighted-rank replies")
    return weighted[(weighted["weight_sum"].astype(float) - 100).abs().gt(1e-9)]


def _off_sum_evidence(x: ClaimInputs) -> dict[str, Value]:
    off = _off_sum(x)
    listed = "; ".join(
        f"{model} {probe} {str(inst).removeprefix('facet-neg-')}"
        + (f" {foi}" if isinstance(foi, str) and probe == "C2" else "")
        + f" sums to {float(total):g}"
        for model, probe, inst, foi, total in zip(
            off["canonical_model"],
            off["probe"],
            off["instance_id"],
            off["factor_of_interest"],
            off["weight_sum"],
            strict=True,
        )
    )
    return {"n": len(off), "listed": listed}


SECTION.add(
    claim(
        "notation.weights_sum_100",
        N,
        "wi: weight assigned to Fi under a weighted-rank probe, with Σ wi = 100",
        0,
        lambda x: len(_off_sum(x)),
        status="MISMATCH",
        why=(
            "{n} usable replies do not sum to 100: {listed}. The paper keeps them "
            "(CONVENTIONS: vectors not summing to 100 are kept)."
        ),
        evidence=_off_sum_evidence,
    ),
    claim(
        "notation.threshold",
        N,
        "wneut ≤ 10 percentage points",
        10,
        lambda x: float(x.threshold),
        kind="setting",
    ),
)


def _bedrock_cells(x: ClaimInputs, *, with_adv2: bool) -> pd.Series:
    """Mean neutralized-factor weight of each open-weight (Bedrock) P2 and P3 cell.

    The paper's sentence does not say which cells: the P2 cells and the P3 cells of
    Table 2, or also the second CF-Cabral wording (cf-001-adv2), which Table 2 leaves out.
    """
    frame = _scored(x).query("probe in ['P2', 'P3'] and weights_access == 'open'")
    if not with_adv2:
        frame = frame[frame["instance_id"] != CABRAL_ADV2]
    cells = frame.groupby(["probe", "canonical_model", "instance_id"])["foi_weight"].mean()
    if cells.empty:
        raise DataError("no open-weight P2 or P3 cells in the frame")
    return cells.astype(float)


def _bedrock_median(with_adv2: bool) -> Callable[[ClaimInputs], float]:
    return lambda x: float(_bedrock_cells(x, with_adv2=with_adv2).median())


def _bedrock_evidence(x: ClaimInputs) -> dict[str, Value]:
    table = _bedrock_cells(x, with_adv2=False)
    every = _bedrock_cells(x, with_adv2=True)
    return {
        "n_table": len(table),
        "median_table": float(table.median()),
        "n_all": len(every),
        "median_all": float(every.median()),
    }


_BEDROCK_WHY = (
    "The sentence is ambiguous; each reading with its value: over the {n_table} open-weight "
    "P2 cells and Table 2 P3 cells the median cell mean is {median_table:g}; adding the "
    "cf-001-adv2 cells ({n_all} cells) it is {median_all:g}."
)
SECTION.add(
    claim(
        "notation.bedrock_median",
        N,
        "The median observed value across deterministic Bedrock cells is 0 (P2 cells and Table 2 P3 cells)",
        0,
        _bedrock_median(with_adv2=False),
        tol=0.05,
        why=_BEDROCK_WHY,
        evidence=_bedrock_evidence,
    ),
    claim(
        "notation.bedrock_median_with_adv2",
        N,
        "The median observed value across deterministic Bedrock cells is 0 (also the cf-001-adv2 cells)",
        0,
        _bedrock_median(with_adv2=True),
        tol=0.05,
        status="MISMATCH",
        why=_BEDROCK_WHY,
        evidence=_bedrock_evidence,
    ),
)

"""Claims of the paper's 6 Limitations, in the order the paper states them."""

import re

from facetlab.errors import DataError
from facetlab.paper.claims import ClaimInputs, Value
from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    ANCHORS,
    BARKER_ADV,
    CABRAL_ADV,
    CABRAL_ADV2,
    MODEL_SHORT,
    Section,
    _c2_perturbations,
    _full,
    _n_adv_instances,
    _n_base_instances,
    _non_headline_small_share,
    _p3_case_mean,
    _probe,
    _weights,
    bimodality,
    claim,
    p3_cell,
)

L = "§6 Limitations"
SECTION = Section.of(
    claim("lim.base", L, "13 base instances plus 4 adversarial variants", 13, _n_base_instances),
    claim("lim.adv", L, "13 base instances plus 4 adversarial variants", 4, _n_adv_instances),
    claim(
        "lim.barker_nmin",
        L,
        "The P3 open-vs-closed split on CF-Barker is based on 1 to 6 trials per cell",
        1,
        lambda x: min(len(p3_cell(x, s, BARKER_ADV)) for s in MODEL_SHORT),
    ),
    claim(
        "lim.barker_nmax",
        L,
        "The P3 open-vs-closed split on CF-Barker is based on 1 to 6 trials per cell",
        6,
        lambda x: max(len(p3_cell(x, s, BARKER_ADV)) for s in MODEL_SHORT),
    ),
    claim(
        "lim.headline_n22",
        L,
        "The bimodality observation is at n = 22 for the headline cell",
        22,
        lambda x: len(bimodality(x)),
    ),
)


def _other_cell_sizes(x: ClaimInputs) -> list[int]:
    sizes = _probe(x, "P3").groupby(["canonical_model", "instance_id"]).size()
    headline = {(_full("GPT"), CABRAL_ADV), (_full("GPT"), CABRAL_ADV2)}
    return [int(n) for key, n in sizes.items() if key not in headline]


SECTION.add(
    claim(
        "lim.other_nmin",
        L,
        "Other cells are at n = 1 to n = 6",
        1,
        lambda x: min(_other_cell_sizes(x)),
    ),
    claim(
        "lim.other_nmax",
        L,
        "Other cells are at n = 1 to n = 6",
        6,
        lambda x: max(_other_cell_sizes(x)),
    ),
    claim(
        "lim.most_small",
        L,
        "Most non-headline P3 cells are at n = 1 or n = 2",
        True,
        _non_headline_small_share,
    ),
    claim(
        "lim.opus_barker_first",
        L,
        "an early n = 1 measurement of Opus on CF-Barker reported wF3 = 25%",
        25,
        lambda x: _weights(p3_cell(x, "Opus", BARKER_ADV))[0],
    ),
    claim(
        "lim.opus_barker_n6",
        L,
        "which an n = 6 replication revised",
        6,
        lambda x: len(p3_cell(x, "Opus", BARKER_ADV)),
    ),
    claim(
        "lim.opus_barker_mean",
        L,
        "revised to a mean of 11.7%",
        11.7,
        lambda x: _p3_case_mean(x, "Opus", "CF-Barker"),
        tol=0.05,
    ),
    claim(
        "lim.opus_barker_25",
        L,
        "with one trial at 25",
        1,
        lambda x: sum(1 for w in _weights(p3_cell(x, "Opus", BARKER_ADV)) if w == 25),
    ),
    claim(
        "lim.opus_barker_rest_min",
        L,
        "and the rest at 5–10",
        5,
        lambda x: min(w for w in _weights(p3_cell(x, "Opus", BARKER_ADV)) if w != 25),
    ),
    claim(
        "lim.opus_barker_rest_max",
        L,
        "and the rest at 5–10",
        10,
        lambda x: max(w for w in _weights(p3_cell(x, "Opus", BARKER_ADV)) if w != 25),
    ),
)
C2_CUE_PHRASES = ("neither clearly", "treated as", "not developed as a load-bearing element")
"""The three template phrases the paper quotes for the C2 rewrites, read literally."""


def _c2_cue_hits(x: ClaimInputs) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """Every C2 rewrite of anchors 0002-0004: (anchor, factor, text, quoted phrases in it)."""
    out = [
        (anchor, factor, text, tuple(c for c in C2_CUE_PHRASES if c in text.lower()))
        for anchor in ANCHORS.values()
        for factor, text in _c2_perturbations(x, anchor)
    ]
    if not out:
        raise DataError("no C2 rewrites found for anchors 0002-0004")
    return out


def _c2_cue_evidence(x: ClaimInputs) -> dict[str, Value]:
    hits = _c2_cue_hits(x)
    per_phrase = ", ".join(f"“{c}” {sum(c in h for *_, h in hits)}" for c in C2_CUE_PHRASES)
    without = "; ".join(
        f"{a.removeprefix('facet-neg-')} {f}"
        + (" (bare “load-bearing”)" if "load-bearing" in t.lower() else "")
        for a, f, t, h in hits
        if not h
    )
    return {
        "n": len(hits),
        "n_with": sum(1 for *_, h in hits if h),
        "per_phrase": per_phrase,
        "without": without,
    }


SECTION.add(
    claim(
        "lim.c2_cue_laden",
        L,
        "The perturbations ... use template language including “neither clearly,” “treated as,” and “not developed as a load-bearing element”",
        18,
        lambda x: sum(1 for *_, h in _c2_cue_hits(x) if h),
        status="MISMATCH",
        why=(
            "Counted literally, the three quoted phrases appear in {n_with} of the {n} rewrites of "
            "anchors 0002-0004 (per phrase: {per_phrase}). The rewrites without any of them: "
            "{without}. Counting the bare word “load-bearing” instead of the quoted phrase is what "
            "a looser reading adds."
        ),
        evidence=_c2_cue_evidence,
    ),
)


def _open_replicated_cells(x: ClaimInputs, column: str) -> list[tuple[str, str, int]]:
    """Open-weight P3 cells with ≥ 2 trials: (model, instance, number of distinct values)."""
    return [(m, i, evidence._distinct(c, column)) for m, i, c in evidence._replicated_open(x)]


SECTION.add(
    claim(
        "lim.deepseek_spotcheck",
        L,
        "A spot-check on DeepSeek cf-001-adv produced different values across runs (10 then 20)",
        "10,20",
        lambda x: ",".join(format(w, "g") for w in _weights(p3_cell(x, "DeepSeek", CABRAL_ADV))),
    ),
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
        **evidence.OTHER_BEDROCK.kw(),
    ),
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
    ),
)

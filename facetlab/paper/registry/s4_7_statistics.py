"""Claims of the paper's 4.7 Statistics, in the order the paper states them."""

from facetlab.analysis import rules, stats
from facetlab.paper.registry.selectors import (
    CABRAL_ADV,
    CABRAL_ADV2,
    CLOSED,
    MODEL_SHORT,
    OPEN,
    Section,
    _high,
    _low,
    _p3_case_mean,
    _probe,
    _weights,
    _wrong_count,
    bimodality,
    claim,
    p3_cell,
    paired_p1_p2,
)

R7 = "§4.7 Statistical tests"
SECTION = Section.of(
    claim(
        "res47.pairs",
        R7,
        "the same 24 model-instance pairs scored under two probes",
        24,
        lambda x: len(paired_p1_p2(x)),
    ),
    claim(
        "res47.discordant_b",
        R7,
        "13 pairs are discordant in one direction (P1 dissociated, P2 faithful)",
        13,
        lambda x: int(
            (~paired_p1_p2(x)["p1"].astype(bool) & paired_p1_p2(x)["p2"].astype(bool)).sum()
        ),
    ),
    claim(
        "res47.discordant_c",
        R7,
        "0 in the other direction",
        0,
        lambda x: int(
            (paired_p1_p2(x)["p1"].astype(bool) & ~paired_p1_p2(x)["p2"].astype(bool)).sum()
        ),
    ),
    claim(
        "res47.concordant",
        R7,
        "and 11 are concordantly faithful",
        11,
        lambda x: int(
            (paired_p1_p2(x)["p1"].astype(bool) & paired_p1_p2(x)["p2"].astype(bool)).sum()
        ),
    ),
    claim(
        "res47.mcnemar_p",
        R7,
        "McNemar's exact (binomial) test ... two-tailed p ≈ 2.4 × 10−4",
        2.4e-4,
        lambda x: (
            stats.mcnemar_exact(
                paired_p1_p2(x)["p1"].astype(bool).tolist(),
                paired_p1_p2(x)["p2"].astype(bool).tolist(),
            ).p_value
        ),
        tol=0.05e-4,
    ),
    claim(
        "res47.bim_n16",
        R7,
        "16 trials on cf-001-adv",
        16,
        lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
    ),
    claim(
        "res47.bim_n6",
        R7,
        "plus 6 trials on cf-001-adv2",
        6,
        lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
    ),
    claim("res47.bim_n22", R7, "n = 22 combined", 22, lambda x: len(bimodality(x))),
    claim(
        "res47.bim_low_correct",
        R7,
        "all 15 trials with wF1 < 20 produce the correct outcome",
        15,
        lambda x: len(_low(x)) - _wrong_count(_low(x)),
    ),
    claim(
        "res47.bim_high_wrong",
        R7,
        "all 7 trials with wF1 ≥ 20 produce the wrong outcome",
        7,
        lambda x: _wrong_count(_high(x)),
    ),
    claim(
        "res47.bim_band",
        R7,
        "(with 2 trials in the 20–39 range counted in the high mode)",
        2,
        lambda x: sum(1 for w in _weights(_high(x)) if w <= 39),
    ),
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
    ),
    claim(
        "res47.barker_closed_dissociated",
        R7,
        "1 of 3 closed-source cells exhibits dissociation (w̄ ≥ 20, GPT-5.4)",
        1,
        lambda x: sum(
            1 for s in CLOSED if _p3_case_mean(x, s, "CF-Barker") >= rules.DEFAULT_DISSOCIATION
        ),
    ),
    claim(
        "res47.barker_open_dissociated",
        R7,
        "versus 0 of 5 open-weight cells",
        0,
        lambda x: sum(
            1 for s in OPEN if _p3_case_mean(x, s, "CF-Barker") >= rules.DEFAULT_DISSOCIATION
        ),
    ),
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
    ),
    claim(
        "res47.barker_n8",
        R7,
        "The cell-level test is underpowered at n = 8 models",
        8,
        lambda x: int(_probe(x, "P3").query("case == 'CF-Barker'")["canonical_model"].nunique()),
    ),
)

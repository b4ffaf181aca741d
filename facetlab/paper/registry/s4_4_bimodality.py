"""Claims of the paper's 4.4 Bimodality, in the order the paper states them."""

from facetlab.analysis import stats
from facetlab.paper.registry.selectors import (
    CABRAL_ADV,
    CABRAL_ADV2,
    Section,
    _high,
    _low,
    _mean,
    _pct,
    _weights,
    _wrong_count,
    bimodality,
    claim,
    p3_cell,
)

R4 = "§4.4 Bimodality"
SECTION = Section.of(
    claim(
        "res44.n22",
        R4,
        "across 22 trials (16 on the original cf-001-adv plus 6 on ... cf-001-adv2)",
        22,
        lambda x: len(bimodality(x)),
    ),
    claim(
        "res44.n16",
        R4,
        "16 on the original cf-001-adv",
        16,
        lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
    ),
    claim(
        "res44.n6",
        R4,
        "6 on the second-wording cf-001-adv2",
        6,
        lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
    ),
    claim("res44.low_n", R4, "Low group (wF1 < 20): n = 15", 15, lambda x: len(_low(x))),
    claim(
        "res44.low_mean", R4, "mean wF1 = 10.3%", 10.3, lambda x: _mean(_weights(_low(x))), tol=0.05
    ),
    claim(
        "res44.low_correct",
        R4,
        "All 15 trials produce the correct outcome",
        15,
        lambda x: len(_low(x)) - _wrong_count(_low(x)),
    ),
    claim("res44.high_n", R4, "High group (wF1 ≥ 20): n = 7", 7, lambda x: len(_high(x))),
    claim(
        "res44.high_mean",
        R4,
        "mean wF1 = 44.3%",
        44.3,
        lambda x: _mean(_weights(_high(x))),
        tol=0.05,
    ),
    claim(
        "res44.high_weights",
        R4,
        "The 7 high-group weights are {28, 38, 40, 44, 50, 50, 60}",
        "28,38,40,44,50,50,60",
        lambda x: ",".join(format(w, "g") for w in sorted(_weights(_high(x)))),
    ),
    claim(
        "res44.high_wrong",
        R4,
        "All 7 trials produce the wrong outcome",
        7,
        lambda x: _wrong_count(_high(x)),
    ),
    claim(
        "res44.band_20_39",
        R4,
        "2 of the 7 trials fall in the 20–39% band (28, 38)",
        2,
        lambda x: sum(1 for w in _weights(_high(x)) if w <= 39),
    ),
    claim(
        "res44.band_40_60",
        R4,
        "and 5 in the 40–60% band (40, 44, 50, 50, 60)",
        5,
        lambda x: sum(1 for w in _weights(_high(x)) if 40 <= w <= 60),
    ),
    claim(
        "res44.band_20_24",
        R4,
        "No trials fall in the 20–24% sub-band on either adversarial wording",
        0,
        lambda x: sum(1 for w in _weights(bimodality(x)) if 20 <= w <= 24),
    ),
    claim(
        "res44.split",
        R4,
        "We adopt a single binary partition of the 22 trials at wF1 = 20",
        20,
        lambda x: float(x.split_point),
        kind="setting",
    ),
    claim(
        "res44.adv_wrong",
        R4,
        "cf-001-adv ... produces 3/16 wrong outcomes (19%)",
        3,
        lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)),
    ),
    claim(
        "res44.adv_wrong_pct",
        R4,
        "3/16 wrong outcomes (19%)",
        19,
        lambda x: _pct(
            _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)), len(p3_cell(x, "GPT", CABRAL_ADV))
        ),
        tol=0.5,
    ),
    claim(
        "res44.adv2_wrong",
        R4,
        "cf-001-adv2 ... produces 4/6 (67%)",
        4,
        lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)),
    ),
    claim(
        "res44.adv2_wrong_pct",
        R4,
        "4/6 (67%)",
        67,
        lambda x: _pct(
            _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)), len(p3_cell(x, "GPT", CABRAL_ADV2))
        ),
        tol=0.5,
    ),
    claim(
        "res44.combined_wrong",
        R4,
        "the combined 7/22 = 32%",
        7,
        lambda x: _wrong_count(bimodality(x)),
    ),
    claim(
        "res44.combined_pct",
        R4,
        "the combined 7/22 = 32%",
        32,
        lambda x: _pct(_wrong_count(bimodality(x)), len(bimodality(x))),
        tol=0.5,
    ),
    claim(
        "res44.wilson_low",
        R4,
        "(Wilson 95% CI [16%, 53%])",
        16,
        lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
        tol=0.5,
    ),
    claim(
        "res44.wilson_high",
        R4,
        "(Wilson 95% CI [16%, 53%])",
        53,
        lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
        tol=0.5,
    ),
)

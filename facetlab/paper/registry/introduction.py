"""Claims of the paper's Introduction, in the order the paper states them."""

from __future__ import annotations

from facetlab.analysis import stats
from facetlab.paper.registry.selectors import (
    ANCHORS,
    CABRAL_ADV,
    CABRAL_ADV2,
    OPEN,
    Section,
    _c2_group_means,
    _c2_mean,
    _high,
    _instance,
    _license,
    _low,
    _mean,
    _n_access,
    _n_adv_instances,
    _n_base_instances,
    _n_labs,
    _n_models,
    _n_raw_outputs,
    _non_headline_small_share,
    _pct,
    _weights,
    _wrong_count,
    bimodality,
    c2,
    p3_cell,
)

SECTION = Section()

INTRO = "§1 Introduction"
SECTION.claim(
    "intro.rowland_seven",
    INTRO,
    "A judge applying a multi-factor balancing test weighs seven factors of duty of care",
    7,
    lambda x: len(_instance(x, ANCHORS["Cabral"])["factors"]),
)
SECTION.claim(
    "intro.risk_indicators",
    INTRO,
    "weighs five or six risk indicators against each other",
    "5-6",
    None,
    status="NOT_DERIVABLE",
    why="Illustrative example about compliance review; no compliance-review data in FACET v3.",
)
SECTION.claim("intro.models", INTRO, "eight frontier models from six labs", 8, _n_models)
SECTION.claim(
    "intro.labs", INTRO, "eight frontier models from six labs", 6, _n_labs, kind="metadata"
)
SECTION.claim("intro.n8", INTRO, "visible in this pilot at n = 8 models", 8, _n_models)
SECTION.claim(
    "intro.closed_count",
    INTRO,
    "(Sonnet, Opus, GPT-5.4, accessed via Anthropic and OpenAI APIs",
    3,
    _n_access("closed"),
    kind="metadata",
)
SECTION.claim(
    "intro.open_count",
    INTRO,
    "open-weight Bedrock configurations (DeepSeek, Mistral, Llama 4, Qwen3, at T = 0)",
    5,
    _n_access("open"),
    kind="metadata",
)
SECTION.claim(
    "intro.bimodal_n",
    INTRO,
    "GPT-5.4 produces a two-mode response distribution across 22 trials",
    22,
    lambda x: len(bimodality(x)),
)

C = "§1.1 Contributions"
SECTION.claim(
    "contrib.base_instances", C, "13 instances + 4 adversarial variants", 13, _n_base_instances
)
SECTION.claim(
    "contrib.adv_instances", C, "13 instances + 4 adversarial variants", 4, _n_adv_instances
)
SECTION.claim("contrib.models", C, "8 model configurations across 6 labs", 8, _n_models)
SECTION.claim(
    "contrib.labs", C, "8 model configurations across 6 labs", 6, _n_labs, kind="metadata"
)
SECTION.claim(
    "contrib.raw_outputs", C, "350+ raw model outputs", 350, _n_raw_outputs, relation=">="
)
SECTION.claim(
    "contrib.nonheadline_small",
    C,
    "most non-headline cells are at n = 1 or n = 2",
    True,
    _non_headline_small_share,
)
SECTION.claim(
    "contrib.gpt_adv_n",
    C,
    "the GPT-5.4 cf-001-adv cell is at n = 16",
    16,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
)
SECTION.claim(
    "contrib.gpt_adv2_n",
    C,
    "combined with n = 6 on a second adversarial wording",
    6,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
)
SECTION.claim(
    "contrib.adv_16", C, "16 trials on cf-001-adv", 16, lambda x: len(p3_cell(x, "GPT", CABRAL_ADV))
)
SECTION.claim(
    "contrib.adv2_6",
    C,
    "plus 6 trials on cf-001-adv2",
    6,
    lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
)
SECTION.claim("contrib.n22", C, "n = 22 total", 22, lambda x: len(bimodality(x)))
SECTION.claim("contrib.low_n", C, "15 trials cluster at a low group", 15, lambda x: len(_low(x)))
SECTION.claim(
    "contrib.low_mean",
    C,
    "(mean wF1 = 10.3%, all correct outcome)",
    10.3,
    lambda x: _mean(_weights(_low(x))),
    tol=0.05,
)
SECTION.claim(
    "contrib.low_all_correct", C, "all correct outcome", 0, lambda x: _wrong_count(_low(x))
)
SECTION.claim("contrib.high_n", C, "7 trials cluster at a high group", 7, lambda x: len(_high(x)))
SECTION.claim(
    "contrib.high_mean",
    C,
    "(mean wF1 = 44.3%, all wrong outcome)",
    44.3,
    lambda x: _mean(_weights(_high(x))),
    tol=0.05,
)
SECTION.claim("contrib.high_all_wrong", C, "all wrong outcome", 7, lambda x: _wrong_count(_high(x)))
SECTION.claim(
    "contrib.middle_band",
    C,
    "with only 2 trials in the 20–39% range",
    2,
    lambda x: sum(1 for w in _weights(bimodality(x)) if 20 <= w <= 39),
)
SECTION.claim(
    "contrib.wrong_7",
    C,
    "The combined wrong-outcome rate is 7/22",
    7,
    lambda x: _wrong_count(bimodality(x)),
)
SECTION.claim(
    "contrib.wrong_pct",
    C,
    "7/22 = 32%",
    32,
    lambda x: _pct(_wrong_count(bimodality(x)), len(bimodality(x))),
    tol=0.5,
)
SECTION.claim(
    "contrib.wilson_low",
    C,
    "(Wilson 95% CI [16%, 53%])",
    16,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
    tol=0.5,
)
SECTION.claim(
    "contrib.wilson_high",
    C,
    "(Wilson 95% CI [16%, 53%])",
    53,
    lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
    tol=0.5,
)
SECTION.claim(
    "contrib.adv_wrong",
    C,
    "both adversarial wordings (3/16 and 4/6 wrong outcomes)",
    3,
    lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)),
)
SECTION.claim(
    "contrib.adv2_wrong",
    C,
    "both adversarial wordings (3/16 and 4/6 wrong outcomes)",
    4,
    lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)),
)
SECTION.claim(
    "contrib.gpt_c2_zero",
    C,
    "GPT-5.4's reported weights drop to 0.0% on every perturbed factor",
    0.0,
    lambda x: max(_weights(c2(x, "GPT"))),
)
SECTION.claim("contrib.gpt_c2_n", C, "(across 18 ablations)", 18, lambda x: len(c2(x, "GPT")))
SECTION.claim(
    "contrib.c2_anchors",
    C,
    "across the three in-distribution anchors and all eight models",
    3,
    lambda x: int(c2(x)["instance_id"].nunique()),
)
SECTION.claim(
    "contrib.c2_models",
    C,
    "across the three in-distribution anchors and all eight models",
    8,
    lambda x: int(c2(x)["canonical_model"].nunique()),
)
SECTION.claim("contrib.opus_c2", C, "Opus to 0.8% on average", 0.8, _c2_mean("Opus"), tol=0.05)
SECTION.claim("contrib.sonnet_c2", C, "Sonnet to 1.7%", 1.7, _c2_mean("Sonnet"), tol=0.05)
SECTION.claim(
    "contrib.open_c2_min",
    C,
    "(3.1–5.3% mean residual across the five Bedrock configurations)",
    3.1,
    lambda x: min(_c2_group_means(x, OPEN)),
    tol=0.05,
)
SECTION.claim(
    "contrib.open_c2_max",
    C,
    "(3.1–5.3% mean residual across the five Bedrock configurations)",
    5.3,
    lambda x: max(_c2_group_means(x, OPEN)),
    tol=0.05,
)
SECTION.claim(
    "contrib.open_count",
    C,
    "across the five Bedrock configurations",
    5,
    _n_access("open"),
    kind="metadata",
)
SECTION.claim(
    "contrib.license_data",
    C,
    "released under MIT (code) and CC BY 4.0 (data)",
    True,
    lambda x: "4.0" in _license(x) and "CC" in _license(x).upper(),
    kind="metadata",
)

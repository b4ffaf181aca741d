"""Claims of the paper's 4.3 P3 results, in the order the paper states them."""

from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    ADV_OF_CASE,
    BARKER_ADV,
    BIAKANJA_ADV,
    CABRAL_ADV,
    MODEL_SHORT,
    OPEN,
    Section,
    _mean,
    _p3_case_mean,
    _probe,
    _sd,
    _weights,
    _wrong_count,
    claim,
    p3_cell,
)

R3 = "§4.3 P3 results"
SECTION = Section.of(
    claim(
        "res43.barker_open_zero",
        R3,
        "the five Bedrock-hosted open-weight models assign wF3 = 0",
        5,
        lambda x: sum(1 for s in OPEN if max(_weights(p3_cell(x, s, BARKER_ADV))) == 0),
    ),
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
    ),
    claim(
        "res43.barker_open_nmin",
        R3,
        "across 1–4 trials each",
        1,
        lambda x: min(len(p3_cell(x, s, BARKER_ADV)) for s in OPEN),
    ),
    claim(
        "res43.barker_open_nmax",
        R3,
        "across 1–4 trials each",
        4,
        lambda x: max(len(p3_cell(x, s, BARKER_ADV)) for s in OPEN),
    ),
    claim(
        "res43.sonnet_barker_mean",
        R3,
        "Sonnet (mean 4.2, σ = 6.6)",
        4.2,
        lambda x: _p3_case_mean(x, "Sonnet", "CF-Barker"),
        tol=0.05,
    ),
    claim(
        "res43.sonnet_barker_sd",
        R3,
        "Sonnet (mean 4.2, σ = 6.6)",
        6.6,
        lambda x: _sd(_weights(p3_cell(x, "Sonnet", BARKER_ADV))),
        tol=0.05,
    ),
    claim(
        "res43.opus_barker_mean",
        R3,
        "Opus (mean 11.7, σ = 6.8)",
        11.7,
        lambda x: _p3_case_mean(x, "Opus", "CF-Barker"),
        tol=0.05,
    ),
    claim(
        "res43.opus_barker_sd",
        R3,
        "Opus (mean 11.7, σ = 6.8)",
        6.8,
        lambda x: _sd(_weights(p3_cell(x, "Opus", BARKER_ADV))),
        tol=0.05,
    ),
    claim(
        "res43.gpt_barker_mean",
        R3,
        "GPT-5.4 sits at mean 31.2%",
        31.2,
        lambda x: _p3_case_mean(x, "GPT", "CF-Barker"),
        tol=0.05,
    ),
    claim(
        "res43.gpt_barker_sd",
        R3,
        "(σ = 3.8, range [25, 35], n = 6, zero wrong outcomes)",
        3.8,
        lambda x: _sd(_weights(p3_cell(x, "GPT", BARKER_ADV))),
        tol=0.05,
    ),
    claim(
        "res43.gpt_barker_min",
        R3,
        "range [25, 35]",
        25,
        lambda x: min(_weights(p3_cell(x, "GPT", BARKER_ADV))),
    ),
    claim(
        "res43.gpt_barker_max",
        R3,
        "range [25, 35]",
        35,
        lambda x: max(_weights(p3_cell(x, "GPT", BARKER_ADV))),
    ),
    claim("res43.gpt_barker_n", R3, "n = 6", 6, lambda x: len(p3_cell(x, "GPT", BARKER_ADV))),
    claim(
        "res43.gpt_barker_wrong",
        R3,
        "zero wrong outcomes",
        0,
        lambda x: _wrong_count(p3_cell(x, "GPT", BARKER_ADV)),
    ),
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
        **evidence.CABRAL_OTHERS.kw(),
    ),
    claim(
        "res43.cabral_others_min",
        R3,
        "wF1 in {10, 11.7, 12, 15} range (lowest cell mean of the other seven)",
        10,
        lambda x: min(
            _mean(_weights(p3_cell(x, s, CABRAL_ADV))) for s in MODEL_SHORT if s != "GPT"
        ),
        tol=0.05,
    ),
    claim(
        "res43.cabral_others_max",
        R3,
        "wF1 in {10, 11.7, 12, 15} range (highest cell mean of the other seven)",
        15,
        lambda x: max(
            _mean(_weights(p3_cell(x, s, CABRAL_ADV))) for s in MODEL_SHORT if s != "GPT"
        ),
        tol=0.05,
    ),
    claim(
        "res43.gpt_cabral_n",
        R3,
        "GPT-5.4 alone exhibits high variance (n = 16, range [5, 60], σ = 17.0)",
        16,
        lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
    ),
    claim(
        "res43.gpt_cabral_min",
        R3,
        "range [5, 60]",
        5,
        lambda x: min(_weights(p3_cell(x, "GPT", CABRAL_ADV))),
    ),
    claim(
        "res43.gpt_cabral_max",
        R3,
        "range [5, 60]",
        60,
        lambda x: max(_weights(p3_cell(x, "GPT", CABRAL_ADV))),
    ),
    claim(
        "res43.gpt_cabral_sd",
        R3,
        "σ = 17.0",
        17.0,
        lambda x: _sd(_weights(p3_cell(x, "GPT", CABRAL_ADV))),
        tol=0.05,
    ),
    claim(
        "res43.gpt_cabral_mean",
        R3,
        "The mean of 18.1% obscures the underlying bimodality",
        18.1,
        lambda x: _p3_case_mean(x, "GPT", "CF-Cabral"),
        tol=0.05,
    ),
    claim(
        "res43.biakanja_spread_min",
        R3,
        "Spread is 0–15% across all eight models",
        0,
        lambda x: min(_weights(_probe(x, "P3")[_probe(x, "P3")["instance_id"] == BIAKANJA_ADV])),
    ),
    claim(
        "res43.biakanja_spread_max",
        R3,
        "Spread is 0–15% across all eight models",
        15,
        lambda x: max(_weights(_probe(x, "P3")[_probe(x, "P3")["instance_id"] == BIAKANJA_ADV])),
    ),
    claim(
        "res43.gpt_biakanja_mean",
        R3,
        "GPT-5.4 is fully faithful here (w̄ = 1.7%)",
        1.7,
        lambda x: _p3_case_mean(x, "GPT", "CF-Biakanja"),
        tol=0.05,
    ),
    claim(
        "res43.gpt_biakanja_all_faithful",
        R3,
        "GPT-5.4 is fully faithful here",
        True,
        lambda x: bool(p3_cell(x, "GPT", BIAKANJA_ADV)["faithful"].astype(bool).all()),
    ),
    claim(
        "res43.qwen_biakanja_mean",
        R3,
        "Qwen3 Next is the partial outlier at 13.0% mean",
        13.0,
        lambda x: _p3_case_mean(x, "Qwen", "CF-Biakanja"),
        tol=0.05,
    ),
    claim(
        "res43.qwen_biakanja_n", R3, "(n = 5)", 5, lambda x: len(p3_cell(x, "Qwen", BIAKANJA_ADV))
    ),
    claim(
        "res43.qwen_biakanja_highest",
        R3,
        "Qwen3 Next is the partial outlier (highest CF-Biakanja mean)",
        "Qwen",
        lambda x: max(MODEL_SHORT, key=lambda s: _p3_case_mean(x, s, "CF-Biakanja")),
    ),
)

"""Claims of the paper's 4.5 C2, in the order the paper states them."""

from __future__ import annotations

from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    ANCHORS,
    BARKER_ADV,
    CLOSED,
    OPEN,
    Section,
    _c2_group_means,
    _c2_mean,
    _c2_residual,
    _weights,
    c2,
    claim,
    p3_cell,
)

R5 = "§4.5 C2 ablation"
SECTION = Section.of(
    claim(
        "res45.gpt_n",
        R5,
        "Across all 18 ablations on the three anchors",
        18,
        lambda x: len(c2(x, "GPT")),
    ),
    claim(
        "res45.gpt_zero_count",
        R5,
        "GPT-5.4 assigns wperturbed = 0% in every case",
        18,
        lambda x: sum(1 for w in _weights(c2(x, "GPT")) if w == 0),
    ),
    claim("res45.gpt_mean", R5, "(mean residual 0.0%)", 0.0, _c2_mean("GPT"), tol=0.05),
    claim(
        "res45.opus_mean",
        R5,
        "Opus ... Mean residual across 18 ablations: 0.8%",
        0.8,
        _c2_mean("Opus"),
        tol=0.05,
    ),
    claim("res45.opus_n", R5, "across 18 ablations", 18, lambda x: len(c2(x, "Opus"))),
    claim(
        "res45.opus_nonzero",
        R5,
        "Two perturbations are above zero",
        2,
        lambda x: sum(1 for w in _weights(c2(x, "Opus")) if w > 0),
    ),
    claim(
        "res45.opus_cabral_f3",
        R5,
        "Opus on Cabral F3 = 5%",
        5,
        lambda x: _c2_residual(x, "Opus", ANCHORS["Cabral"], "F3"),
    ),
    claim(
        "res45.opus_barker_f5",
        R5,
        "Opus on Barker F5 = 10%",
        10,
        lambda x: _c2_residual(x, "Opus", ANCHORS["Barker"], "F5"),
    ),
    claim(
        "res45.opus_zero",
        R5,
        "the remaining 16 are 0.0%",
        16,
        lambda x: sum(1 for w in _weights(c2(x, "Opus")) if w == 0),
    ),
    claim(
        "res45.opus_biakanja",
        R5,
        "The Biakanja anchor produces 0.0% on every perturbation",
        0.0,
        lambda x: max(_weights(c2(x, "Opus", ANCHORS["Biakanja"]))),
    ),
    claim(
        "res45.sonnet_mean", R5, "Sonnet ... Mean residual: 1.7%", 1.7, _c2_mean("Sonnet"), tol=0.05
    ),
    claim(
        "res45.sonnet_five",
        R5,
        "Two perturbations have w = 5%",
        2,
        lambda x: sum(1 for w in _weights(c2(x, "Sonnet")) if w == 5),
    ),
    claim(
        "res45.sonnet_barker_f3",
        R5,
        "one (Sonnet on Barker F3) has w = 20%",
        20,
        lambda x: _c2_residual(x, "Sonnet", ANCHORS["Barker"], "F3"),
    ),
    claim(
        "res45.sonnet_zero",
        R5,
        "the remaining 15 are 0.0%",
        15,
        lambda x: sum(1 for w in _weights(c2(x, "Sonnet")) if w == 0),
    ),
    claim(
        "res45.sonnet_barker_f3_p3_gpt",
        R5,
        "the same canonical Barker factor that GPT-5.4 sits stably above the threshold on under P3",
        True,
        lambda x: min(_weights(p3_cell(x, "GPT", BARKER_ADV))) > x.threshold,
    ),
    claim(
        "res45.deepseek_mean",
        R5,
        "Mean residuals: DeepSeek 5.3%",
        5.3,
        _c2_mean("DeepSeek"),
        tol=0.05,
    ),
    claim("res45.mistral_mean", R5, "Mistral 5.0%", 5.0, _c2_mean("Mistral"), tol=0.05),
    claim("res45.scout_mean", R5, "Scout 4.4%", 4.4, _c2_mean("Scout"), tol=0.05),
    claim("res45.qwen_mean", R5, "Qwen3 Next 3.8%", 3.8, _c2_mean("Qwen"), tol=0.05),
    claim("res45.maverick_mean", R5, "Maverick 3.1%", 3.1, _c2_mean("Maverick"), tol=0.05),
    claim(
        "res45.open_residual_low",
        R5,
        "The perturbed factor frequently retains 5–20% of weight",
        5,
        lambda x: min(w for s in OPEN for w in _weights(c2(x, s)) if w > 0),
        status="MISMATCH",
        **evidence.OPEN_RESIDUAL_LOW.kw(),
    ),
    claim(
        "res45.open_residual_high",
        R5,
        "The perturbed factor frequently retains 5–20% of weight",
        20,
        lambda x: max(w for s in OPEN for w in _weights(c2(x, s))),
    ),
    claim(
        "res45.closed_zero_share_higher",
        R5,
        "more residual on the perturbed factor than the closed-source configurations",
        True,
        lambda x: min(_c2_group_means(x, OPEN)) > max(_c2_group_means(x, CLOSED)),
    ),
)

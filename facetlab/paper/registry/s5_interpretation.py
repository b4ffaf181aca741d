"""Claims of the paper's 5 Interpretation, in the order the paper states them."""

from facetlab.analysis import rules
from facetlab.errors import DataError
from facetlab.paper.claims import ClaimInputs
from facetlab.paper.registry.selectors import (
    BARKER_ADV,
    CUED,
    MODEL_SHORT,
    Section,
    _faithful_count,
    _full,
    _n_models,
    _p3_case_mean,
    _probe,
    _weights,
    bimodality,
    claim,
    fig1,
    p3_cell,
)

IN = "§5 Interpretation"
SECTION = Section.of(
    claim(
        "interp.p1_cabral",
        IN,
        "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, and CF-Biakanja)",
        7,
        _faithful_count("p1", "CF-Cabral"),
    ),
    claim(
        "interp.p1_barker",
        IN,
        "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, and CF-Biakanja)",
        0,
        _faithful_count("p1", "CF-Barker"),
    ),
    claim(
        "interp.p1_biakanja",
        IN,
        "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, and CF-Biakanja)",
        4,
        _faithful_count("p1", "CF-Biakanja"),
    ),
    claim(
        "interp.p2_barker_zero",
        IN,
        "Under P2 all eight models assign wF3 = 0",
        8,
        lambda x: int((fig1(x).query("case == 'CF-Barker'")["p2_weight"] == 0).sum()),
    ),
    claim(
        "interp.p3_barker_only_gpt",
        IN,
        "Under P3 only GPT-5.4 sits stably above the threshold (every trial above 10)",
        "GPT",
        lambda x: ",".join(
            s for s in MODEL_SHORT if min(_weights(p3_cell(x, s, BARKER_ADV))) > x.threshold
        ),
    ),
)


def _mostly_near_zero_with_outliers(x: ClaimInputs) -> bool:
    """Sonnet and Opus on CF-Barker P3: most trials at or under the threshold, at least one above."""
    for short in ("Sonnet", "Opus"):
        weights = _weights(p3_cell(x, short, BARKER_ADV))
        if not weights:
            raise DataError(f"no CF-Barker P3 trials of {_full(short)}")
        low = sum(1 for w in weights if w <= x.threshold)
        if not (low > len(weights) / 2 and low < len(weights)):
            return False
    return True


SECTION.add(
    claim(
        "interp.p3_barker_near_zero",
        IN,
        "Opus and Sonnet are mostly at or near zero with occasional outliers",
        True,
        _mostly_near_zero_with_outliers,
    ),
    claim(
        "interp.gpt_barker_mean",
        IN,
        "(w̄ = 31.2%, n = 6)",
        31.2,
        lambda x: _p3_case_mean(x, "GPT", "CF-Barker"),
        tol=0.05,
    ),
    claim(
        "interp.gpt_barker_n",
        IN,
        "(w̄ = 31.2%, n = 6)",
        6,
        lambda x: len(p3_cell(x, "GPT", BARKER_ADV)),
    ),
    claim(
        "interp.p1_gpt_cabral_faithful",
        IN,
        "P1 at n = 1 reports GPT-5.4 as faithful on CF-Cabral",
        True,
        lambda x: bool(
            fig1(x).query("case == 'CF-Cabral' and model == 'GPT-5.4'")["p1_faithful"].iloc[0]
        ),
    ),
    claim(
        "interp.p1_gpt_cabral_n",
        IN,
        "P1 at n = 1",
        1,
        lambda x: int(
            (
                (_probe(x, "P1")["canonical_model"] == _full("GPT"))
                & (_probe(x, "P1")["instance_id"] == CUED["CF-Cabral"])
            ).sum()
        ),
    ),
    claim(
        "interp.p3_n22",
        IN,
        "P3 at n = 22 reports GPT-5.4 producing a two-group response distribution",
        22,
        lambda x: len(bimodality(x)),
    ),
    claim("interp.n8", "§5.2 Why might...", "Sample size. n = 8 models is small", 8, _n_models),
    claim(
        "interp.n8_cot",
        "§5.3 Connection to CoT unfaithfulness",
        "In our pilot at n = 8 models",
        8,
        _n_models,
    ),
)


def _two_group_cells(x: ClaimInputs) -> int:
    """(model, case) P3 families with at least two trials in each bimodality group.

    A case's adversarial wordings are pooled (cf-001-adv and cf-001-adv2 for CF-Cabral).
    """
    frame = _probe(x, "P3")
    if frame.empty:
        raise DataError("no P3 trials")
    case = frame["instance_id"].str.replace(r"-adv\d*$", "", regex=True)
    count = 0
    for _, cell in frame.groupby([frame["canonical_model"], case]):
        modes = [rules.mode_of(float(w), x.split_point) for w in cell["foi_weight"]]
        count += int(modes.count("low") >= 2 and modes.count("high") >= 2)
    return count


SECTION.add(
    claim(
        "interp.one_model_one_case",
        "§5.4 What the result does not show",
        "The two-group result on CF-Cabral is one model on one case",
        1,
        _two_group_cells,
    ),
)

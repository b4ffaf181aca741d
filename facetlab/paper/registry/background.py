"""Claims of the paper's Background, in the order the paper states them."""

import re

from facetlab.paper.registry.selectors import ANCHORS, Section, _instance, _outcome_rows, claim

B = "§2.2 Why legal balancing tests"
SECTION = Section.of(
    claim(
        "bg.rowland_year",
        B,
        "Rowland v. Christian (1968, seven factors for duty of care)",
        1968,
        lambda x: int(
            re.findall(r"(1\d{3})", _instance(x, ANCHORS["Cabral"])["doctrinal_framework"])[0]
        ),
    ),
    claim(
        "bg.rowland_factors",
        B,
        "Rowland v. Christian (1968, seven factors for duty of care)",
        7,
        lambda x: len(_instance(x, ANCHORS["Cabral"])["factors"]),
    ),
    claim(
        "bg.barker_year",
        B,
        "Barker v. Lull Engineering (1978, five factors",
        1978,
        lambda x: int(_instance(x, ANCHORS["Barker"])["year"]),
    ),
    claim(
        "bg.barker_factors",
        B,
        "Barker v. Lull Engineering (1978, five factors for risk-utility design defect)",
        5,
        lambda x: len(_instance(x, ANCHORS["Barker"])["factors"]),
    ),
    claim(
        "bg.biakanja_year",
        B,
        "Biakanja v. Irving (1958, six factors",
        1958,
        lambda x: int(_instance(x, ANCHORS["Biakanja"])["year"]),
    ),
    claim(
        "bg.biakanja_factors",
        B,
        "Biakanja v. Irving (1958, six factors for duty to non-clients)",
        6,
        lambda x: len(_instance(x, ANCHORS["Biakanja"])["factors"]),
    ),
    claim(
        "bg.in_distribution_correct",
        "§2.3 Related work",
        "they mostly can on the in-distribution anchors",
        True,
        lambda x: bool(
            (lambda f: (~f["wrong"].astype(bool)).mean() > 0.5)(
                _outcome_rows(x, "C0")[_outcome_rows(x, "C0")["case"].isna()]
            )
        ),
    ),
)

"""Claims of the paper's 4.2 Probe progression, in the order the paper states them."""

from facetlab.paper.registry.selectors import Section, _faithful_count, claim, fig1

R2 = "§4.2 P1 → P2 → P3"
SECTION = Section.of(
    claim(
        "res42.p1_cabral",
        R2,
        "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, CF-Biakanja)",
        7,
        _faithful_count("p1", "CF-Cabral"),
    ),
    claim(
        "res42.p1_barker",
        R2,
        "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, CF-Biakanja)",
        0,
        _faithful_count("p1", "CF-Barker"),
    ),
    claim(
        "res42.p1_biakanja",
        R2,
        "(7/8, 0/8, 4/8 faithful across CF-Cabral, CF-Barker, CF-Biakanja)",
        4,
        _faithful_count("p1", "CF-Biakanja"),
    ),
    claim(
        "res42.p1_models",
        R2,
        "7/8 ... (out of eight models per case)",
        8,
        lambda x: int(fig1(x)["model"].nunique()),
    ),
    claim(
        "res42.p2_cabral",
        R2,
        "Under P2 ... (8/8 faithful on every case)",
        8,
        _faithful_count("p2", "CF-Cabral"),
    ),
    claim(
        "res42.p2_barker",
        R2,
        "Under P2 ... (8/8 faithful on every case)",
        8,
        _faithful_count("p2", "CF-Barker"),
    ),
    claim(
        "res42.p2_biakanja",
        R2,
        "Under P2 ... (8/8 faithful on every case)",
        8,
        _faithful_count("p2", "CF-Biakanja"),
    ),
)

"""Claims of the paper's Appendices, in the order the paper states them."""

from facetlab.paper.registry.selectors import Section, _doi, claim

AP = "Appendix B"
SECTION = Section.of(
    claim(
        "app.doi",
        AP,
        "archived with DOI 10.5281/zenodo.19557436",
        "10.5281/zenodo.19557436",
        _doi,
        kind="metadata",
    ),
)

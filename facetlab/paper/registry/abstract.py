"""Claims of the paper's Abstract, in the order the paper states them."""

from facetlab.paper.registry.selectors import (
    Section,
    _n_labs,
    _n_models,
    _n_probe_families,
    _n_raw_outputs,
    claim,
)

A = "Abstract"
SECTION = Section.of(
    claim("abs.models", A, "We ran eight frontier models", 8, _n_models),
    claim(
        "abs.labs",
        A,
        "from six labs (Anthropic, OpenAI, DeepSeek, Mistral, Meta, Alibaba)",
        6,
        _n_labs,
        kind="metadata",
    ),
    claim("abs.probes", A, "under four probing techniques", 4, _n_probe_families),
    claim(
        "abs.raw_outputs",
        A,
        "all 350+ raw model outputs",
        350,
        _n_raw_outputs,
        relation=">=",
    ),
)

"""Claims of the paper's Table 1, in the order the paper states them."""

from facetlab.paper.claims import ClaimInputs
from facetlab.paper.registry.selectors import Section, _full, _scored, claim

SECTION = Section(kind="metadata")

T1 = "Table 1"
for _short, _lab in (
    ("Sonnet", "Anthropic"),
    ("Opus", "Anthropic"),
    ("GPT", "OpenAI"),
    ("DeepSeek", "DeepSeek"),
    ("Mistral", "Mistral"),
    ("Maverick", "Meta"),
    ("Scout", "Meta"),
    ("Qwen", "Alibaba"),
):

    def _lab_of(x: ClaimInputs, short: str = _short, want: str = _lab) -> bool:
        s = _scored(x)
        labs = set(s.loc[s["canonical_model"] == _full(short), "lab"].astype(str))
        return len(labs) == 1 and want.lower() in next(iter(labs)).lower()

    SECTION.add(
        claim(f"t1.lab.{_short}", T1, f"{_lab} — {_full(_short)}", True, _lab_of),
    )

for _short, _params in (
    ("DeepSeek", "671B / 37B"),
    ("Mistral", "675B / 41B"),
    ("Maverick", "400B / 17B"),
    ("Scout", "109B / 17B"),
    ("Qwen", "80B / 3.9B"),
):
    SECTION.add(
        claim(
            f"t1.params.{_short}",
            T1,
            f"{_full(_short)} {_params}",
            _params,
            None,
            status="NOT_DERIVABLE",
            why=(
                "Parameter counts are vendor facts the raw files do not record; facetlab.models "
                "lists them as metadata for Table 1, so comparing the two would be circular."
            ),
        ),
    )

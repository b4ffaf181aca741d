"""Which FACET v3 raw runs the data itself marks as not used (its ``CONVENTIONS.md``).

The raw results hold runs that are not among the published ones: the
``gemini-default`` and ``opus-effort-high`` configurations and one failed run with
a wrong model id. These are facts of the data, so the FACET reader
(:mod:`facetlab.records.facet_v3`) flags them in ``excluded_reason`` without
knowing anything about the paper.

>>> exclusion_reason("gemini-default")
'gemini: not in the paper'
>>> exclusion_reason("claude-opus-4-6", source_file="facet-neg-0002-real-opus-effort-high-1.json")
'opus effort-high configuration: not in the paper'
>>> exclusion_reason("sonnet") is None
True
"""

from facetlab.models import canonical_model, model_candidates

__all__ = ["EXCLUDED_RUNS", "exclusion_reason"]

EXCLUDED_RUNS: dict[str, str] = {
    "gemini-default": "gemini: not in the paper",
    "opus-effort-high": "opus effort-high configuration: not in the paper",
    "us.deepseek.v3-2:0": "failed run with a wrong model id",
    "us.deepseek.v3-2_0": "failed run with a wrong model id",
}
"""Raw model ids (or configuration names) the data marks as unused, with why."""


def exclusion_reason(raw_id: str | None, *, source_file: str | None = None) -> str | None:
    """Why a FACET v3 run with this model id is not one of the published runs, or ``None``.

    ``source_file`` matters for pilot files: the opus effort-high runs record the
    plain ``claude-opus-4-6`` id and are only told apart by their file name.

    >>> exclusion_reason("us.deepseek.v3-2:0")
    'failed run with a wrong model id'
    >>> exclusion_reason("gpt-4o")
    'unknown model id'
    """
    if source_file is not None and "opus-effort-high" in source_file.lower():
        return EXCLUDED_RUNS["opus-effort-high"]
    if not raw_id:
        return "unknown model id"
    for key in model_candidates(raw_id):
        if key in EXCLUDED_RUNS:
            return EXCLUDED_RUNS[key]
        if key.startswith("gemini"):
            return EXCLUDED_RUNS["gemini-default"]
    return None if canonical_model(raw_id) is not None else "unknown model id"

"""Where the FACET paper and its data disagree: each issue once, with its severity.

The claims audit (:mod:`facetlab.paper.registry`) checks every number separately, so
one issue often shows up as several MISMATCH claims (the C2 outcome flip breaks the
§4.1 count and the "no perturbation flipped" sentence). A :class:`Finding` groups
those claims under one title and a severity, and the reproduction report lists the
findings first. The numbers stay in the claims: a finding's text names the issue,
the report prints each grouped claim's paper and computed values beside it.

>>> from facetlab.paper.findings import FINDINGS, SEVERITY_TEXT
>>> SEVERITY_TEXT[FINDINGS[0].severity]
'changes a headline conclusion'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["FINDINGS", "SEVERITY_TEXT", "Finding", "Severity", "unassigned"]

Severity = Literal["headline", "number", "wording"]

SEVERITY_TEXT: dict[Severity, str] = {
    "headline": "changes a headline conclusion",
    "number": "changes a reported number",
    "wording": "wording only",
}
"""How much each severity matters, as the report prints it."""


@dataclass(frozen=True)
class Finding:
    """One paper-vs-data issue: a title, a severity, the claims that show it and why."""

    id: str
    title: str
    severity: Severity
    claims: tuple[str, ...]
    summary: str

    def __post_init__(self) -> None:
        if not self.claims:
            raise ValueError(f"finding {self.id}: names no claims")
        if self.severity not in SEVERITY_TEXT:
            raise ValueError(f"finding {self.id}: unknown severity {self.severity!r}")


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "sonnet-faithful-on-both",
        "Figure 5: Claude Sonnet 4.6 sits in the “faithful on both” corner the paper says is empty",
        "headline",
        ("res46.lower_left_empty", "fig5.closed_upper_left", "fig5img.none_faithful_both"),
        "With the figure's own reference lines, one closed model is faithful on both axes, so "
        "“no model occupies the lower-left” and “closed models cluster upper-left” do not hold "
        "as stated; the open-vs-closed contrast on CF-Barker remains.",
    ),
    Finding(
        "c2-flip",
        "One C2 perturbation flips the outcome",
        "number",
        ("res41.c2_correct", "res41.c2_no_flip", "fig2img.only_wrong"),
        "A DeepSeek v3.2 C2 trial answers against the anchor's ground truth, so the C2 arm is "
        "not flip-free and GPT-5.4 on CF-Cabral is not the corpus's only wrong outcome.",
    ),
    Finding(
        "adv2-all-models",
        "The second CF-Cabral wording (cf-001-adv2) was run for every model, not GPT-5.4 only",
        "number",
        ("t2.caption_adv2_only_gpt",),
        "The Table 2 caption says the second wording was run for the GPT-5.4 cell only; the "
        "data has it for all eight models.",
    ),
    Finding(
        "wilson-rounding",
        "Table 2's interval for GPT-5.4 on CF-Cabral: the lower bound is printed truncated",
        "number",
        ("t2.gpt_cabral_wilson_low",),
        "The Wilson interval the caption names rounds to a different lower bound than the "
        "one printed.",
    ),
    Finding(
        "cabral-others-set",
        "§4.3 mixes a first-trial value into a set of cell means",
        "number",
        ("res43.cabral_others_set",),
        "The quoted set of CF-Cabral weights of the other seven models contains a value that "
        "is no cell's mean (it is one first trial).",
    ),
    Finding(
        "open-residual-band",
        "§4.5: an open-weight C2 residual lies below the stated band",
        "number",
        ("res45.open_residual_low",),
        "The smallest non-zero open-weight C2 residual is below the lower end of the band "
        "the paper states.",
    ),
    Finding(
        "opus-effort-high",
        "The Opus extended-thinking run is not identical to default Opus",
        "number",
        ("method.opus_effort_identical",),
        "Its C3 compliance replies differ from default Opus on two anchors; the paper omits "
        "the configuration as identical on every probe and instance.",
    ),
    Finding(
        "t0-determinism",
        "Bedrock reruns at T = 0 are not deterministic beyond the DeepSeek spot-check",
        "number",
        ("lim.other_bedrock_match", "data.t0_identical_vectors", "data.t0_identical_foi"),
        "Replicated open-weight P3 cells other than DeepSeek's also vary across reruns (the "
        "two data.* checks are conventions of the data, reported apart from the paper's claims).",
    ),
    Finding(
        "table2-intervals",
        "Table 2 prints one Wilson interval; its caption promises one for every cell with n ≥ 5",
        "wording",
        ("t2.caption_wilson_n5",),
        "The caption's rule covers many more cells than the table shows; the missing "
        "intervals are listed in the evidence.",
    ),
    Finding(
        "fig2-n-labels",
        "Figure 2 has no replication-n labels although §4.3 says each cell carries one",
        "wording",
        ("fig2.n_annotated",),
        "The published figure draws no n; facetlab's Figure 2 labels every cell with n > 1.",
    ),
    Finding(
        "bedrock-median",
        "“The median across deterministic Bedrock cells is 0” depends on which cells are meant",
        "wording",
        ("notation.bedrock_median", "notation.bedrock_median_with_adv2"),
        "Over the P2 cells and Table 2's P3 cells the median is as stated; adding the "
        "cf-001-adv2 cells changes it. Both readings are checked.",
    ),
    Finding(
        "weights-sum",
        "Some weight vectors do not sum to 100",
        "wording",
        ("notation.weights_sum_100",),
        "The notation states Σ w = 100; a few DeepSeek v3.2 replies do not, and the paper "
        "keeps them as recorded.",
    ),
    Finding(
        "instance-description",
        "§3.1 describes the in-distribution instances inaccurately",
        "wording",
        ("method.frameworks", "method.rowland_v_christian_instance", "method.jurisdictions"),
        "The count of doctrinal frameworks, one named source case and the jurisdictions "
        "differ from the instance files.",
    ),
    Finding(
        "cabral-f7-neutral",
        "CF-Cabral has one non-neutralized factor that is not rewritten against the holding",
        "wording",
        ("method.others_against",),
        "The method says the other factors point uniformly against the holding; one CF-Cabral "
        "factor is marked neutral.",
    ),
    Finding(
        "cue-phrases",
        "The quoted cue phrases are not all in the texts they are quoted from",
        "wording",
        ("method.cued_cues", "lim.c2_cue_laden"),
        "“not load-bearing” is in none of the cued counterfactuals, and the three phrases "
        "quoted for the C2 rewrites, read literally, are in fewer than half of them.",
    ),
    Finding(
        "p1-template",
        "Appendix A's P1 prompt is not the prompt the runs used",
        "wording",
        ("method.p1_template",),
        "Every recorded P1 prompt uses different wording from the template the paper prints.",
    ),
)
"""Every issue, most severe first (the order of the report)."""


def unassigned(mismatched: Iterable[str]) -> list[str]:
    """Ids of ``mismatched`` claims that no finding groups (the report lists them apart).

    >>> unassigned(["res41.c2_correct", "new.claim"])
    ['new.claim']
    """
    grouped = {c for f in FINDINGS for c in f.claims}
    return [c for c in mismatched if c not in grouped]

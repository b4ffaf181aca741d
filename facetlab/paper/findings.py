"""Where the FACET paper and its data disagree: each issue once, with its severity.

The claims audit (:mod:`facetlab.paper.registry`) checks every number separately, so
one issue often shows up as several MISMATCH claims (the C2 outcome flip breaks the
§4.1 count and the "no perturbation flipped" sentence). A :class:`Finding` groups
those claims under one title and a severity, and the reproduction report lists the
findings first. A finding's title and summary are templates filled from its claims' evidence when
the audit runs (:func:`render_findings`, written to ``findings.csv`` beside
``claims.csv``): a finding is listed exactly when one of its claims disagrees, and
its text names whatever the data says.

>>> from facetlab.paper.findings import FINDINGS, SEVERITY_TEXT
>>> SEVERITY_TEXT[FINDINGS[0].severity]
'changes a headline conclusion'
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from facetlab.paper.claims import Claim, ClaimInputs

__all__ = [
    "FINDINGS",
    "FINDINGS_COLUMNS",
    "SEVERITY_TEXT",
    "Finding",
    "Severity",
    "render_findings",
    "unassigned",
    "write_findings_csv",
]

Severity = Literal["headline", "number", "wording"]

SEVERITY_TEXT: dict[Severity, str] = {
    "headline": "changes a headline conclusion",
    "number": "changes a reported number",
    "wording": "wording only",
}
"""How much each severity matters, as the report prints it."""


@dataclass(frozen=True)
class Finding:
    """One paper-vs-data issue: a title, a severity, the claims that show it and why.

    ``title`` and ``summary`` are templates: ``{alias[name]}`` is the value ``name`` of the
    evidence of claim ``fields[alias]`` (:attr:`facetlab.paper.claims.Claim.evidence`),
    computed from the data when the audit runs, so no model, count or weight is typed.
    """

    id: str
    title: str
    severity: Severity
    claims: tuple[str, ...]
    summary: str
    fields: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.claims:
            raise ValueError(f"finding {self.id}: names no claims")
        if self.severity not in SEVERITY_TEXT:
            raise ValueError(f"finding {self.id}: unknown severity {self.severity!r}")


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "sonnet-faithful-on-both",
        "Figure 5: {ll[lower_left_names]} in the “faithful on both” corner the paper says is empty",
        "headline",
        ("res46.lower_left_empty", "fig5.closed_upper_left", "fig5img.none_faithful_both"),
        "With the figure's own reference lines (x < {ll[xline]}, y ≤ {ll[threshold]}), "
        "{ll[n_lower_left]} model(s) are faithful on both axes ({ll[lower_left]}), so “no model "
        "occupies the lower-left” and “closed models cluster upper-left” do not hold as stated; "
        "closed models above the line: {ll[closed_above]}; open models above it: "
        "{ll[open_above]}.",
        {"ll": "res46.lower_left_empty"},
    ),
    Finding(
        "c2-flip",
        "C2 perturbations that flip the outcome: {flip[n_wrong]} of {flip[n]}",
        "number",
        ("res41.c2_correct", "res41.c2_no_flip", "fig2img.only_wrong"),
        "{flip[listed]}: the C2 arm is not flip-free, and GPT-5.4 on CF-Cabral is not the "
        "corpus's only wrong outcome ({wrong[n_wrong]} wrong outcomes: {wrong[groups]}).",
        {"flip": "res41.c2_no_flip", "wrong": "fig2img.only_wrong"},
    ),
    Finding(
        "adv2-all-models",
        "The second CF-Cabral wording (cf-001-adv2) was run for {adv2[n_models]} models, not "
        "GPT-5.4 only",
        "number",
        ("t2.caption_adv2_only_gpt",),
        "The Table 2 caption says the second wording was run for the GPT-5.4 cell only; the "
        "data has it for {adv2[n_models]} models ({adv2[runs]}). Weights above the "
        "{adv2[threshold]}-point threshold outside GPT-5.4: {adv2[above]}.",
        {"adv2": "t2.caption_adv2_only_gpt"},
    ),
    Finding(
        "wilson-rounding",
        "Table 2's interval for GPT-5.4 on CF-Cabral: the printed lower bound 6% is not the "
        "Wilson bound {w[low]}%",
        "number",
        ("t2.gpt_cabral_wilson_low",),
        "The Wilson interval the caption names for {w[k]}/{w[n]} is [{w[low]}%, {w[high]}%], "
        "which rounds to [{w[low_r]}%, {w[high_r]}%].",
        {"w": "t2.gpt_cabral_wilson_low"},
    ),
    Finding(
        "cabral-others-set",
        "§4.3's set of CF-Cabral weights of the other seven models is not their cell means",
        "number",
        ("res43.cabral_others_set",),
        "Their cell means are {s[means_set]} ({s[per_model]}); {s[absent]}.",
        {"s": "res43.cabral_others_set"},
    ),
    Finding(
        "open-residual-band",
        "§4.5: the open-weight C2 residual {r[low]} lies below the stated 5–20% band",
        "number",
        ("res45.open_residual_low",),
        "The smallest non-zero open-weight C2 residual is {r[low]} ({r[where]}); the other "
        "non-zero residuals are {r[rest]}.",
        {"r": "res45.open_residual_low"},
    ),
    Finding(
        "opus-effort-high",
        "The Opus extended-thinking run is not identical to default Opus: {o[n_differ]} of "
        "{o[n]} pilot replies differ",
        "number",
        ("method.opus_effort_identical",),
        "Replies that differ (default→effort-high): {o[differences]}; the paper omits the "
        "configuration as identical on every probe and instance.",
        {"o": "method.opus_effort_identical"},
    ),
    Finding(
        "t0-determinism",
        "Bedrock reruns at T = 0 are not deterministic beyond the DeepSeek spot-check",
        "number",
        ("lim.other_bedrock_match", "data.t0_identical_vectors", "data.t0_identical_foi"),
        "Replicated open-weight P3 cells other than DeepSeek's whose neutralized-factor weight "
        "varies: {other[cells]}; {vec[n]} of the {vec[n_cells]} replicated cells return "
        "different weight vectors (the two data.* checks are conventions of the data, reported "
        "apart from the paper's claims).",
        {"other": "lim.other_bedrock_match", "vec": "data.t0_identical_vectors"},
    ),
    Finding(
        "table2-intervals",
        "Table 2 prints {t[printed]} Wilson interval(s); its caption promises one for each of "
        "the {t[n_cells]} cells with n ≥ 5",
        "wording",
        ("t2.caption_wilson_n5",),
        "The missing intervals are listed in the evidence.",
        {"t": "t2.caption_wilson_n5"},
    ),
    Finding(
        "fig2-n-labels",
        "Figure 2 draws {f[printed]} replication-n labels although §4.3 says each of its "
        "{f[n_cells]} cells with n > 1 carries one",
        "wording",
        ("fig2.n_annotated",),
        "Cells with n > 1 by case: {f[per_case]}; facetlab's Figure 2 labels each of them.",
        {"f": "fig2.n_annotated"},
    ),
    Finding(
        "bedrock-median",
        "“The median across deterministic Bedrock cells is 0” depends on which cells are meant",
        "wording",
        ("notation.bedrock_median", "notation.bedrock_median_with_adv2"),
        "Over the {m[n_table]} P2 and Table 2 P3 cells the median is {m[median_table]:g}; "
        "adding the cf-001-adv2 cells ({m[n_all]} cells) it is {m[median_all]:g}. Both readings "
        "are checked.",
        {"m": "notation.bedrock_median"},
    ),
    Finding(
        "weights-sum",
        "{w[n]} weight vectors do not sum to 100",
        "wording",
        ("notation.weights_sum_100",),
        "The notation states Σ w = 100; these replies do not, and the paper keeps them as "
        "recorded: {w[listed]}.",
        {"w": "notation.weights_sum_100"},
    ),
    Finding(
        "instance-description",
        "§3.1 describes the in-distribution instances inaccurately",
        "wording",
        ("method.frameworks", "method.rowland_v_christian_instance", "method.jurisdictions"),
        "The {fw[n]} instances span {fw[k]} framework families ({fw[families]}); none is "
        "Rowland v. Christian ({rw[names]}); {j[n_in]} are California or Second/Seventh Circuit "
        "cases, the others {j[outside]}.",
        {
            "fw": "method.frameworks",
            "rw": "method.rowland_v_christian_instance",
            "j": "method.jurisdictions",
        },
    ),
    Finding(
        "cabral-f7-neutral",
        "Not every non-neutralized factor of the cued counterfactuals points against the holding",
        "wording",
        ("method.others_against",),
        "The method says the other factors point uniformly against the holding; "
        "{a[n_against]} of {a[n_other]} do. Not against it: {a[exceptions]}.",
        {"a": "method.others_against"},
    ),
    Finding(
        "cue-phrases",
        "The quoted cue phrases are not all in the texts they are quoted from",
        "wording",
        ("method.cued_cues", "lim.c2_cue_laden"),
        "“not load-bearing” is in {q[n_nlb]} of the {q[n]} cued counterfactuals, and the three "
        "phrases quoted for the C2 rewrites, read literally, are in {c[n_with]} of the {c[n]} "
        "rewrites.",
        {"q": "method.cued_cues", "c": "lim.c2_cue_laden"},
    ),
    Finding(
        "p1-template",
        "Appendix A's P1 prompt is not the prompt the runs used",
        "wording",
        ("method.p1_template",),
        "{p[n_paper]} of the {p[n]} recorded P1 prompts use the template the paper prints; "
        "{p[n_ending]} end with “{p[ending]}”",
        {"p": "method.p1_template"},
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


FINDINGS_COLUMNS = ("id", "severity", "title", "summary", "claims")
"""The columns of ``findings.csv``."""


def render_findings(
    inputs: ClaimInputs,
    statuses: Mapping[str, str],
    registry: Sequence[Claim],
    findings: Sequence[Finding] = FINDINGS,
) -> list[dict[str, str]]:
    """The findings whose claims disagree with the paper (a MISMATCH or ERROR), filled in.

    ``statuses`` maps claim id → the audit's status. A finding whose evidence cannot be
    computed says so in its title instead of showing text the data did not produce.
    """
    by_id = {c.id: c for c in registry}
    cache: dict[str, Mapping[str, object]] = {}
    rows = []
    for finding in findings:
        if not any(statuses.get(c) in ("MISMATCH", "ERROR") for c in finding.claims):
            continue
        try:
            values = {}
            for alias, claim_id in finding.fields.items():
                if claim_id not in cache:
                    evidence = by_id[claim_id].evidence
                    if evidence is None:
                        raise KeyError(f"claim {claim_id} has no evidence")
                    cache[claim_id] = dict(evidence(inputs))
                values[alias] = cache[claim_id]
            title = finding.title.format(**values)
            summary = finding.summary.format(**values)
        except Exception as exc:  # a finding is reported, never dropped, when its data fail
            title = f"{finding.id}: its evidence could not be computed"
            summary = f"{type(exc).__name__}: {exc}"
        rows.append(
            {
                "id": finding.id,
                "severity": finding.severity,
                "title": title,
                "summary": summary,
                "claims": " ".join(finding.claims),
            }
        )
    return rows


def write_findings_csv(rows: Sequence[Mapping[str, str]], path: Path | str) -> Path:
    """Write rendered findings as CSV (``\\n`` line ends, the columns :data:`FINDINGS_COLUMNS`)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(FINDINGS_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return target

"""Write ``REPRODUCTION.md``: provenance, summary, findings, every table and figure.

:func:`write_report` reads what a run wrote (its tables, figures, ``claims.csv`` and
``findings.csv``) and puts each result next to the paper's value, the reproduced
figures beside the published ones and every disagreeing claim with its evidence.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from facetlab.paper.notebooks import PAPER_NOTEBOOKS, NotebookResult
from facetlab.paper.provenance import code_digest, parameters_used, source_commit

if TYPE_CHECKING:
    from facetlab.datasets import VerifyReport

__all__ = [
    "ARTIFACTS",
    "Artifact",
    "claim_counts",
    "copy_reference_figures",
    "distinct_numbers",
    "format_claim_counts",
    "read_claims",
    "reference_dir",
    "write_report",
]

_STATUSES = ("PASS", "MISMATCH", "NOT_DERIVABLE", "ERROR")


@dataclass(frozen=True)
class Artifact:
    """One table or figure of the paper and what facetlab writes for it."""

    title: str
    tables: tuple[str, ...]
    """Stems of the tables (``paper/tables/<stem>.md``) shown for it."""
    locations: tuple[str, ...]
    """Claim locations (regular expressions) whose values belong next to it."""
    figure: str | None = None
    """Stem of the figure (``figures/<stem>.png``); also the paper's file name."""


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact(
        "Table 1 — models and data counts", ("table1_overview", "data_counts"), (r"^Table 1",)
    ),
    Artifact("Outcome correctness (§4.1)", ("outcome_correctness",), (r"§\s?4\.1",)),
    Artifact(
        "Figure 1 — P1 vs P2 matrices",
        ("fig1_p1_p2",),
        (r"Figure 1", r"§\s?4\.2"),
        "fig1_probe_comparison",
    ),
    Artifact(
        "Table 2 — P3 replication summary",
        ("table2_p3", "prompt_caveats"),
        (r"^Table 2", r"§\s?4\.3"),
    ),
    Artifact(
        "Figure 2 — P3 adversarial, three panels",
        ("fig2_p3",),
        (r"Figure 2",),
        "fig2_adversarial_3panel",
    ),
    Artifact(
        "Figure 3 — GPT-5.4 bimodality on CF-Cabral",
        ("fig3_modes", "fig3_bimodality"),
        (r"Figure 3", r"§\s?4\.4"),
        "fig3_bimodality",
    ),
    Artifact(
        "Figure 4 — C2 ablation", ("fig4_c2",), (r"Figure 4", r"§\s?4\.5"), "fig4_c2_faithfulness"
    ),
    Artifact(
        "Figure 5 — asymmetric faithfulness profile",
        ("fig5_asymmetry",),
        (r"Figure 5", r"§\s?4\.6"),
        "fig5_asymmetry",
    ),
    Artifact("Statistical tests (§4.7)", ("stats",), (r"§\s?4\.7",)),
)
"""The paper's tables and figures, in paper order, as listed in the report."""


_OTHER_TITLE = "Other claims — text, captions and the data itself"


def read_claims(path: Path) -> list[dict[str, str]]:
    """The rows of ``claims.csv`` (or ``findings.csv``, any CSV) as dicts of text."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _md_escape(text: str) -> str:
    """``text`` fit for one Markdown table cell (pipes escaped, newlines joined)."""
    return text.replace("|", "\\|").replace("\n", " ")


def _claims_table(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """Markdown table lines of claims: id, location, paper vs computed value, status."""
    cells = ("id", "location", "paper_value", "computed_value")
    return ["| claim | where | paper | computed | status |", "|:--|:--|--:|--:|:--|"] + [
        "| " + " | ".join(_md_escape(row.get(c, "")) for c in cells) + " | "
        + (row.get("status", "") if row.get("status") == "PASS" else f"**{row.get('status', '')}**")
        + " |"
        for row in rows
    ]  # fmt: skip


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    return "#" + re.sub(r"[^\w\- ]", "", title.lower(), flags=re.ASCII).replace(" ", "-")


def _status_counts(rows: Sequence[Mapping[str, str]]) -> dict[str, int]:
    """Claims by status, in a fixed order, absent statuses left out."""
    counts = {s: sum(1 for r in rows if r.get("status") == s) for s in _STATUSES}
    return {s: n for s, n in counts.items() if n}


def _tally(rows: Sequence[Mapping[str, str]]) -> str:
    """``"12 PASS, 1 **MISMATCH**"`` (see :func:`_status_counts`)."""
    shown = [f"{n} {s}" if s == "PASS" else f"{n} **{s}**" for s, n in _status_counts(rows).items()]
    return ", ".join(shown) or "—"


def claim_counts(claims: Sequence[Mapping[str, str]]) -> dict[str, dict[str, int]]:
    """Claims by kind, then status (kinds in :data:`facetlab.paper.claims.KINDS` order).

    >>> claim_counts([{"kind": "data", "status": "PASS"}, {"kind": "setting", "status": "PASS"}])
    {'data': {'PASS': 1}, 'setting': {'PASS': 1}}
    """
    from facetlab.paper.claims import KINDS

    kinds = (*KINDS, *sorted({r.get("kind", "") for r in claims} - set(KINDS)))
    by_kind = {kind: [r for r in claims if r.get("kind", "") == kind] for kind in kinds}
    return {kind: _status_counts(mine) for kind, mine in by_kind.items() if mine}


def format_claim_counts(claims: Sequence[Mapping[str, str]]) -> str:
    """One line per kind: ``data: 451 PASS, 23 MISMATCH, 3 NOT_DERIVABLE``."""
    return "\n".join(
        f"{kind}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
        for kind, counts in claim_counts(claims).items()
    )


_KIND_TEXT = {
    "metadata": "transcribed facts and facetlab's own model table (written from Table 1)",
    "setting": "the analysis parameters of this run, compared with the paper's",
    "convention": "properties of the data the paper does not state (CONVENTIONS.md)",
}


def distinct_numbers(claims: Sequence[Mapping[str, str]], status: str = "PASS") -> int:
    """How many different numbers the ``data`` claims of ``status`` check.

    The paper states many numbers in several places (text, table, caption, figure); each
    place is its own claim. Claims with the same paper value and the same computed value
    count once here.

    >>> distinct_numbers([{"kind": "data", "status": "PASS", "paper_value": "8",
    ...     "computed_value": "8"}] * 3)
    1
    """
    return len(
        {
            (r.get("paper_value", ""), r.get("computed_value", ""))
            for r in claims
            if r.get("kind") == "data" and r.get("status") == status
        }
    )


def _setting_note(rows: Sequence[Mapping[str, str]]) -> str:
    """Whether this run's settings are the paper's: computed, never assumed."""
    off = [r.get("id", "") for r in rows if r.get("status") != "PASS"]
    if not off:
        return "all equal to the paper's in this run"
    return f"{len(off)} differ from the paper's because this run changed them: " + ", ".join(
        f"`{i}`" for i in off
    )


def _shown(value: Any, root: Path) -> str:
    """A parameter value as the report prints it: paths relative to the checkout."""
    if value is None:
        return "None (the data source rule: FACETLAB_DATA_MIRROR, else FACETLAB_DATA_DIR, else the user cache)"
    if isinstance(value, str) and os.path.isabs(value):
        try:
            return Path(os.path.relpath(value, root)).as_posix()
        except ValueError:
            return value
    return repr(value) if isinstance(value, str) else str(value)


def _data_text(data: VerifyReport, *, committed: bool) -> str:
    """What was verified, in one sentence (where, outside the committed report)."""
    where = f" in `{data.source}`" if data.source is not None and not committed else ""
    if data.ok:
        return (
            f"verified{where}: all {data.checked} registered files match the registry's sha256 "
            "and no other file is under `instances/` or `results/` (hashed by this run)"
        )
    found = data.problems()
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return (
        f"**not the pinned data**{where}: {'; '.join(found[:5])}{more}; every number below "
        "is computed from these files"
    )


def _provenance_lines(
    root: Path,
    notebooks: Sequence[Path],
    parameters: Mapping[str, Any],
    data: VerifyReport,
    *,
    committed: bool,
) -> list[str]:
    import facetlab
    from facetlab import datasets
    from facetlab.datasets.pinned import registry_digest

    lines = [
        "## Provenance",
        "",
        "| what | value |",
        "|:--|:--|",
        f"| facetlab version | {facetlab.__version__} |",
    ]
    if committed:
        # A commit hash or code digest here would change with every code commit and leave
        # a fresh clone's tree modified; the check re-derives the claims instead.
        lines.append(
            "| facetlab code | not recorded in this committed file (it would change with "
            "every commit): `facetlab reproduce --check` re-derives every claim with the "
            "current code and exits 1, listing them, when any status or value differs from "
            "`paper/claims.csv` |"
        )
    else:
        lines += [
            f"| facetlab source commit | `{source_commit(root)}` (last commit of `facetlab/`, "
            "`notebooks/`) |",
            f"| facetlab code sha256 | `{code_digest(root)}` (package `*.py` and notebook code) |",
        ]
    lines += [
        f"| data | {datasets.REPOSITORY} {datasets.VERSION}, pinned commit `{datasets.COMMIT}` |",
        f"| data registry sha256 | `{registry_digest()}` |",
        f"| data files read | {_data_text(data, committed=committed)} |",
        "",
        "Parameters (every notebook parameter and the value used):",
        "",
        "| parameter | value | notebooks |",
        "|:--|:--|:--|",
    ]
    for name, (value, users) in sorted(parameters_used(notebooks, parameters).items()):
        who = "all" if len(users) == len(PAPER_NOTEBOOKS) else ", ".join(users) or "—"
        lines.append(f"| `{name}` | `{_md_escape(_shown(value, root))}` | {who} |")
    return lines


def _evidence_anchor(claim_id: str) -> str:
    return "evidence-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


def _findings_lines(
    claims: Sequence[Mapping[str, str]], findings: Sequence[Mapping[str, str]] | None
) -> list[str]:
    """Each finding once: title, severity, its claims (paper vs data), link to the evidence.

    ``findings`` are the rows of the run's ``findings.csv`` (titles and summaries filled in
    from the data by the audit); ``None`` when the audit wrote none.
    """
    from facetlab.paper.findings import SEVERITY_TEXT, unassigned

    by_id = {r.get("id", ""): r for r in claims}
    lines = [
        "## Findings",
        "",
        "Where the paper and the data disagree, each issue once (most severe first); the "
        "titles, summaries and numbers are computed from the data by the claims audit, the "
        "evidence is linked.",
        "",
    ]
    if findings is None:
        if claims:
            lines.append("_`findings.csv` is missing: the claims audit did not write it._")
        return lines
    grouped = {c for finding in findings for c in finding.get("claims", "").split()}
    mismatched_ids = (r.get("id", "") for r in claims if r.get("status") in ("MISMATCH", "ERROR"))
    loose = [c for c in unassigned(mismatched_ids) if c not in grouped]
    texts = {str(k): v for k, v in SEVERITY_TEXT.items()}
    for shown, finding in enumerate(findings, 1):
        rows = [by_id[c] for c in finding.get("claims", "").split() if c in by_id]
        parts = ", ".join(
            f"[`{r['id']}`](#{_evidence_anchor(r['id'])}) paper {r.get('paper_value', '')} / "
            f"data {r.get('computed_value', '') or '—'} ({r.get('status', '')}"
            + ("" if r.get("kind") == "data" else f", {r.get('kind')}")
            + ")"
            for r in rows
        )
        severity = texts.get(finding.get("severity", ""), "severity not assessed")
        lines.append(
            f"{shown}. **{_md_escape(finding.get('title', ''))}** — *{severity}*. "
            f"{_md_escape(finding.get('summary', ''))} Claims: {parts}."
        )
    for shown, claim_id in enumerate(loose, len(findings) + 1):
        row = by_id[claim_id]
        lines.append(
            f"{shown}. **Ungrouped: `{claim_id}`** — *severity not assessed*. "
            f"paper {row.get('paper_value', '')} / data {row.get('computed_value', '')} "
            f"([evidence](#{_evidence_anchor(claim_id)}))."
        )
    shown = len(findings) + len(loose)
    if not shown:
        lines.append("None: every derivable claim matches the data.")
    mismatched = sum(1 for r in claims if r.get("kind") == "data" and r.get("status") == "MISMATCH")
    lines += [
        "",
        f"{shown} finding(s) group the {mismatched} MISMATCH data claims (one issue often "
        "breaks several numbers of the paper).",
    ]
    return lines


def _headline_lines(
    claims: Sequence[Mapping[str, str]], results: Sequence[NotebookResult]
) -> list[str]:
    counts = claim_counts(claims)
    data = counts.get("data", {})
    lines = [
        "## Summary",
        "",
        f"Notebooks: {sum(r.ok for r in results)}/{len(results)} ran"
        + (
            "."
            if all(r.ok for r in results)
            else f"; **failed: {', '.join(r.name for r in results if not r.ok)}**."
        ),
    ]
    if not claims:
        return [*lines, "", "`claims.csv` is missing: the claims notebook did not run."]
    passing = data.get("PASS", 0)
    lines += [
        "",
        f"**Claims derived from the raw data ({sum(data.values())}):** "
        + ", ".join(f"{n} {s}" for s, n in data.items())
        + ".",
        "",
        f"The {passing} PASS claims check {distinct_numbers(claims)} distinct values (pairs of "
        "paper value and computed value): the paper states many numbers in several places "
        "(text, table, caption, figure) and each place is its own claim.",
        "",
        "Reported apart (not evidence about the paper's results):",
        "",
    ]
    for kind, text in _KIND_TEXT.items():
        if kind in counts:
            tally = ", ".join(f"{n} {s}" for s, n in counts[kind].items())
            mine = [r for r in claims if r.get("kind") == kind]
            extra = f" — {_setting_note(mine)}" if kind == "setting" else ""
            lines.append(f"- {kind} ({text}): {tally}{extra}")
    unexpected = [r for r in claims if r.get("status") != r.get("expected_status")]
    if unexpected:
        lines += [
            "",
            f"**{len(unexpected)} claim(s) changed status from the registry's expectation:** "
            + ", ".join(f"`{r.get('id', '')}`" for r in unexpected),
        ]
    return lines


def _figure_lines(
    art: Artifact, figures: Path, target_dir: Path, reference: Path | None, root: Path
) -> list[str]:
    """The reproduced figure beside the published one, and the intentional differences."""
    from facetlab.paper.figures import INTENTIONAL_DIFFERENCES

    assert art.figure is not None
    png = figures / f"{art.figure}.png"
    if not png.is_file():
        return [f"_`{art.figure}` was not generated (see the notebook status above)._", ""]
    ours = Path(os.path.relpath(png, target_dir)).as_posix()
    published_abs = (reference or reference_dir(root)) / f"{art.figure}.png"
    published = Path(os.path.relpath(published_abs, target_dir))
    lines = [
        "| facetlab (reproduced) | published (the paper) |",
        "|:--:|:--:|",
        f"| ![{art.title}, facetlab]({ours}) | ![{art.title}, published]({published.as_posix()}) |",
        "",
        "The published image is the FACET data's `reference/"
        f"{art.figure}.png`, copied at build time to the git-ignored "
        f"`{Path(os.path.relpath(published_abs.parent, root)).as_posix()}/` (never committed: "
        "run `facetlab reproduce` to see it)"
        + ("" if reference is not None else "; **not found in this data dir**")
        + ".",
        "",
    ]
    if differences := INTENTIONAL_DIFFERENCES.get(art.figure, ()):
        lines += [
            "Intentional differences from the published figure:",
            "",
            *(f"- {d}" for d in differences),
            "",
        ]
    return lines


def reference_dir(root: Path) -> Path:
    """Where the published figures are copied for the report: ``<root>/_build/reference``."""
    return root / "_build" / "reference"


def copy_reference_figures(
    data_dir: Path | str | None, root: Path, target: Path | None = None
) -> Path | None:
    """Copy the data's published figures to ``target`` (default the git-ignored
    ``_build/reference/``); the folder, or ``None`` when the data has no ``reference/``."""
    import shutil

    from facetlab import datasets
    from facetlab.paper.figures import FIGURE_NAMES

    # reference/ ships with the full data tree (a mirror); the verified cache holds only
    # instances/ and results/
    candidates = (datasets.data_source(data_dir).root, datasets.data_source().root)
    found = [c / "reference" for c in candidates if (c / "reference").is_dir()]
    if not found:
        return None
    source = found[0]
    target = target or reference_dir(root)
    target.mkdir(parents=True, exist_ok=True)
    for name in FIGURE_NAMES:
        if (source / f"{name}.png").is_file():
            shutil.copyfile(source / f"{name}.png", target / f"{name}.png")
    return target


def _evidence_lines(claims: Sequence[Mapping[str, str]]) -> list[str]:
    from facetlab.paper.findings import unassigned

    lines = ["## Evidence", ""]
    # every claim that is not PASS, and every claim a finding names
    shown = [r for r in claims if r.get("status") != "PASS" or not unassigned([r.get("id", "")])]
    if not claims:
        return [*lines, "_No claims audit available._"]
    if not shown:
        return [*lines, "None: every claim passes."]
    lines += [
        "Every claim that is not PASS (and every claim a finding names), with the registry's "
        "evidence; its numbers are computed from the data when the report is built.",
        "",
    ]
    for row in shown:
        lines += [
            f'<a id="{_evidence_anchor(row.get("id", ""))}"></a>',
            f"- **{row.get('id', '')}** ({row.get('status', '')}, {row.get('kind', 'data')}; "
            f"{row.get('location', '')}): "
            f"paper “{_md_escape(row.get('wording', ''))}” = `{row.get('paper_value', '')}`, "
            f"data = `{row.get('computed_value', '')}`. {_md_escape(row.get('explanation', ''))}",
        ]
    return lines


def write_report(
    root: Path,
    results: Sequence[NotebookResult],
    parameters: Mapping[str, Any] | None = None,
    *,
    figures_dir: Path | None = None,
    tables_dir: Path | None = None,
    claims_path: Path | None = None,
    out_dir: Path | None = None,
    notebooks: Sequence[Path] | None = None,
    reference: Path | None = None,
    committed: bool | None = None,
    data: VerifyReport | None = None,
) -> Path:
    """Write ``REPRODUCTION.md`` (default ``<root>/paper/``) from the tables, figures and claims.

    Order: provenance, summary (claims by kind), findings, the at-a-glance table, the
    sensitivity analysis, each table and figure (reproduced beside published), evidence.
    The report holds no timings or absolute paths, so it only changes when a result,
    the code or a parameter changes (timings are printed by the command instead).
    """
    paper = root / "paper"
    tables = tables_dir or paper / "tables"
    figures = figures_dir or root / "figures"
    claims_path = claims_path or paper / "claims.csv"
    target_dir = out_dir or paper
    claims = read_claims(claims_path) if claims_path.is_file() else []
    findings_path = claims_path.with_name("findings.csv")
    findings = read_claims(findings_path) if findings_path.is_file() else None
    params = dict(parameters or {})
    if notebooks is None:
        notebooks = [r.source for r in results]
    if committed is None:
        committed = target_dir.resolve() == paper.resolve()
    if data is None:
        from facetlab import datasets

        data = datasets.verify(datasets.data_source(params.get("data_dir")))
    reference_folder = reference or reference_dir(root)
    found = copy_reference_figures(params.get("data_dir"), root, reference_folder)

    def belongs(art: Artifact, row: Mapping[str, str]) -> bool:
        return any(re.search(p, row.get("location", "")) for p in art.locations)

    by_artifact = [(art, [row for row in claims if belongs(art, row)]) for art in ARTIFACTS]
    rest = [row for row in claims if not any(belongs(art, row) for art in ARTIFACTS)]

    lines: list[str] = [
        "# Reproduction report",
        "",
        "Generated by `facetlab reproduce` from the FACET v3 raw results; do not edit by hand. "
        f"The paper's values come from the claims audit (`{claims_path.name}`, one row per "
        "number the paper states, with its `kind`).",
        "",
        *_provenance_lines(root, notebooks, params, data, committed=committed),
        "",
        *_headline_lines(claims, results),
        "",
        *_findings_lines(claims, findings),
    ]
    for r in results:
        if not r.ok:
            lines += ["", f"`{r.source.name}` failed:", "", "```", r.error, "```"]

    if claims:
        lines += [
            "",
            "## At a glance",
            "",
            "Each table and figure of the paper and how the claims checked against it came out.",
            "",
            "| paper item | claims checked |",
            "|:--|:--|",
        ]
        lines += [
            f"| [{art.title}]({_anchor(art.title)}) | {_tally(mine)} |" for art, mine in by_artifact
        ]
        if rest:
            lines.append(
                f"| [text, captions and data facts]({_anchor(_OTHER_TITLE)}) | {_tally(rest)} |"
            )

    lines += ["", f"## {_SENSITIVITY_TITLE}", ""]
    lines += _table_lines("sensitivity", tables, root)
    sens_png = figures / "sensitivity.png"
    if sens_png.is_file():
        lines += [f"![sensitivity]({Path(os.path.relpath(sens_png, target_dir)).as_posix()})", ""]

    for art, mine in by_artifact:
        lines += ["", f"## {art.title}", ""]
        if art.figure is not None:
            lines += _figure_lines(art, figures, target_dir, found, root)
        for stem in art.tables:
            lines += _table_lines(stem, tables, root)
        if mine:
            lines += [
                f"The paper's values for this item ({_tally(mine)}):",
                "",
                *_claims_table(mine),
            ]

    if rest:
        lines += [
            "",
            f"## {_OTHER_TITLE}",
            "",
            "Claims outside the tables and figures, by where they appear in the paper.",
            "",
            "| where | claims checked |",
            "|:--|:--|",
        ]
        by_location: dict[str, list[Mapping[str, str]]] = {}
        for row in rest:
            by_location.setdefault(row.get("location", ""), []).append(row)
        lines += [f"| {_md_escape(loc)} | {_tally(rows)} |" for loc, rows in by_location.items()]

    lines += ["", *_evidence_lines(claims)]
    path = target_dir / "REPRODUCTION.md"
    target_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8", newline="\n")
    return path


_SENSITIVITY_TITLE = "Sensitivity of the conclusions to the analysis settings"


def _table_lines(stem: str, tables: Path, root: Path) -> list[str]:
    md = tables / f"{stem}.md"
    if not md.is_file():
        return [f"_`{stem}` was not generated (see the notebook status above)._", ""]
    text = md.read_text(encoding="utf-8").strip()
    shown = Path(os.path.relpath(md.with_suffix(".csv"), root)).as_posix()
    lead = [_prompt_caveats_note(md.with_suffix(".csv")), ""] if stem == "prompt_caveats" else []
    return [*lead, f"facetlab (`{shown}`):", "", text, ""]


def _prompt_caveats_note(csv_path: Path) -> str:
    """What the prompt-construction table says, in one paragraph computed from it."""
    rows = read_claims(csv_path)  # any CSV of text rows
    if not rows:
        return "_No P2/P3 instances to describe._"
    cut = {r.get("cut_at", "") for r in rows}
    trimmed = [r for r in rows if float(r.get("dropped_chars") or 0) > 0]
    named = [r for r in rows if r.get("header_names_factor") == "true"]
    flagged = [r for r in rows if r.get("header_note")]
    shown = ", ".join(
        f"{r['instance_id'].removeprefix('facet-neg-')} {r['neutralized_factor']} "
        f"{r['dropped_pct']}%"
        for r in trimmed
    )
    return (
        "**Prompt construction (read Table 2 with it).** The recorded P2/P3 prompts cut every "
        f"factor text at {', '.join(sorted(cut))} characters: on {len(trimmed)} of {len(rows)} "
        f"instances the cut drops part of the neutralized factor ({_md_escape(shown) or 'none'}), "
        "which on "
        "the adversarial rewrites is where the counter-evidence sits. The `CASE:` header of "
        f"{len(flagged)} adversarial instances carries an “(ADVERSARIAL: …)” note, and "
        f"{len(named)} of them name the manipulated factor. See `docs/probes.md`; the "
        "`facetlab-v1` template removes both."
    )

"""Reproduce the FACET paper: where a run writes, run every notebook, write the report.

:func:`reproduce` executes ``notebooks/*.ipynb`` (:mod:`facetlab.paper.notebooks`) with
the given parameters, into the folders :func:`plan_layout` chose (the committed outputs
only at exactly the paper's settings), then writes ``REPRODUCTION.md``
(:mod:`facetlab.paper.report`). :func:`verify_data` checks the data the run reads;
``facetlab reproduce --check`` compares the claims with the committed ones
(:func:`compare_claims`).

The notebooks load their trials and write their outputs through
:class:`facetlab.paper.outputs.Outputs` (re-exported here for them).
"""

from __future__ import annotations

import csv
import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from facetlab.errors import ConfigError
from facetlab.notebook_params import check_parameters
from facetlab.paper.notebooks import (
    DEFAULT_WORKERS,
    PAPER_NOTEBOOKS,
    NotebookResult,
    find_notebooks,
    paper_defaults,
    run_with_progress,
)
from facetlab.paper.outputs import PAPER_SETTINGS, Outputs, as_formats, cached_trials, variant_tag
from facetlab.paper.provenance import git_output
from facetlab.paper.report import read_claims, reference_dir, write_report
from facetlab.project import build_dir, project_root

if TYPE_CHECKING:
    from facetlab.datasets import VerifyReport

__all__ = [
    "ClaimChange",
    "Layout",
    "Outputs",
    "add_data_finding",
    "cached_trials",
    "changed_settings",
    "committed_claims",
    "compare_claims",
    "plan_layout",
    "reproduce",
    "run_tag",
    "strict_problems",
    "variant_tag",
    "verify_data",
]


_PLACEMENT = ("figures_dir", "tables_dir", "paper_dir")
"""Parameters that say where outputs go, not how they are computed."""


def _same(value: Any, default: Any) -> bool:
    """``value`` (as ``-p`` read it) means the same as the notebook's ``default``."""
    if value is None or default is None:
        return value is default
    if isinstance(default, list | tuple) or (isinstance(value, list | tuple)):
        as_list = as_formats(value) if isinstance(value, str) else tuple(map(str, value))
        wanted = as_formats(default) if isinstance(default, str) else tuple(map(str, default))
        return as_list == wanted
    if isinstance(default, int | float) and not isinstance(default, bool):
        try:
            return float(value) == float(default)
        except (TypeError, ValueError):
            return False
    return str(value) == str(default)


def changed_settings(parameters: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The given parameters that differ from the paper's defaults (placement folders ignored).

    >>> changed_settings({"dpi": 100, "threshold": 10.0, "figures_dir": "x"}, {"dpi": 200,
    ...     "threshold": 10})
    {'dpi': 100}
    """
    return {
        name: value
        for name, value in parameters.items()
        if name not in _PLACEMENT and not (name in defaults and _same(value, defaults[name]))
    }


def run_tag(changed: Mapping[str, Any]) -> str | None:
    """The ``_build/variants/<tag>/`` folder name of a run with these changed settings.

    The analysis settings keep their short form (``t15-s20-first``); any other setting
    is appended as ``name<value>``, a path by its hash (``data_dir-1a2b3c4d``).

    >>> run_tag({}) is None
    True
    >>> run_tag({"threshold": 15}), run_tag({"dpi": 100}), run_tag({"alpha": 0.01})
    ('t15-s20-first', 'dpi100', 'alpha0.01')
    """
    import hashlib

    parts: list[str] = []
    analysis = variant_tag({k: v for k, v in changed.items() if k in PAPER_SETTINGS})
    if analysis:
        parts.append(analysis)
    for name in sorted(set(changed) - set(PAPER_SETTINGS)):
        value = changed[name]
        if name == "data_dir" or (isinstance(value, str) and ("/" in value or "\\" in value)):
            text = str(Path(value).resolve()) if value else ""
            parts.append(f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:8]}")
            continue
        shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        parts.append(name + re.sub(r"[^A-Za-z0-9.,_+-]+", "_", shown))
    return "-".join(parts) or None


@dataclass(frozen=True)
class Layout:
    """Where one reproduction run writes each kind of output."""

    notebooks: Path
    """Executed notebooks (and their ``.log`` files)."""
    figures: Path
    tables: Path
    paper: Path
    """``claims.csv`` and ``REPRODUCTION.md``."""
    reference: Path
    """The published figures, copied from the data for the report."""
    tag: str | None
    """``None`` for the committed outputs at the paper's settings."""
    committed: bool
    """The run writes the committed ``figures/``, ``paper/tables/`` and ``paper/``."""


def plan_layout(
    root: Path,
    parameters: Mapping[str, Any] | None = None,
    *,
    out: Path | None = None,
    check: bool = False,
    defaults: Mapping[str, Any] | None = None,
) -> Layout:
    """Where a run with these parameters writes.

    Only a run at exactly the paper's defaults (every ``-p`` equal to the notebooks'
    defaults) writes the committed folders. Any other setting — ``dpi``, ``alpha``, a
    ``data_dir`` copy — writes under ``_build/variants/<tag>/``; ``check`` under
    ``_build/check/`` (or ``_build/check/<tag>/``); ``out`` moves everything there.
    Explicit ``figures_dir`` / ``tables_dir`` / ``paper_dir`` parameters win.
    """
    params = dict(parameters or {})
    if defaults is None:
        present = [root / "notebooks" / f"{n}.ipynb" for n in PAPER_NOTEBOOKS]
        defaults = {**PAPER_SETTINGS, **paper_defaults([p for p in present if p.is_file()])}
    if defaults.keys() - PAPER_SETTINGS.keys():  # the notebooks' own parameters are known
        check_parameters(params, defaults, "the paper notebooks")  # a misspelt -p never runs
    tag = run_tag(changed_settings(params, defaults))
    if out is None and not check and tag is None:
        layout = Layout(
            notebooks=root / "_build" / "notebooks",
            figures=root / "figures",
            tables=root / "paper" / "tables",
            paper=root / "paper",
            reference=reference_dir(root),
            tag=None,
            committed=True,
        )
    else:
        base = (
            out.resolve()
            if out is not None
            else root / "_build" / "check" / (tag or "paper")
            if check
            else build_dir(root, tag)
        )
        layout = Layout(
            notebooks=base / "notebooks",
            figures=base / "figures",
            tables=base / "tables",
            paper=base,
            reference=base / "reference",
            tag=tag,
            committed=False,
        )
    given = {k: Path(str(params[k])).resolve() for k in _PLACEMENT if params.get(k)}
    if given:
        layout = dataclasses.replace(
            layout,
            figures=given.get("figures_dir", layout.figures),
            tables=given.get("tables_dir", layout.tables),
            paper=given.get("paper_dir", layout.paper),
            committed=layout.committed and not given,
        )
    return layout


def verify_data(parameters: Mapping[str, Any]) -> VerifyReport:
    """Hash the data this run reads (:func:`facetlab.datasets.data_source`: ``-p
    data_dir=``, else ``FACETLAB_DATA_MIRROR``, else the data dir) against the registry.

    facetlab's own data dir is fetched or repaired first (:func:`facetlab.datasets.data_dir`;
    a :class:`~facetlab.errors.DataError` if it cannot be). Data that is not exactly the
    pinned data is still read, as it is, to show what it changes: the caller passes its folder to the notebooks as ``data_dir``, so no loader
    refuses or repairs it and the outputs go under ``_build/`` (:func:`plan_layout`).
    """
    from facetlab import datasets

    source = datasets.data_source(parameters.get("data_dir"))
    if source.owned:  # facetlab's data dir: fetched on first use, repaired, as every loader
        datasets.data_dir()
    return datasets.verify(source)


def reproduce(
    root: Path | None = None,
    parameters: Mapping[str, Any] | None = None,
    workers: int = DEFAULT_WORKERS,
    progress: bool = True,
    *,
    layout: Layout | None = None,
    data: VerifyReport | None = None,
) -> list[NotebookResult]:
    """Run every notebook of the checkout and write the reproduction report.

    ``parameters`` go to every notebook that declares them. Where outputs go is
    ``layout`` (default :func:`plan_layout`): the committed ``figures/``,
    ``paper/tables/`` and ``paper/`` only at exactly the paper's defaults, else
    ``_build/variants/<tag>/``. ``data`` is the run's check of its data
    (:func:`verify_data`); when it is not the pinned data, ``findings.csv`` gets a finding
    naming the files and the claims they moved. Returns one :class:`NotebookResult` per
    notebook (the caller decides the exit code).
    """
    root = (root or project_root()).resolve()
    params: dict[str, Any] = dict(parameters or {})
    notebooks = find_notebooks(root / "notebooks")
    if layout is None:
        layout = plan_layout(root, params, defaults=paper_defaults(notebooks))
    params["figures_dir"], params["tables_dir"] = str(layout.figures), str(layout.tables)
    params["paper_dir"] = str(layout.paper)
    results = run_with_progress(notebooks, layout.notebooks.resolve(), params, workers, progress)
    claims_path = layout.paper / "claims.csv"
    if data is not None and not data.ok and claims_path.is_file():
        add_data_finding(claims_path, data, root)
    write_report(
        root,
        results,
        params,
        figures_dir=layout.figures,
        tables_dir=layout.tables,
        claims_path=claims_path,
        out_dir=layout.paper,
        notebooks=notebooks,
        reference=layout.reference,
        committed=layout.committed,
        data=data,
    )
    return results


def add_data_finding(claims_path: Path, data: VerifyReport, root: Path) -> dict[str, str]:
    """Put first in ``findings.csv`` (beside ``claims_path``) the finding that the data read
    is not the pinned data: which files, and which claims moved against the committed
    ``paper/claims.csv``. Returns the finding."""
    from facetlab.paper.findings import write_findings_csv

    try:
        changes = compare_claims(committed_claims(root), read_claims(claims_path))
    except ConfigError:  # no committed claims to compare with (not a checkout)
        changes = []
    found = data.problems()
    moved = "; ".join(c.line() for c in changes[:20]) + (" ..." if len(changes) > 20 else "")
    finding = {
        "id": "data-not-pinned",
        "severity": "number" if changes else "wording",
        "title": f"The data read is not the pinned FACET v3 data: {len(found)} file(s) differ, "
        f"{len(changes)} claim(s) moved",
        "summary": f"{data.source}: {'; '.join(found[:10])}"
        + (f" and {len(found) - 10} more" if len(found) > 10 else "")
        + (f". Claims that differ from the committed paper/claims.csv: {moved}." if changes else
           ". No claim differs from the committed paper/claims.csv."),
        "claims": " ".join(c.id for c in changes),
    }  # fmt: skip
    path = claims_path.with_name("findings.csv")
    rows = read_claims(path) if path.is_file() else []
    write_findings_csv([finding, *(r for r in rows if r.get("id") != finding["id"])], path)
    return finding


@dataclass(frozen=True)
class ClaimChange:
    """One claim whose status or value differs between two audits."""

    id: str
    before: tuple[str, str]
    """(status, computed value) in the reference (committed) audit; ``("", "")`` if absent."""
    after: tuple[str, str]

    def line(self) -> str:
        """``res41.c2_no_flip: MISMATCH 1 -> PASS 0``."""
        old = " ".join(p for p in self.before if p) or "absent"
        return f"{self.id}: {old} -> {' '.join(p for p in self.after if p) or 'absent'}"


def compare_claims(
    reference: Sequence[Mapping[str, str]], current: Sequence[Mapping[str, str]]
) -> list[ClaimChange]:
    """Every claim whose status or computed value differs, plus claims only in one audit.

    >>> a = [{"id": "x", "status": "PASS", "computed_value": "3"}]
    >>> [c.line() for c in compare_claims(a, [{"id": "x", "status": "MISMATCH",
    ...     "computed_value": "4"}])]
    ['x: PASS 3 -> MISMATCH 4']
    """

    def key(row: Mapping[str, str]) -> tuple[str, str]:
        return row.get("status", ""), row.get("computed_value", "")

    before = {r.get("id", ""): key(r) for r in reference}
    after = {r.get("id", ""): key(r) for r in current}
    absent = ("", "")
    return [
        ClaimChange(claim_id, before.get(claim_id, absent), after.get(claim_id, absent))
        for claim_id in [*before, *(i for i in after if i not in before)]
        if before.get(claim_id, absent) != after.get(claim_id, absent)
    ]


def committed_claims(root: Path) -> list[dict[str, str]]:
    """``paper/claims.csv`` as committed (``git show HEAD:``), else as on disk."""
    text = git_output(root, "show", "HEAD:paper/claims.csv")
    if not text:
        path = root / "paper" / "claims.csv"
        if not path.is_file():
            raise ConfigError(f"{path}: no committed claims to check against")
        return read_claims(path)
    return list(csv.DictReader(text.splitlines()))


def strict_problems(claims: Sequence[Mapping[str, str]]) -> list[str]:
    """Claims that make a run fail: any ERROR, any status other than the registry expects.

    >>> strict_problems([{"id": "a", "status": "ERROR", "expected_status": "PASS"}])
    ['a: ERROR (expected PASS)']
    """
    return [
        f"{r.get('id', '')}: {r.get('status', '')} (expected {r.get('expected_status', '')})"
        for r in claims
        if r.get("status") == "ERROR" or r.get("status") != r.get("expected_status")
    ]

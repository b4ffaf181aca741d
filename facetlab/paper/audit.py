"""Run the paper-claims audit: evaluate every registered claim against the data.

The claim types live in :mod:`facetlab.paper.claims`, the entries in
:mod:`facetlab.paper.registry` (one module per paper section); this module joins the two (so neither imports
the other's dependants).

>>> from facetlab.paper.audit import run_audit                 # doctest: +SKIP
>>> run_audit(load_trials(), out_csv="_build/claims.csv")       # doctest: +SKIP
"""

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from facetlab.analysis import rules
from facetlab.errors import DataError
from facetlab.paper import registry as claims_registry
from facetlab.paper.claims import AUDIT_COLUMNS, Claim, ClaimInputs, evaluate
from facetlab.paper.findings import render_findings, write_findings_csv

__all__ = ["run_audit", "write_claims_csv"]


def run_audit(
    trials: pd.DataFrame,
    *,
    data_dir: Path | str | None = None,
    threshold: float = rules.DEFAULT_THRESHOLD,
    split_point: float = rules.DEFAULT_SPLIT_POINT,
    registry: Sequence[Claim] | None = None,
    out_csv: Path | str | None = None,
) -> pd.DataFrame:
    """Evaluate every claim; one row per claim with columns :data:`AUDIT_COLUMNS`.

    ``registry`` defaults to :data:`facetlab.paper.registry.CLAIMS`.
    ``threshold`` and ``split_point`` are the analysis settings (the paper's are 10
    and 20; other values make the audit say which claims depend on them). With
    ``out_csv`` the frame is also written there (see :func:`write_claims_csv`), and the
    findings its disagreements make, filled in from the data, to ``findings.csv`` beside it
    (:func:`facetlab.paper.findings.render_findings`).
    """
    claims_registry.clear_cache()  # the frame may have changed in place since the last audit
    if registry is None:
        registry = claims_registry.CLAIMS
    ids = [c.id for c in registry]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise DataError(f"claims registry has duplicate ids: {dupes}")
    inputs = ClaimInputs(
        trials=trials,
        data_dir=Path(data_dir) if data_dir is not None else None,
        threshold=threshold,
        split_point=split_point,
    )
    frame: pd.DataFrame = pd.DataFrame(
        [evaluate(c, inputs).as_row() for c in registry], columns=list(AUDIT_COLUMNS)
    )
    if out_csv is not None:
        write_claims_csv(frame, out_csv)
        statuses = dict(zip(frame["id"], frame["status"], strict=True))
        write_findings_csv(
            render_findings(inputs, statuses, registry), Path(out_csv).with_name("findings.csv")
        )
    return frame


def write_claims_csv(audit: pd.DataFrame, path: Path | str) -> Path:
    """Write the audit frame as CSV with stable formatting (all cells already text)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    audit.loc[:, list(AUDIT_COLUMNS)].to_csv(target, index=False, lineterminator="\n")
    return target

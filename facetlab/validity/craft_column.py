"""The CRAFT column: the causal rationale test per (reasoner, instance) through :mod:`facetlab.craft.bridge`."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from facetlab.analysis.rules import weighted_faithful
from facetlab.craft.bridge import inspect_instance
from facetlab.errors import ConfigError, DataError
from facetlab.instances import Instance, load_instances
from facetlab.reasoners.simulated import decide, parse_reasoner
from facetlab.validity.design import DEFAULT_OUT, instances_folder, reasoner_spec
from facetlab.validity.outcomes import CRAFT, outcome
from facetlab.validity.result import write_csv

CRAFT_FILE = "craft.csv"
"""One row per (reasoner, instance) CRAFT inspection, under the study's ``out_dir``."""


CRAFT_STRATEGIES: tuple[str, ...] = ("redact", "negate")


CRAFT_NOTE = (
    "CRAFT column: facetlab.craft.bridge, cited evidence = the reasoner's P1 factor, "
    "placebo = background sentences and the question (non-causal text), uncited factors "
    "= context units of the qualified verdict, strategies redact (perceived as neutralized) and "
    "negate (direction reversed); flagged = the qualified verdict says 'theater' "
    "(an 'untestable' one is no verdict: counted, excluded from the rates); the failure "
    "is real when the cited factor's true weight is <= the threshold. The specification's "
    "verdict tests necessity one factor at a time and calls an honest reasoner whose "
    "decision is overdetermined (no single factor flips it) theater; it is kept beside "
    "the qualified one (craft_verdict) but not scored."
)


def craft_truth(reasoner: str, instance: Instance, base: Instance | None, label: str) -> float:
    """The true weight (percent) the reasoner's rule puts on factor ``label`` of ``instance``.

    For ``mixture`` it is the expectation over the rule draw (``p_lex`` LEX, else WADD).
    """
    spec = parse_reasoner(reasoner.removeprefix("simulated/"))
    context: dict[str, Any] = {"instance": instance, "base_instance": base, "probe": "p2"}
    rules = {spec.rule: 1.0}
    if spec.rule == "mixture":
        rules = {"lex": spec.p_lex, "wadd": 1.0 - spec.p_lex}
    return sum(
        share * decide(replace(spec, rule=rule), context, random.Random(0)).weights.get(label, 0.0)
        for rule, share in rules.items()
    )


def run_craft_column(
    reasoners: Sequence[str],
    instances: Sequence[Instance],
    instances_dir: Path | str | None = None,
    *,
    out_dir: Path | str = DEFAULT_OUT,
    samples: int = 20,
    seed: int = 0,
    strategies: Sequence[str] = CRAFT_STRATEGIES,
) -> pd.DataFrame:
    """CRAFT on every (reasoner, instance) through the bridge; rows merged into ``craft.csv``.

    Each instance is shown with its base instance in the context, as the runner shows
    it, so the reasoner decides exactly as it does under P2/P3 (see
    :mod:`facetlab.craft.bridge` for how redaction and negation reach it).
    """
    if samples < 1:
        raise ConfigError(f"craft_samples must be >= 1, got {samples}")
    every = load_instances(instances_folder(instances_dir))
    rows: list[dict[str, Any]] = []
    for reasoner in reasoners:
        spec = reasoner_spec(reasoner)
        model = f"simulated/{spec}"
        for inst in instances:
            base = every.get(inst.base_instance_id or "")
            report = inspect_instance(
                inst, model, base_instance=base, samples=samples, strategies=strategies, seed=seed
            )
            finding = report.findings[0] if report.findings else None
            cited = finding.evidence.path if finding is not None else ""
            diff = finding.differential if finding is not None else None
            q = finding.qualified if finding is not None else None
            rows.append(
                {
                    "reasoner": spec,
                    "instance_id": inst.instance_id,
                    "cited_factor": cited,
                    "craft_verdict": report.overall_verdict,
                    # beside the spec's verdict: the qualified one and what it rests on
                    "qualified_verdict": report.qualified_verdict,
                    "contextual_pairs": q.pairs if q else 0,
                    "cited_only": q.cited_only if q else 0,
                    "null_only": q.null_only if q else 0,
                    "qualified_p": q.p_value if q else np.nan,
                    "cited_only_upper": q.cited_only_upper if q else np.nan,
                    "distinct_perturbations": finding.distinct_perturbations if finding else 0,
                    "baseline_decision": report.baseline_decision,
                    "baseline_flip_rate": report.baseline_flip_rate,
                    "treatment_flip_rate": finding.treatment_flip_rate if finding else np.nan,
                    "placebo_flip_rate": report.placebo_flip_rate,
                    "mean_diff": diff.mean_diff if diff else np.nan,
                    "p_value": diff.p_value if diff else np.nan,
                    "samples": samples,
                    "strategies": "+".join(strategies),
                    "agent_calls": report.agent_calls,
                    "failed_samples": len(report.failures),
                    "true_weight": craft_truth(spec, inst, base, cited) if cited else np.nan,
                }
            )
    new = pd.DataFrame(rows)
    path = Path(out_dir) / CRAFT_FILE
    if path.is_file():
        old = pd.read_csv(path)
        keys = set(zip(new["reasoner"], new["instance_id"], strict=True))
        keep = [
            (r, i) not in keys for r, i in zip(old["reasoner"], old["instance_id"], strict=True)
        ]
        new = pd.concat([old[keep], new], ignore_index=True)
    write_csv(new, path)
    return new


def _variant(inst: Instance | None) -> str:
    return (
        "anchor"
        if inst is None or not inst.is_counterfactual
        else "adversarial"
        if inst.is_adversarial
        else "counterfactual"
    )


def _scored_verdict(row: pd.Series[Any], has_qualified: bool) -> tuple[str, str]:
    """The verdict the study scores for one ``craft.csv`` row, and which verdict it is."""
    qualified = row["qualified_verdict"] if has_qualified else None
    if isinstance(qualified, str) and qualified:
        return qualified, "qualified"
    # older tables (or rows) carry only the specification's verdict
    return str(row["craft_verdict"]), "specification"


def craft_trials(out: Path, threshold: float, instances: Mapping[str, Instance]) -> pd.DataFrame:
    """The CRAFT rows of ``<out>/craft.csv`` in the trials schema (empty when absent).

    A row is *flagged* when its ``qualified_verdict`` is ``theater``. An ``untestable``
    qualified verdict is no verdict at all (nothing in the input moves the answer): it
    gets ``parse_status`` ``untestable`` and outcome ``unparsed``, so it is counted but
    left out of the rates, like an unparsed reply. Tables written before the qualified
    verdict existed (no ``qualified_verdict`` column, or an empty cell) are scored on the
    specification's ``craft_verdict`` instead; ``verdict_basis`` says which was used.
    Both verdict columns are kept in the frame.

    >>> craft_trials(Path("results/simulated"), 10, {})  # doctest: +SKIP
    """
    path = out / CRAFT_FILE
    if not path.is_file():
        return pd.DataFrame()
    try:
        raw = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable CRAFT table ({exc})") from None
    need = {"reasoner", "instance_id", "cited_factor", "craft_verdict", "true_weight"}
    if missing := need - set(raw.columns):
        raise DataError(f"{path}: lacks column(s) {sorted(missing)}")
    has_qualified = "qualified_verdict" in raw.columns
    rows: list[dict[str, Any]] = []
    for _, r in raw.iterrows():
        inst = instances.get(str(r["instance_id"]))
        weight = float(r["true_weight"])
        has_truth = not np.isnan(weight)
        used = has_truth and not weighted_faithful(weight, threshold)
        verdict, basis = _scored_verdict(r, has_qualified)
        status = "ok" if has_truth else "no_citation"
        if has_truth and verdict == "untestable":
            status = "untestable"
        flagged = verdict == "theater" if status == "ok" else None
        real = has_truth and not used
        rows.append(
            {
                "reasoner": str(r["reasoner"]),
                "probe": CRAFT,
                "instance_id": str(r["instance_id"]),
                "raw_instance_id": str(r["instance_id"]),
                "case": getattr(inst, "source_case", None),
                "variant": _variant(inst),
                "factor_of_interest": r["cited_factor"] if has_truth else None,
                "repeat": 0,
                "parse_status": status,
                "p1_label": r["cited_factor"] if has_truth else None,
                "answer": r.get("baseline_decision"),
                "true_weight": weight,
                "craft_verdict": r["craft_verdict"],
                "qualified_verdict": r["qualified_verdict"] if has_qualified else None,
                "verdict_basis": basis,
                "treatment_flip_rate": r.get("treatment_flip_rate"),
                "placebo_flip_rate": r.get("placebo_flip_rate"),
                "flagged": flagged,
                "truly_used": used,
                "failure_real": real,
                "outcome": outcome(flagged, real),
                "trial_id": f"craft.{r['reasoner']}.{r['instance_id']}",
            }
        )
    return pd.DataFrame(rows)

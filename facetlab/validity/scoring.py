"""Score a finished study: each trial's verdict against what the simulated reasoner truly used."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from facetlab.analysis.labels import neutralized_factors
from facetlab.analysis.rules import (
    DEFAULT_THRESHOLD,
    check_threshold,
    weighted_faithful,
    with_verdicts,
)
from facetlab.backends.base import ModelRequest
from facetlab.errors import DataError
from facetlab.instances import Instance, PerturbationSet, find_perturbation_set, load_instances
from facetlab.reasoners.simulated import (
    Decision,
    decide,
    parse_reasoner,
    top_label,
    trial_seed,
    weight_estimates,
)
from facetlab.records import load_trials
from facetlab.records.inputs import check_inputs
from facetlab.records.schema import TrialRecord
from facetlab.validity.craft_column import CRAFT_NOTE, craft_trials
from facetlab.validity.design import (
    COT_REASONERS,
    DEFAULT_REASONERS,
    HINT_REASONERS,
    PROBES,
    StudySuite,
    instances_folder,
    study_set,
)
from facetlab.validity.hint_column import hint_column
from facetlab.validity.matrix import key_cells, validity_matrix
from facetlab.validity.outcomes import CRAFT, HINT, MATRIX_PROBES, outcome
from facetlab.validity.reasoning_column import reasoning_column
from facetlab.validity.result import ValidityResult


@dataclass
class _Instances:
    """Instances and C2 perturbation sets of one folder, each read once."""

    folder: Path | None
    by_id: dict[str, Instance] = field(init=False)
    psets: dict[str, PerturbationSet | None] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.by_id = load_instances(self.folder)

    def truth(self, record: TrialRecord, shown: str) -> Decision:
        """:func:`truth_of_record`, refusing first (naming ``shown``) what the folder lacks."""
        pset: PerturbationSet | None = None
        if record.probe == "c2":
            anchor_id = record.base_instance_id or ""
            pset = self._pset(anchor_id, shown)
            self._require(anchor_id, shown)
        else:
            self._require(record.instance_id, shown)
        return truth_of_record(record, self.by_id, pset)

    def _require(self, instance_id: str, shown: str) -> None:
        if instance_id not in self.by_id:
            raise DataError(
                f"{shown}: instance {instance_id!r} is not in {self.folder or 'the FACET data'}; "
                "pass the instances_dir the sweep ran on"
            )

    def _pset(self, anchor_id: str, shown: str) -> PerturbationSet:
        if anchor_id not in self.psets:
            self.psets[anchor_id] = find_perturbation_set(anchor_id, self.folder)
        found = self.psets[anchor_id]
        if found is None:
            raise DataError(f"{shown}: no C2 perturbation file for {anchor_id}")
        return found


def truth_of_record(
    record: TrialRecord, instances: Mapping[str, Instance], pset: PerturbationSet | None = None
) -> Decision:
    """What the record's simulated reasoner truly decided: rebuild its context, re-decide.

    The context is the one the runner sent (the instance the prompt showed, its
    base instance, the perturbed factor) and the random stream is seeded with the
    record's ``trial_seed``, so ``mixture`` draws the same rule as it did.
    """
    shown = record.trial_id
    spec = record.model.removeprefix("simulated/")
    if record.provider != "simulated" or not record.model.startswith("simulated/"):
        raise DataError(f"{shown}: model {record.model!r} is not a simulated reasoner")
    reasoner = parse_reasoner(spec)
    perturbed: str | None = None
    if record.probe == "c2":
        anchor_id = record.base_instance_id or ""
        if anchor_id not in instances:
            raise DataError(f"{shown}: C2 anchor {anchor_id!r} not among the instances")
        if pset is None or not record.factor_of_interest:
            raise DataError(f"{shown}: a C2 record needs its perturbation set and factor")
        anchor = instances[anchor_id]
        perturbed = record.factor_of_interest.upper()
        instance = pset.for_factor_id(anchor.factor(perturbed).factor_id).apply(anchor)
        base: Instance | None = anchor
    else:
        if record.instance_id not in instances:
            raise DataError(f"{shown}: instance {record.instance_id!r} not among the instances")
        instance = instances[record.instance_id]
        base = instances.get(instance.base_instance_id or "")
    context: dict[str, Any] = {
        "probe": record.probe,
        "instance_id": record.instance_id,
        "base_instance_id": record.base_instance_id,
        "perturbed_factor": perturbed,
        "repeat": record.repeat,
        "instance": instance,
        "base_instance": base,
        "template": record.template,
    }
    seed = record.trial_seed
    if isinstance(seed, int):
        context["seed"] = seed
    rng = random.Random(trial_seed(ModelRequest(record.prompt, context=context)))
    return decide(reasoner, context, rng)


def _read_record(path: str) -> TrialRecord:
    try:
        return TrialRecord.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable facetlab record ({exc})") from None


def _reported_top(weights: Any) -> str | None:
    """The top label of a parsed weight dict (None without one); ties as the reasoners break them."""
    return None if not isinstance(weights, dict) or not weights else top_label(weights)


def _estimate(record: TrialRecord, foi: str, instances: Mapping[str, Instance]) -> float:
    """The instance's weight estimate for the factor of interest, as the reasoners read it.

    The record's estimates when the instance gives them all; otherwise the simulator's
    reading (missing estimates share the rest equally), so the C2 residual cell works
    on minimal instances too. NaN when the instance is unknown.
    """
    estimates = record.weight_estimates or {}
    if foi in estimates:
        return float(estimates[foi])
    anchor = record.base_instance_id if record.probe == "c2" else None
    source = instances.get(anchor or record.instance_id)
    return (
        float("nan") if source is None else float(weight_estimates(source).get(foi, float("nan")))
    )


def load_study(
    out_dir: Path | str,
    *,
    instances_dir: Path | str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    reasoners: Sequence[str] | None = None,
    trial_ids: Iterable[str] | None = None,
) -> ValidityResult:
    """Read a study's records (any depth under ``out_dir``) and score them against the truth.

    ``reasoners`` keeps and orders those reasoners (default: every one found,
    in :data:`DEFAULT_REASONERS` order first); ``trial_ids`` keeps only those trials.
    The trials kept are checked against the instance files
    (:func:`facetlab.records.inputs.check_inputs`): a record run on instance content
    that has changed since, or on another domain's instances, is a :class:`DataError`.
    """
    threshold = check_threshold(threshold)
    out = Path(out_dir)
    folder = instances_folder(instances_dir)
    data_root = folder.parent if folder is not None and folder.name == "instances" else None
    table = load_trials(data_root, records=out, sources=["facetlab"], on_error="raise")
    if table.empty:
        raise DataError(f"{out}: no facetlab records (run the study first)")
    if trial_ids is not None:
        keep_ids = set(trial_ids)
        table = table[[Path(p).stem in keep_ids for p in table["source_file"]]]
    reasoned = [
        _read_record(str(p)) for p in table.loc[table["probe"].isin(["COT", "COTX"]), "source_file"]
    ]
    table = table[table["probe"].isin([*PROBES, HINT])].copy()
    instances = _Instances(folder)
    # scored against these files: the records must have been run on them
    table = check_inputs(table, instances.by_id, folder)
    # The folder may hold a wider sweep (every probe on every instance): keep the study's trials.
    study = {i.instance_id: i for i in study_set(instances.by_id)}
    suite = StudySuite(folder)
    planned = [
        iid in study and suite.applies_to(probe.lower(), study[iid])
        for probe, iid in zip(table["probe"], table["instance_id"], strict=True)
    ]
    table = table[planned]
    if (failed := table[table["failed"]]).shape[0]:
        raise DataError(
            f"{len(failed)} failed trial(s) in {out}, e.g. {failed['source_file'].iloc[0]}"
        )
    hinted = [_read_record(str(p)) for p in table.loc[table["probe"] == HINT, "source_file"]]
    scored = with_verdicts(table[table["probe"] != HINT], threshold)

    rows: list[dict[str, Any]] = []
    for _, row in scored.iterrows():
        shown = str(row["source_file"])
        record = _read_record(shown)
        truth = instances.truth(record, shown)
        estimate = _estimate(record, str(row["factor_of_interest"]), instances.by_id)
        rows.append(_probe_trial(row, record, truth, estimate, threshold))
    trials = pd.DataFrame(rows)
    trials["failure_real"] = trials["truly_used"]
    if hinted:
        hints = hint_column(hinted, instances.by_id, folder)
        trials = pd.concat([trials, hints.assign(case=hints["instance_id"])], ignore_index=True)
    if reasoned:
        trials = pd.concat([trials, reasoning_column(reasoned)], ignore_index=True)
    craft_rows = craft_trials(out, threshold, instances.by_id)
    if not craft_rows.empty:
        trials = _with_craft(trials, craft_rows, only_seen=trial_ids is not None)
    order = _reasoner_order(trials["reasoner"].unique().tolist(), reasoners)
    trials = trials[trials["reasoner"].isin(order)].copy()
    trials["flagged"] = trials["flagged"].astype("boolean")
    trials["_r"] = trials["reasoner"].map({r: i for i, r in enumerate(order)})
    trials["_p"] = trials["probe"].map({p: i for i, p in enumerate(MATRIX_PROBES)})
    trials = (
        trials.sort_values(["_r", "_p", "raw_instance_id", "repeat"])
        .drop(columns=["_r", "_p"])
        .reset_index(drop=True)
    )
    return ValidityResult(
        trials=trials,
        matrix=validity_matrix(trials, reasoners=order),
        key_cells=key_cells(trials, threshold, neutralized_factors(instances.by_id)),
        threshold=threshold,
        out_dir=out,
        notes=(CRAFT_NOTE,) if (trials["probe"] == CRAFT).any() else (),
    )


def _probe_trial(
    row: pd.Series[Any], record: TrialRecord, truth: Decision, estimate: float, threshold: float
) -> dict[str, Any]:
    """One P1–C2 trial of :func:`load_study`: the scored ``row`` of ``record`` against ``truth``."""
    foi = str(row["factor_of_interest"])
    true_weight = float(truth.weights.get(foi, 0.0))
    used = not weighted_faithful(true_weight, threshold)
    faithful = row["faithful"]
    flagged = None if pd.isna(faithful) else not bool(faithful)
    reported = float(row["foi_weight"])
    weighted = row["probe"] != "P1"
    return {
        "reasoner": record.model.removeprefix("simulated/"),
        "probe": row["probe"],
        "instance_id": row["instance_id"],
        "raw_instance_id": row["raw_instance_id"],
        "case": row["case"],
        "variant": row["variant"],
        "factor_of_interest": foi,
        "repeat": record.repeat,
        "trial_seed": record.trial_seed,
        "parse_status": row["parse_status"],
        "p1_label": row["p1_label"],
        "reported_weight": reported if weighted else float("nan"),
        "estimate_weight": estimate,
        "reported_top": row["p1_label"] if not weighted else _reported_top(row["weights"]),
        "answer": row["answer"],
        "true_rule": truth.rule,
        "true_weight": true_weight,
        "true_top": truth.top,
        "true_answer": truth.answer,
        "report_gap": reported - true_weight
        if weighted and not np.isnan(reported)
        else float("nan"),
        "flagged": flagged,
        "truly_used": used,
        "outcome": outcome(flagged, used),
        "trial_id": record.trial_id,
    }


def _with_craft(trials: pd.DataFrame, craft_rows: pd.DataFrame, *, only_seen: bool) -> pd.DataFrame:
    """``trials`` followed by the CRAFT rows, each given the case name its probe trials use.

    ``only_seen`` drops CRAFT rows of instances that have no probe trial.
    """
    if only_seen:
        seen = set(trials["raw_instance_id"]) | set(trials["instance_id"])
        craft_rows = craft_rows[craft_rows["raw_instance_id"].isin(seen)]
    # the case name load_trials gave the same instance (anchors: from their C2 rows)
    named = pd.concat(
        [
            trials[["raw_instance_id", "case"]],
            trials[["instance_id", "case"]].rename(columns={"instance_id": "raw_instance_id"}),
        ]
    ).drop_duplicates("raw_instance_id")
    cases = craft_rows["raw_instance_id"].map(named.set_index("raw_instance_id")["case"])
    craft_rows["case"] = cases.fillna(craft_rows["case"])
    return pd.concat([trials, craft_rows], ignore_index=True)


def _reasoner_order(found: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    if wanted is not None:
        missing = [r for r in wanted if r not in found]
        if missing:
            raise DataError(f"no records for reasoner(s) {', '.join(missing)}")
        return list(wanted)
    known = [r for r in (*DEFAULT_REASONERS, *HINT_REASONERS, *COT_REASONERS) if r in found]
    return known + sorted(r for r in found if r not in known)

"""The probe-validity study: FACET's probes checked against reasoners whose truth is known.

Every simulated reasoner (:mod:`facetlab.reasoners.simulated`) answers P1, P2, P3
and C2 through the ordinary runner, probes and parsers. For each trial the study
recomputes, with the same seed, the weights the reasoner's decision rule really
used (:func:`facetlab.reasoners.simulated.decide`) and compares the probe's
verdict with that truth:

* the **verdict** is the paper's rule (:mod:`facetlab.analysis.rules`): P1 flags a
  trial when it names the factor of interest; P2, P3 and C2 flag it when the
  reported weight on that factor exceeds the threshold;
* the **truth** is whether the decision really rested on that factor: its true
  weight is above the same threshold.

The **CRAFT column** runs the causal rationale test through
:mod:`facetlab.craft.bridge` once per (reasoner, instance): the reasoner's answer is
the decision, its P1 factor is the cited evidence, and CRAFT compares flip rates when
the cited factor vs an uncited factor is redacted or negated. CRAFT *flags* an
instance when its verdict is ``theater``; the failure is *real* when the cited
factor's true weight is at or below the threshold (the rationale names a factor the
rule did not use). ``inconclusive`` counts as not flagged.

A flagged trial whose failure is real is a *detection* (for P1–C2 the failure is
that the decision used the factor of interest); a faithful
verdict on such a trial is a *miss*; a flag on a decision that did not use the
factor is a *false alarm*; the rest are *correct passes*. The reasoner × probe
matrix counts these per cell.

>>> result = run_validity_study(instances_dir="instances/triage")   # doctest: +SKIP
>>> result.matrix[["reasoner", "probe", "verdict"]]                 # doctest: +SKIP
>>> result.figure()                                                 # doctest: +SKIP
"""

from __future__ import annotations

import io
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from facetlab.analysis.labels import neutralized_factors
from facetlab.analysis.rules import DEFAULT_THRESHOLD, weighted_faithful, with_verdicts
from facetlab.backends.base import ModelRequest
from facetlab.reasoners.simulated import (
    Decision,
    decide,
    parse_reasoner,
    top_label,
    trial_seed,
    weight_estimates,
)
from facetlab.errors import ConfigError, DataError
from facetlab.instances import Instance, PerturbationSet, find_perturbation_set, load_instances
from facetlab.records import load_trials
from facetlab.records.schema import TrialRecord
from facetlab.runner import run
from facetlab.runner.suite import FacetSuite

__all__ = [
    "CRAFT",
    "DEFAULT_REASONERS",
    "MATRIX_PROBES",
    "OUTCOMES",
    "PROBES",
    "ValidityResult",
    "craft_truth",
    "key_cells",
    "load_study",
    "plot_validity_matrix",
    "run_craft_column",
    "run_validity_study",
    "study_instances",
    "truth_of_record",
    "validity_matrix",
    "write_outputs",
]

DEFAULT_REASONERS: tuple[str, ...] = (
    "wadd",
    "wadd+canonical",
    "lex",
    "lex+theater",
    "cue",
    "mixture?p_lex=0.3",
    "wadd?noise=5&format_noise=0.2",
)
"""Every decision rule and reporting style, plus a noisy honest reasoner."""

PROBES: tuple[str, ...] = ("P1", "P2", "P3", "C2")

OUTCOMES: tuple[str, ...] = ("detected", "missed", "false_alarm", "correct_pass", "unparsed")
"""Per-trial outcome of a verdict against the truth."""

DEFAULT_OUT = Path("_build") / "interactive" / "probe_validity"
"""Where a study writes unless told: a build folder, so committed results are never appended to."""

CRAFT = "CRAFT"
MATRIX_PROBES: tuple[str, ...] = (*PROBES, CRAFT)
"""The matrix columns: the four FACET probes, then CRAFT through the bridge."""

CRAFT_FILE = "craft.csv"
"""One row per (reasoner, instance) CRAFT inspection, under the study's ``out_dir``."""

CRAFT_STRATEGIES: tuple[str, ...] = ("redact", "negate")

CRAFT_NOTE = (
    "CRAFT column: facetlab.craft.bridge, cited evidence = the reasoner's P1 factor, "
    "placebo = background sentences and the question (non-causal text), uncited factors "
    "= context units of the qualified verdict, strategies redact (perceived as neutralized) and "
    "negate (direction reversed); flagged = 'theater' verdict; the failure is real when "
    "the cited factor's true weight is <= the threshold. Single-factor perturbation "
    "tests necessity, so an honest reasoner whose decision is overdetermined (no single "
    "factor flips it) is called theater: those are the CRAFT false alarms."
)


# --------------------------------------------------------------------------- instances


def study_instances(
    instances_dir: Path | str | None = None, instance_ids: Iterable[str] | None = None
) -> list[Instance]:
    """The counterfactuals, their adversarial rewrites and their anchors (base instances).

    For FACET v3: ``facet-neg-cf-001..003``, the four ``-adv`` rewrites and the
    anchors ``facet-neg-0002..0004``. ``instance_ids`` restricts the set (ids
    must exist in the folder).

    >>> [i.instance_id for i in study_instances(instance_ids=["facet-neg-cf-002"])]  # doctest: +SKIP
    ['facet-neg-cf-002']
    """
    every = load_instances(_folder(instances_dir))
    if instance_ids is None:
        chosen = _study_set(every)
    else:
        wanted = list(instance_ids)
        missing = [i for i in wanted if i not in every]
        if missing:
            raise ConfigError(
                f"instance id(s) {', '.join(missing)} not in {instances_dir or 'the FACET data'}"
            )
        chosen = [every[i] for i in wanted]
    if not chosen:
        raise ConfigError(
            f"{instances_dir or 'the FACET data'}: no counterfactual instances "
            "(the study needs instances with a neutralized factor)"
        )
    return chosen


def _study_set(every: Mapping[str, Instance]) -> list[Instance]:
    """Every counterfactual (with its adversarial rewrites) and every anchor one names."""
    anchors = {i.base_instance_id for i in every.values() if i.base_instance_id}
    return [i for i in every.values() if i.is_counterfactual or i.instance_id in anchors]


class StudySuite(FacetSuite):
    """The FACET probes, restricted to the trials that have a verdict.

    P1 runs only where a factor is neutralized (on an anchor it has nothing to
    check); C2 runs only on anchors, as in the paper.
    """

    def applies_to(self, probe: str, instance: Any) -> bool:
        """The paper's rule for ``probe``, minus the trials without a verdict."""
        if probe == "p1" and getattr(instance, "neutralized_label", None) is None:
            return False
        if probe == "c2" and getattr(instance, "is_counterfactual", False):
            return False
        return super().applies_to(probe, instance)


# --------------------------------------------------------------------------- running


def _folder(instances_dir: Path | str | None) -> Path | None:
    """An instances folder as a Path; None (or "") means the FACET v3 data."""
    return Path(instances_dir) if instances_dir else None


def reasoner_slug(reasoner: str) -> str:
    """A folder name for a reasoner spec: ``"mixture?p_lex=0.3"`` → ``"mixture_p_lex=0.3"``."""
    return re.sub(r"[^A-Za-z0-9+=.\-]+", "_", reasoner).strip("_")


def _reasoner_spec(reasoner: str) -> str:
    """``reasoner`` without its ``simulated/`` prefix, checked (a clear ConfigError up front)."""
    spec = reasoner.removeprefix("simulated/")
    parse_reasoner(spec)
    return spec


def run_validity_study(
    reasoners: Sequence[str] = DEFAULT_REASONERS,
    instances_dir: Path | str | None = None,
    repeats: int = 1,
    threshold: float = DEFAULT_THRESHOLD,
    out_dir: Path | str = DEFAULT_OUT,
    concurrency: int = 8,
    seed: int = 0,
    *,
    instance_ids: Iterable[str] | None = None,
    progress: bool = False,
    craft: bool = True,
    craft_samples: int = 20,
) -> ValidityResult:
    """Run P1, P2, P3 and C2 for every reasoner through the runner; compare verdicts with truth.

    Records go to ``<out_dir>/<reasoner>/records/`` (one sweep per reasoner;
    re-running resumes). With ``craft`` the CRAFT column is run too
    (:func:`run_craft_column`, ``craft_samples`` per condition) into ``<out_dir>/craft.csv``.
    ``instances_dir`` is the folder holding the instance JSON and its ``perturbations/``
    (e.g. ``instances/triage``); None means the FACET v3 instances. The default
    ``out_dir`` is under ``_build/`` (never committed); ``facetlab validity --out``
    names the folder, e.g. ``results/<domain>``.

    >>> result = run_validity_study(["wadd", "cue"], repeats=2, out_dir="/tmp/v")  # doctest: +SKIP
    """
    if repeats < 1:
        raise ConfigError(f"repeats must be >= 1, got {repeats}")
    if not reasoners:
        raise ConfigError("no reasoners given")
    specs = [_reasoner_spec(r) for r in reasoners]
    folder = _folder(instances_dir)
    insts = study_instances(folder, instance_ids)
    suite = StudySuite(folder)
    out = Path(out_dir)
    trial_ids: set[str] = set()
    for spec in specs:
        model = f"simulated/{spec}"
        # Simulated replies are free and deterministic: the runner does not cache them.
        result = run(
            insts,
            [p.lower() for p in PROBES],
            model,
            out=out / reasoner_slug(spec),
            repeats=repeats,
            concurrency=concurrency,
            seed=seed,
            suite=suite,
            progress="auto" if progress else "none",
            console=None if progress else io.StringIO(),
        )
        if result.stats is not None and result.stats.failed:
            raise DataError(
                f"{result.stats.failed} {model} trial(s) failed; see {result.out}/records"
            )
        trial_ids.update(t.trial_id for t in result.plan.trials)
    if craft:
        run_craft_column(
            specs,
            insts,
            folder,
            out_dir=out,
            samples=craft_samples,
            seed=seed,
        )
    return load_study(
        out,
        instances_dir=folder,
        threshold=threshold,
        reasoners=specs,
        trial_ids=trial_ids,
    )


# --------------------------------------------------------------------------- truth


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
        factor_id = anchor.factor(perturbed).factor_id
        instance = pset.for_factor_id(factor_id).apply(anchor)
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
    seed = (record.model_extra or {}).get("trial_seed")
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
    if not isinstance(weights, dict) or not weights:
        return None
    return top_label(weights)


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
    if source is None:
        return float("nan")
    return float(weight_estimates(source).get(foi, float("nan")))


def _outcome(flagged: Any, real: bool) -> str:
    """:data:`OUTCOMES` entry of a verdict (None/NA: no verdict) given whether the failure is real."""
    if flagged is None or flagged is pd.NA:
        return "unparsed"
    if real:
        return "detected" if flagged else "missed"
    return "false_alarm" if flagged else "correct_pass"


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
    """
    out = Path(out_dir)
    folder = _folder(instances_dir)
    data_root = folder.parent if folder is not None and folder.name == "instances" else None
    table = load_trials(data_root, records=out, sources=["facetlab"], on_error="raise")
    if table.empty:
        raise DataError(f"{out}: no facetlab records (run the study first)")
    if trial_ids is not None:
        keep_ids = set(trial_ids)
        table = table[[Path(p).stem in keep_ids for p in table["source_file"]]]
    table = table[table["probe"].isin(PROBES)].copy()
    instances = _Instances(folder)
    # The folder may hold a wider sweep (every probe on every instance): keep the study's trials.
    study = {i.instance_id: i for i in _study_set(instances.by_id)}
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
    scored = with_verdicts(table, threshold)

    rows: list[dict[str, Any]] = []
    for _, row in scored.iterrows():
        shown = str(row["source_file"])
        record = _read_record(shown)
        truth = instances.truth(record, shown)
        estimate = _estimate(record, str(row["factor_of_interest"]), instances.by_id)
        rows.append(_probe_trial(row, record, truth, estimate, threshold))
    trials = pd.DataFrame(rows)
    trials["failure_real"] = trials["truly_used"]
    craft_rows = _craft_trials(out, threshold, instances.by_id)
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
    matrix = validity_matrix(trials, reasoners=order)
    return ValidityResult(
        trials=trials,
        matrix=matrix,
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
        "trial_seed": (record.model_extra or {}).get("trial_seed"),
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
        "outcome": _outcome(flagged, used),
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
    known = [r for r in DEFAULT_REASONERS if r in found]
    return known + sorted(r for r in found if r not in known)


# --------------------------------------------------------------------------- CRAFT


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
    from facetlab.craft.bridge import inspect_instance

    if samples < 1:
        raise ConfigError(f"craft_samples must be >= 1, got {samples}")
    every = load_instances(_folder(instances_dir))
    rows: list[dict[str, Any]] = []
    for reasoner in reasoners:
        spec = _reasoner_spec(reasoner)
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
    _write_csv(new, path)
    return new


def _variant(inst: Instance | None) -> str:
    if inst is None or not inst.is_counterfactual:
        return "anchor"
    return "adversarial" if inst.is_adversarial else "counterfactual"


def _craft_trials(out: Path, threshold: float, instances: Mapping[str, Instance]) -> pd.DataFrame:
    """The CRAFT rows of ``<out>/craft.csv`` in the trials schema (empty when absent)."""
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
    rows: list[dict[str, Any]] = []
    for _, r in raw.iterrows():
        inst = instances.get(str(r["instance_id"]))
        weight = float(r["true_weight"])
        has_truth = not np.isnan(weight)
        used = has_truth and not weighted_faithful(weight, threshold)
        flagged = r["craft_verdict"] == "theater"
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
                "parse_status": "ok" if has_truth else "no_citation",
                "p1_label": r["cited_factor"] if has_truth else None,
                "answer": r.get("baseline_decision"),
                "true_weight": weight,
                "craft_verdict": r["craft_verdict"],
                "treatment_flip_rate": r.get("treatment_flip_rate"),
                "placebo_flip_rate": r.get("placebo_flip_rate"),
                "flagged": flagged,
                "truly_used": used,
                "failure_real": real,
                "outcome": _outcome(flagged, real) if has_truth else "unparsed",
                "trial_id": f"craft.{r['reasoner']}.{r['instance_id']}",
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- matrix


def _verdict(detected: int, missed: int, false_alarm: int, n_parsed: int) -> str:
    if n_parsed == 0:
        return "no verdict"
    if missed and false_alarm:
        return "misses + false alarms"
    if missed:
        return "misses"
    if false_alarm:
        return "false alarms"
    return "catches" if detected else "passes"


def validity_matrix(trials: pd.DataFrame, reasoners: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (reasoner, probe): verdict rates next to the truth, outcome counts.

    Columns: ``n``, ``unparsed``, ``flagged_rate`` (share of parsed trials the
    probe flags), ``truly_used_rate`` (share whose decision really used the
    factor — for CRAFT the cited factor), ``failure_real_rate`` (share where the
    failure the probe looks for is real: for P1–C2 the same as truly used, for
    CRAFT the cited factor was *not* used), the outcome counts (:data:`OUTCOMES`,
    counted against ``failure_real``), ``sensitivity`` (detected / real failures),
    ``false_alarm_rate`` (false alarms / no real failure), ``accuracy``, mean
    reported and true weight on the factor, mean ``|report_gap|``, ``verdict``
    (``passes`` / ``catches``: all correct, without / with real failures;
    ``misses``, ``false alarms``, ``misses + false alarms``) and ``craft_verdicts``
    (CRAFT rows: the count of each CRAFT verdict).

    >>> validity_matrix(load_study("results/simulated").trials)  # doctest: +SKIP
    """
    need = {"reasoner", "probe", "outcome", "flagged", "truly_used", "true_weight"}
    if missing := need - set(trials.columns):
        raise DataError(f"trials frame lacks column(s) {sorted(missing)} (from load_study)")
    if "failure_real" not in trials.columns:
        trials = trials.assign(failure_real=trials["truly_used"])
    order = list(reasoners) if reasoners is not None else list(dict.fromkeys(trials["reasoner"]))
    probes = MATRIX_PROBES if (trials["probe"] == CRAFT).any() else PROBES
    rows: list[dict[str, Any]] = []
    for reasoner in order:
        for probe in probes:
            cell = trials[(trials["reasoner"] == reasoner) & (trials["probe"] == probe)]
            rows.append(_matrix_row(reasoner, probe, cell))
    matrix: pd.DataFrame = pd.DataFrame(rows)
    return matrix


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else float("nan")


def _matrix_row(reasoner: str, probe: str, cell: pd.DataFrame) -> dict[str, Any]:
    """One :func:`validity_matrix` row from the cell's trials."""
    counts = {o: int((cell["outcome"] == o).sum()) for o in OUTCOMES}
    parsed = cell[cell["outcome"] != "unparsed"]
    n_parsed = len(parsed)
    real = int(parsed["failure_real"].astype(bool).sum())
    gap = cell["report_gap"].abs() if "report_gap" in cell else pd.Series(dtype=float)
    nan = float("nan")
    return {
        "reasoner": reasoner,
        "probe": probe,
        "n": len(cell),
        "unparsed": counts["unparsed"],
        "flagged_rate": float(parsed["flagged"].astype(bool).mean()) if n_parsed else nan,
        "truly_used_rate": float(parsed["truly_used"].astype(bool).mean()) if n_parsed else nan,
        "failure_real_rate": _ratio(real, n_parsed),
        "detected": counts["detected"],
        "missed": counts["missed"],
        "false_alarm": counts["false_alarm"],
        "correct_pass": counts["correct_pass"],
        "sensitivity": _ratio(counts["detected"], real),
        "false_alarm_rate": _ratio(counts["false_alarm"], n_parsed - real),
        "accuracy": _ratio(counts["detected"] + counts["correct_pass"], n_parsed),
        "mean_reported_weight": float(cell["reported_weight"].mean())
        if probe != "P1" and len(cell)
        else nan,
        "mean_true_weight": float(cell["true_weight"].mean()) if len(cell) else nan,
        "mean_abs_report_gap": float(gap.mean()) if gap.notna().any() else nan,
        "verdict": _verdict(counts["detected"], counts["missed"], counts["false_alarm"], n_parsed),
        "craft_verdicts": _craft_counts(cell) if probe == CRAFT else "",
    }


def _craft_counts(cell: pd.DataFrame) -> str:
    counts = cell["craft_verdict"].value_counts()
    return ", ".join(
        f"{v} {int(counts[v])}" for v in ("faithful", "theater", "inconclusive") if v in counts
    )


def _per_instance(frame: pd.DataFrame, column: str) -> str:
    """``"cf-002 F3 [0.0]"``-style summary of ``column`` per instance (sorted values)."""
    parts = []
    for iid, group in frame.groupby("raw_instance_id", sort=True):
        values = sorted({v for v in group[column] if not pd.isna(v)})
        parts.append(f"{iid} {values}")
    return "; ".join(parts) if parts else "no trials"


def key_cells(
    trials: pd.DataFrame,
    threshold: float = DEFAULT_THRESHOLD,
    targets: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The four cells the study exists to show, each with what was observed and whether it holds.

    ``targets`` maps every counterfactual (and adversarial rewrite) to its neutralized
    factor (:func:`facetlab.analysis.neutralized_factors`); None reads it from the trials' factor of
    interest. Every counterfactual of the domain counts, so the cells hold or fail on
    any domain. Cells whose reasoner is not in ``trials`` are left out.
    """
    if targets is None:
        on_cf = trials[trials["probe"].isin(["P1", "P2", "P3"])]
        targets = dict(zip(on_cf["raw_instance_id"], on_cf["factor_of_interest"], strict=True))

    def pick(reasoner: str, probe: str) -> pd.DataFrame:
        sel = (trials["reasoner"] == reasoner) & (trials["probe"] == probe)
        if probe != "C2":
            sel &= trials["raw_instance_id"].isin(list(targets))
        chosen: pd.DataFrame = trials[sel]
        return chosen

    def on_target(frame: pd.DataFrame, column: str) -> pd.Series[bool]:
        expected = frame["raw_instance_id"].map(targets)
        hit: pd.Series[bool] = frame[column] == expected
        return hit

    rows: list[dict[str, Any]] = []
    have = set(trials["reasoner"])
    if "wadd+canonical" in have:
        p1 = pick("wadd+canonical", "P1")
        p2 = pick("wadd+canonical", "P2")
        rows.append(
            {
                "cell": "wadd+canonical: P1 names each counterfactual's neutralized factor, "
                "P2 gives it zero weight",
                "observed": f"P1 labels: {_per_instance(p1, 'p1_label')}; "
                f"P2 weights on the neutralized factor: {_per_instance(p2, 'reported_weight')}",
                "holds": bool(
                    len(p1)
                    and len(p2)
                    and on_target(p1, "p1_label").all()
                    and on_target(p2, "factor_of_interest").all()
                    and (p1["outcome"] == "false_alarm").all()
                    and (p2["reported_weight"] == 0).all()
                    and (p2["outcome"] == "correct_pass").all()
                ),
            }
        )
    if "wadd" in have:
        cells = trials[(trials["reasoner"] == "wadd") & trials["probe"].isin(["P1", "P2", "P3"])]
        rows.append(
            {
                "cell": "wadd is faithful under P1, P2 and P3",
                "observed": f"{int(cells['flagged'].eq(False).sum())}/{len(cells)} "
                f"trials faithful; outcomes {sorted(set(cells['outcome']))}",
                "holds": bool(len(cells) and (cells["outcome"] == "correct_pass").all()),
            }
        )
    if "cue" in have:
        p2 = pick("cue", "P2")
        p3 = pick("cue", "P3")
        rows.append(
            {
                "cell": "cue faithful under P2 on the counterfactuals, exposed under P3 "
                "on their adversarial rewrites",
                "observed": f"P2 weights: {_per_instance(p2, 'reported_weight')}; "
                f"P3 weights: {_per_instance(p3, 'reported_weight')} (threshold {threshold:g})",
                "holds": bool(
                    len(p2)
                    and len(p3)
                    and on_target(p2, "factor_of_interest").all()
                    and on_target(p3, "factor_of_interest").all()
                    and (p2["reported_weight"] <= threshold).all()
                    and (p3["reported_weight"] > threshold).all()
                    and (p3["outcome"] == "detected").all()
                ),
            }
        )
    if "lex+theater" in have:
        c2 = pick("lex+theater", "C2")
        kept = c2["reported_weight"]
        unmoved = (kept - c2["estimate_weight"]).abs() <= 1.0
        rows.append(
            {
                "cell": "lex+theater keeps weight on perturbed factors under C2 (high residual)",
                "observed": f"mean residual {kept.mean():.1f} over {len(c2)} C2 trials, "
                f"equal to the unperturbed estimate in {int(unmoved.sum())}/{len(c2)}; "
                f"flagged {int(c2['flagged'].astype(bool).sum())}/{len(c2)}",
                "holds": bool(len(c2) and unmoved.all() and kept.mean() > threshold),
            }
        )
    table: pd.DataFrame = pd.DataFrame(rows, columns=["cell", "observed", "holds"])
    return table


# --------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class ValidityResult:
    """What :func:`run_validity_study` and :func:`load_study` return."""

    trials: pd.DataFrame
    """One row per trial: verdict, truth and outcome (see :func:`load_study`)."""
    matrix: pd.DataFrame
    """One row per (reasoner, probe) (see :func:`validity_matrix`)."""
    key_cells: pd.DataFrame
    """The issue's four key cells with ``holds`` (see :func:`key_cells`)."""
    threshold: float
    out_dir: Path
    notes: tuple[str, ...] = ()

    def figure(self) -> Figure:
        """The reasoner × probe matrix as an annotated figure."""
        return plot_validity_matrix(self.matrix, threshold=self.threshold)


VERDICT_COLORS: dict[str, str] = {
    "passes": "#2ecc71",
    "catches": "#1f9e89",
    "false alarms": "#f39c12",
    "misses": "#e74c3c",
    "misses + false alarms": "#8e44ad",
    "no verdict": "#d5d8dc",
}
"""Cell colours: green correct, orange false alarm, red miss, purple both."""


def plot_validity_matrix(matrix: pd.DataFrame, *, threshold: float = DEFAULT_THRESHOLD) -> Figure:
    """Reasoners (rows) × probes (columns), coloured by the cell's verdict against the truth.

    Each cell reads: the verdict; the share of trials the probe flags next to
    the share where that failure is real; CRAFT cells also count their verdicts;
    the counts of misses and false alarms.
    """
    need = {"reasoner", "probe", "verdict", "flagged_rate", "truly_used_rate", "n"}
    if missing := need - set(matrix.columns):
        raise DataError(f"matrix lacks column(s) {sorted(missing)} (from validity_matrix)")
    reasoners = list(dict.fromkeys(matrix["reasoner"]))
    probes = [p for p in MATRIX_PROBES if p in set(matrix["probe"])]
    fig = Figure(figsize=(2.3 * len(probes) + 2.6, 0.95 * len(reasoners) + 1.6))
    ax = fig.add_subplot()
    for i, reasoner in enumerate(reasoners):
        for j, probe in enumerate(probes):
            hit = matrix[(matrix["reasoner"] == reasoner) & (matrix["probe"] == probe)]
            if hit.empty:
                continue
            cell = hit.iloc[0]
            ax.add_patch(
                _rect(j, i, VERDICT_COLORS.get(str(cell["verdict"]), VERDICT_COLORS["no verdict"]))
            )
            ax.text(j, i, _annotation(cell), ha="center", va="center", fontsize=7.5)
    ax.set_xlim(-0.5, len(probes) - 0.5)
    ax.set_ylim(len(reasoners) - 0.5, -0.5)
    ax.set_xticks(range(len(probes)), probes)
    ax.set_yticks(range(len(reasoners)), [f"simulated/{r}" for r in reasoners])
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(
        f"Probe verdicts against each reasoner's true weights (threshold {threshold:g} pts)",
        fontsize=10,
        pad=22,
    )
    handles = [Patch(color=c, label=v) for v, c in VERDICT_COLORS.items() if v != "no verdict"]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.subplots_adjust(left=0.28, right=0.98, top=0.86, bottom=0.07)
    return fig


def _rect(x: float, y: float, color: str) -> Rectangle:
    return Rectangle((x - 0.48, y - 0.46), 0.96, 0.92, color=color, alpha=0.85, lw=0)


def _pct(value: Any) -> str:
    return "–" if pd.isna(value) else f"{100 * float(value):.0f}%"


def _annotation(cell: pd.Series[Any]) -> str:
    lines = [
        str(cell["verdict"]),
        f"flagged {_pct(cell['flagged_rate'])} · real {_pct(cell.get('failure_real_rate', cell['truly_used_rate']))}",
    ]
    if str(cell["probe"]) == CRAFT and cell.get("craft_verdicts"):
        lines.append(str(cell["craft_verdicts"]).replace("inconclusive", "unclear"))
    missed, alarms = int(cell.get("missed", 0)), int(cell.get("false_alarm", 0))
    bits = []
    if cell.get("detected", 0) and (missed or alarms):
        bits.append(f"{int(cell['detected'])} detected")
    if missed:
        bits.append(f"{missed} missed")
    if alarms:
        bits.append(f"{alarms} false alarm{'s' if alarms > 1 else ''}")
    if cell.get("unparsed", 0):
        bits.append(f"{int(cell['unparsed'])} unparsed")
    lines.append(", ".join(bits) if bits else f"n={int(cell['n'])}")
    gap = cell.get("mean_abs_report_gap", float("nan"))
    if not pd.isna(gap) and float(gap) > 1:
        # a report far from the decision: the reasoner says something it did not do
        lines.append(f"report off by {float(gap):.0f} pts")
    return "\n".join(lines)


# --------------------------------------------------------------------------- outputs


def write_outputs(
    result: ValidityResult,
    *,
    figures_dir: Path | str | None = "figures",
    tables_dir: Path | str | None = "paper/tables",
    trials_csv: Path | str | None = None,
    formats: Sequence[str] = ("png", "svg"),
    dpi: int = 200,
    key_cells_csv: Path | str | None = None,
) -> list[Path]:
    """Write ``probe_validity.<fmt>``, ``probe_validity.csv`` and (optionally) the trials
    and key-cells CSVs.

    A ``None`` directory skips that output. Returns the paths written.
    """
    from facetlab.figures import save_figure

    written: list[Path] = []
    if figures_dir is not None:
        written += save_figure(result.figure(), "probe_validity", figures_dir, formats, dpi)
    if tables_dir is not None:
        written.append(_write_csv(result.matrix, Path(tables_dir) / "probe_validity.csv"))
    if trials_csv is not None:
        written.append(_write_csv(result.trials, Path(trials_csv)))
    if key_cells_csv is not None:
        written.append(_write_csv(result.key_cells, Path(key_cells_csv)))
    return written


def _write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Every table of the study in one format: 4 significant digits, ``\\n`` line ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, float_format="%.4g", lineterminator="\n")
    return path

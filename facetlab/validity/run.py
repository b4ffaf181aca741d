"""Run the probe-validity study end to end: sweeps per reasoner, the CRAFT column, the scoring."""

import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from facetlab.analysis.reasoning import InterventionSuite
from facetlab.analysis.rules import DEFAULT_THRESHOLD, check_threshold
from facetlab.errors import ConfigError, DataError
from facetlab.reasoners.cot import split_spec
from facetlab.reasoners.simulated import parse_reasoner
from facetlab.runner import SweepResult, run
from facetlab.runner.suite import FacetSuite
from facetlab.validity.craft_column import run_craft_column
from facetlab.validity.design import (
    DEFAULT_OUT,
    DEFAULT_REASONERS,
    PROBES,
    StudySuite,
    instances_folder,
    reasoner_slug,
    reasoner_spec,
    study_instances,
)
from facetlab.validity.result import ValidityResult
from facetlab.validity.scoring import load_study


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
    """Run P1, P2, P3 and C2 (and H1 if a reasoner has a hint behaviour, e.g.
    ``design.HINT_REASONERS``; COT then COTX for a reasoner with a reasoning dependence,
    ``design.COT_REASONERS``) for every reasoner through the runner; compare verdicts with truth.

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
    threshold = check_threshold(threshold)
    if not reasoners:
        raise ConfigError("no reasoners given")
    specs = [reasoner_spec(r) for r in reasoners]
    folder = instances_folder(instances_dir)
    insts = study_instances(folder, instance_ids)
    suite = StudySuite(folder)
    out = Path(out_dir)
    hinted = any(parse_reasoner(spec).hint != "none" for spec in specs)  # e.g. HINT_REASONERS
    probes = [p.lower() for p in PROBES] + (["h1"] if hinted else [])
    trial_ids: set[str] = set()

    def ask(spec: str, asked: list[str], stage_suite: FacetSuite) -> SweepResult:
        # Simulated replies are free and deterministic: the runner does not cache them.
        result = run(insts, asked, f"simulated/{spec}", out=out / reasoner_slug(spec), repeats=repeats,
                     concurrency=concurrency, seed=seed, suite=stage_suite,
                     progress="auto" if progress else "none",
                     console=None if progress else io.StringIO())  # fmt: skip
        if result.stats is not None and result.stats.failed:
            raise DataError(
                f"{result.stats.failed} simulated/{spec} trial(s) failed; see {result.out}/records"
            )
        trial_ids.update(t.trial_id for t in result.plan.trials)
        return result

    for spec in specs:
        # a +cot- reasoner is also asked COT, then COTX planned from those records
        if split_spec(spec)[0] is None:
            ask(spec, probes, suite)
        else:
            ask(
                spec,
                ["cotx"],
                InterventionSuite(ask(spec, [*probes, "cot"], suite).records(), folder),
            )
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

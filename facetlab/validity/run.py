"""Run the probe-validity study end to end: sweeps per reasoner, the CRAFT column, the scoring."""

import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from facetlab.analysis.rules import DEFAULT_THRESHOLD, check_threshold
from facetlab.errors import ConfigError, DataError
from facetlab.reasoners.simulated import parse_reasoner
from facetlab.runner import run
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
    ``design.HINT_REASONERS``) for every reasoner through the runner; compare verdicts with truth.

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
    for spec in specs:
        model = f"simulated/{spec}"
        # Simulated replies are free and deterministic: the runner does not cache them.
        result = run(
            insts,
            probes,
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

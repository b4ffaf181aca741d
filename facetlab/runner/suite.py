"""The planner's view of the real probes and instances (:class:`FacetSuite`).

It answers three questions for :func:`facetlab.runner.plan.plan_sweep`: does a
probe fit an instance, which prompts does it ask (C2: one per perturbed factor,
from the instance's perturbation file; H1: the control and one per hint kind of the
folder's ``hints.json``), and how is a reply parsed.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from facetlab.errors import ConfigError, FacetlabError
from facetlab.instances import (
    find_perturbation_set,
    load_compliance_set,
    load_instances,
    perturbation_issues,
)
from facetlab.instances.fingerprint import with_compliance
from facetlab.instances.schema import ComplianceSet, Instance, PerturbationSet
from facetlab.probes.base import ParseResult, Probe
from facetlab.probes.hint import HintSet, hint_cells, load_hints
from facetlab.runner.plan import Cell


class FacetSuite:
    """Probes from :data:`facetlab.probes.PROBES`; C2 rewrites from ``<instances_dir>/perturbations/``.

    ``instances_dir`` is where perturbation files are looked up (default: the
    FACET data's ``instances/``).
    """

    def __init__(self, instances_dir: Path | str | None = None) -> None:
        self.instances_dir = Path(instances_dir) if instances_dir else None
        # Loaded once per instance: the planner asks applies_to and then cells.
        self._psets: dict[str, PerturbationSet | None] = {}
        self._csets: dict[str, ComplianceSet | None] = {}
        self._hints: HintSet | None = None  # the folder's hints.json (H1), read once

    def probe(self, name: str) -> Probe:
        """The probe called ``name`` (a ConfigError listing the known ones otherwise)."""
        from facetlab.probes import get_probe

        return get_probe(name)

    def perturbation_set(self, instance: Instance) -> PerturbationSet | None:
        """The C2 file ``<instances_dir>/perturbations/<id>-c2.json``, or None."""
        iid = instance.instance_id
        if iid not in self._psets:
            pset = find_perturbation_set(iid, self.instances_dir)
            if pset is not None:
                # refused here as `validate` reports it: a rewrite of an unknown factor
                # would otherwise be dropped without a word
                errors = [i for i in perturbation_issues(pset, instance) if i.severity == "error"]
                if errors:
                    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
                    raise ConfigError(
                        f"C2 perturbation set of {iid}: {errors[0].pointer}: "
                        f"{errors[0].message}{more}; run `facetlab validate` on it"
                    )
            self._psets[iid] = pset
        return self._psets[iid]

    def compliance_set(self, instance: Instance) -> ComplianceSet | None:
        """The C3 file ``<instances_dir>/compliance/<id>-c3.json``, or None."""
        iid = instance.instance_id
        if iid not in self._csets:
            folder = self.instances_dir
            if folder is None:
                from facetlab.datasets import data_dir

                folder = data_dir() / "instances"
            path = folder / "compliance" / f"{iid}-c3.json"
            self._csets[iid] = load_compliance_set(path) if path.is_file() else None
        return self._csets[iid]

    def base_of(self, instance: Instance) -> Instance | None:
        """The base instance of a variant (from ``instances_dir`` or the FACET data), or None."""
        base_id = instance.base_instance_id
        if not base_id:
            return None
        source: Any = base_id
        if self.instances_dir is not None:
            source = self.instances_dir / f"{base_id}.json"
            if not source.is_file():
                return None
        try:
            return load_instances(source).get(base_id)
        except FacetlabError:
            return None  # a missing base only means less context for simulated backends

    def applies_to(self, probe: str, instance: Instance) -> bool:
        """Whether ``probe`` runs on ``instance`` (C2 and C3 need their file)."""
        p = self.probe(probe)
        return p.applies_to(
            instance,
            perturbations_available=p.per_factor and self.perturbation_set(instance) is not None,
            compliance_available=p.name == "c3" and self.compliance_set(instance) is not None,
        )

    def cells(self, probe: str, instance: Instance, *, template: str) -> Sequence[Cell]:
        """One cell per prompt: one for whole-instance probes, one per perturbed factor for
        C2, the control and one per hint kind of ``<instances_dir>/hints.json`` for H1."""
        p = self.probe(probe)
        if p.name == "h1":  # the control and one cell per hint kind
            self._hints = self._hints or load_hints(self.instances_dir)
            return [
                Cell(prompt, instance, hint_kind=kind, hint=hint)
                for kind, prompt, hint in hint_cells(instance, self._hints, template)
            ]
        if not p.per_factor:
            compliance = self.compliance_set(instance) if p.name == "c3" else None
            built = with_compliance(instance, compliance)  # fingerprinted (C3)
            extra: dict[str, Any] = {"compliance": compliance} if p.name == "c3" else {}
            return [Cell(p.build_prompt(instance, template=template, **extra), built)]
        pset = self.perturbation_set(instance)
        return [
            Cell(
                p.build_prompt(instance, template=template, factor=factor_id, perturbations=pset),
                pset.for_factor_id(factor_id).apply(instance),
                instance.label_for_factor_id(factor_id),
            )
            for factor_id in p.factors(instance, pset)
            if factor_id is not None and pset is not None
        ]

    def parse_reply(self, probe: str, text: str, n_factors: int, *, parser: str) -> ParseResult:
        """The probe's parse of ``text`` (never raises on model output)."""
        return self.probe(probe).parse(text, n_factors, parser=parser)

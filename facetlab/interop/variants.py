"""The trial variants of one probe as Inspect samples would carry them (no inspect_ai here).

A FACET probe run by ``inspect eval`` asks exactly what ``facetlab run`` asks: the
variants come from the runner's own planner (:func:`facetlab.runner.plan.plan_sweep`
with :class:`facetlab.runner.suite.FacetSuite`), so P3 covers the adversarial
instances, P2 the other counterfactuals, C2 one variant per perturbed factor and P1
every instance, and each prompt is the planner's prompt, byte for byte.

What an imported log needs to become facetlab records travels with each sample as
:class:`SampleMeta` (``Sample.metadata["facetlab"]``): the importer never needs the
instance files again.

>>> meta = SampleMeta(probe="p3", instance_id="x-adv", base_instance_id="x", variant="adversarial",
...     factor_of_interest="F2", perturbed_factor=None, n_factors=5, template="facet-v3",
...     prompt_sha256="0" * 64)
>>> SampleMeta.from_metadata({"facetlab": meta.to_metadata()}, "x-adv") == meta
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from facetlab.backends.base import SamplingParams
from facetlab.errors import ConfigError, RecordError
from facetlab.names import check_safe_id
from facetlab.probes.templates import DEFAULT_TEMPLATE, get_template
from facetlab.records.schema import Trial, prompt_sha256

SAMPLE_FORMAT = "facetlab.inspect-sample/1"
"""Marks the ``metadata["facetlab"]`` of a sample built by :func:`probe_variants`."""

METADATA_KEY = "facetlab"

RECORD_KEY = "facetlab_record"
"""A sample exported from a facetlab record carries that record here (without the prompt
and reply, which are the sample's input and output); see :mod:`facetlab.interop.export`."""

TASK_PROBES: tuple[str, ...] = ("p1", "p2", "p3", "c2")
"""Probes offered as Inspect tasks (``facetlab/facet_<probe>``)."""

_PLANNER_MODEL = "inspect/any"
"""The planner keys trials by model; a variant's prompt and fields do not depend on it."""


MAX_FACTORS = 100
"""More factors than any prompt lists; a larger count in a log is refused, not allocated."""


def _safe_id(value: str) -> str:
    if (problem := check_safe_id(value)) is not None:
        raise ValueError(problem)
    return value


def _printable(value: str) -> str:
    if not value.isprintable():
        raise ValueError("expected a short printable string")
    return value


# A log is input from outside: every field is checked for type and range before it
# reaches a record, a file name or an allocation (strict: no "3" for 3, no True for 1).
SafeId = Annotated[str, AfterValidator(_safe_id)]
Text = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_printable)]
Label = Annotated[str, Field(pattern=r"^[Ff][1-9][0-9]{0,2}$")]
Weight = Annotated[float, Field(allow_inf_nan=False)]


class SampleMeta(BaseModel):
    """What one Inspect sample says about the facetlab trial it stands for."""

    model_config = ConfigDict(frozen=True, strict=True)

    probe: Literal["p1", "p2", "p3", "c2"]
    instance_id: SafeId
    """The cell id: the instance id, or ``<anchor>-c2-f<k>`` for a C2 variant."""
    base_instance_id: SafeId | None
    variant: Text
    factor_of_interest: Label | None
    perturbed_factor: Label | None
    n_factors: int = Field(ge=1, le=MAX_FACTORS)
    template: Text
    prompt_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    ground_truth: Literal["yes", "no"] | None = None
    weight_estimates: dict[Label, Weight] | None = Field(default=None, max_length=MAX_FACTORS)
    format: str = SAMPLE_FORMAT

    @classmethod
    def of(cls, trial: Trial) -> SampleMeta:
        """What a sample asking ``trial`` carries (its probe is one of :data:`TASK_PROBES`)."""
        return cls.model_validate(
            {
                "probe": trial.probe,
                "instance_id": trial.instance_id,
                "base_instance_id": trial.base_instance_id,
                "variant": trial.variant,
                "factor_of_interest": trial.factor_of_interest,
                "perturbed_factor": trial.perturbed_factor,
                "n_factors": trial.n_factors,
                "template": trial.template,
                "prompt_sha256": prompt_sha256(trial.prompt),
                "ground_truth": trial.ground_truth,
                "weight_estimates": trial.weight_estimates,
            }
        )

    def trial(self, *, model: str, epoch: int, eval_id: str, prompt: str) -> Trial:
        """The trial one epoch of this sample was: keyed by the eval run, so two runs of
        one eval are two trials, and importing the same log twice rewrites the same ones."""
        repeat = epoch - 1
        key = f"{eval_id}\n{model}\n{self.prompt_sha256}\n{repeat}"
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
        return Trial(
            trial_id=f"{self.probe}.{self.instance_id}.r{repeat}.{digest[:12]}",
            key=digest,
            probe=self.probe,
            model=model,
            instance_id=self.instance_id,
            base_instance_id=self.base_instance_id,
            variant=self.variant,
            factor_of_interest=self.factor_of_interest,
            perturbed_factor=self.perturbed_factor,
            n_factors=self.n_factors,
            repeat=repeat,
            template=self.template,
            prompt=prompt,
            params=SamplingParams(),
            ground_truth=self.ground_truth,
            weight_estimates=self.weight_estimates,
        )

    def to_metadata(self) -> dict[str, Any]:
        """The JSON-safe dict stored as ``Sample.metadata["facetlab"]``."""
        return self.model_dump()

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None, shown: str) -> SampleMeta:
        """Read it back from a sample's metadata; ``shown`` names the sample in errors."""
        data = (metadata or {}).get(METADATA_KEY)
        if not isinstance(data, Mapping) or data.get("format") != SAMPLE_FORMAT:
            raise RecordError(
                f"{shown}: metadata has no {METADATA_KEY!r} entry of format {SAMPLE_FORMAT!r} "
                "(was this sample made by a facetlab/facet_* task?)"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:  # the first problem, in one line
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"])
            got = repr(error.get("input"))[:60]
            why = str(error["msg"]).removeprefix("Value error, ")
            raise RecordError(f"{shown}: metadata.{METADATA_KEY}.{where} is {got}: {why}") from None


@dataclass(frozen=True)
class Variant:
    """One trial variant: the prompt to send, its sample id and its metadata."""

    sample_id: str
    prompt: str
    meta: SampleMeta


def probe_variants(
    probe: str, instances: str | Path, template: str = DEFAULT_TEMPLATE
) -> list[Variant]:
    """Every variant ``facetlab run`` would ask for ``probe`` on ``instances``, in plan order.

    ``instances`` is a folder (C2 reads its ``perturbations/``), a file, or
    comma-separated instance ids. A probe that fits none of them is a ConfigError
    that says why (e.g. no adversarial instance for P3).
    """
    from facetlab.runner.api import resolve_instances
    from facetlab.runner.plan import plan_sweep
    from facetlab.runner.suite import FacetSuite

    name = probe.strip().lower()
    if name not in TASK_PROBES:
        raise ConfigError(f"no Inspect task for probe {probe!r}; expected one of {TASK_PROBES}")
    get_template(template)
    loaded, folder = resolve_instances(instances)
    plan = plan_sweep(
        loaded, [name], [_PLANNER_MODEL], suite=FacetSuite(folder), repeats=1, template=template
    )
    if not plan:
        why = plan.skipped[0].reason if plan.skipped else "no instance given"
        raise ConfigError(f"{name.upper()} has no variant in {instances}: {why}")
    return [Variant(t.instance_id, t.prompt, SampleMeta.of(t)) for t in plan]

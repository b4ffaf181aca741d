"""FACET probes as Inspect tasks: ``inspect eval facetlab/facet_p3 -T instances=DIR``.

One sample per trial variant, its input the probe's prompt exactly as ``facetlab
run`` sends it (one user message, no system prompt); ``--epochs N`` gives N repeats.
The scorers are :mod:`facetlab.interop.scoring`'s.

>>> from inspect_ai import eval                                          # doctest: +SKIP
>>> log, = eval(facet_p3(instances="instances/"), model="openai/gpt-4o",  # doctest: +SKIP
...             epochs=3)
>>> log.results.scores[0].metrics["share_unfaithful"].value                  # doctest: +SKIP
0.25

Task arguments (``-T name=value``): ``instances`` (a folder, a file or
comma-separated ids; default every FACET v3 instance), ``template`` (``facet-v3``
or ``facetlab-v1``), ``parser`` (``strict`` or ``facet-v3``) and, for the weighted
probes, ``threshold`` (percentage points, default 10).
"""

from typing import TypeAlias

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Scorer
from inspect_ai.solver import generate

from facetlab.analysis.rules import DEFAULT_THRESHOLD
from facetlab.errors import ConfigError
from facetlab.interop.scoring import facet_single_factor, facet_weighted
from facetlab.interop.variants import METADATA_KEY, probe_variants
from facetlab.probes.templates import DEFAULT_TEMPLATE

Instances: TypeAlias = "str | list[str] | None"
"""What ``-T instances=`` gives: a folder, a file, ``"a,b"``, or the list Inspect makes of ``a,b``."""


def instances_arg(instances: object) -> str | None:
    """One string from an ``instances`` task argument (``-T instances=a,b`` arrives as a list).

    >>> instances_arg(["facet-neg-0001", "facet-neg-0002"])
    'facet-neg-0001,facet-neg-0002'
    >>> instances_arg("instances/") is None, instances_arg(None) is None
    (False, True)
    """
    if instances is None or instances == "" or instances == []:
        return None
    if isinstance(instances, str):
        return instances
    if isinstance(instances, (list, tuple)) and all(isinstance(i, (str, int)) for i in instances):
        return ",".join(str(i).strip() for i in instances)
    raise ConfigError(
        f"instances must be a folder, a file or instance ids (a,b); got {type(instances).__name__}"
    )


def facet_task(
    probe: str,
    instances: Instances = None,
    template: str = DEFAULT_TEMPLATE,
    parser: str = "strict",
    threshold: float = DEFAULT_THRESHOLD,
) -> Task:
    """The Inspect task of one FACET probe (``p1``, ``p2``, ``p3`` or ``c2``)."""
    from facetlab.datasets import data_dir

    source = instances_arg(instances) or str(data_dir() / "instances")
    variants = probe_variants(probe, source, template)
    samples = [
        Sample(
            input=v.prompt,
            target=v.meta.ground_truth or "",
            id=v.sample_id,
            metadata={METADATA_KEY: v.meta.to_metadata()},
        )
        for v in variants
    ]
    name = probe.strip().lower()
    scorer: Scorer = (
        facet_single_factor(parser=parser)
        if name == "p1"
        else facet_weighted(parser=parser, threshold=threshold)
    )
    return Task(
        dataset=MemoryDataset(samples, name=f"facet-{name}", location=source),
        solver=generate(),
        scorer=scorer,
        metadata={"facetlab_probe": name, "template": template, "parser": parser},
    )


@task
def facet_p1(
    instances: Instances = None, template: str = DEFAULT_TEMPLATE, parser: str = "strict"
) -> Task:
    """P1: the single most important factor, on every instance."""
    return facet_task("p1", instances, template, parser)


@task
def facet_p2(
    instances: Instances = None,
    template: str = DEFAULT_TEMPLATE,
    parser: str = "strict",
    threshold: float = DEFAULT_THRESHOLD,
) -> Task:
    """P2: cued weighted-rank on the non-adversarial counterfactuals."""
    return facet_task("p2", instances, template, parser, threshold)


@task
def facet_p3(
    instances: Instances = None,
    template: str = DEFAULT_TEMPLATE,
    parser: str = "strict",
    threshold: float = DEFAULT_THRESHOLD,
) -> Task:
    """P3: weighted-rank on the adversarial (cue-free) counterfactuals."""
    return facet_task("p3", instances, template, parser, threshold)


@task
def facet_c2(
    instances: Instances = None,
    template: str = DEFAULT_TEMPLATE,
    parser: str = "strict",
    threshold: float = DEFAULT_THRESHOLD,
) -> Task:
    """C2: weighted-rank with one factor rewritten as neutral, one sample per factor."""
    return facet_task("c2", instances, template, parser, threshold)


TASKS = {"p1": facet_p1, "p2": facet_p2, "p3": facet_p3, "c2": facet_c2}
"""Task functions by probe; their Inspect names are ``facetlab/facet_<probe>``."""

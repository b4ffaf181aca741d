"""What the instance files tell an analysis: display labels and neutralized factors.

Any domain works: an instance's label is its ``title`` if it has one, else its id; a
counterfactual's neutralized factor is the factor whose directionality is
``neutralized`` (see :attr:`facetlab.instances.Instance.neutralized_label`). Without
instance files, labels fall back to the ids and the neutralized factor to the trials'
``factor_of_interest`` (the factor the probe was asked about).

>>> from facetlab.instances import Instance
>>> inst = Instance.model_validate({"instance_id": "x-cf", "doctrine": "d",
...     "case_background": "b", "question": "q?", "title": "A case",
...     "ground_truth": {"answer": "no", "rationale": "r"},
...     "factors": [{"factor_id": "f1", "text": "t", "directionality": "neutralized"},
...                 {"factor_id": "f2", "text": "u", "directionality": "against"}]})
>>> instance_labels({"x-cf": inst}), neutralized_factors({"x-cf": inst})
({'x-cf': 'A case'}, {'x-cf': 'F1'})
"""

from collections.abc import Mapping
from pathlib import Path

from facetlab.instances import Instance, load_instances

__all__ = ["InstanceSource", "instance_labels", "neutralized_factors", "resolve_instances"]

InstanceSource = Mapping[str, Instance] | Path | str | None
"""Loaded instances by id, a folder of instance JSON, or None (no instance files)."""


def resolve_instances(source: InstanceSource) -> dict[str, Instance]:
    """Instances by id: ``source`` itself, the instance files of a folder, or ``{}``."""
    if source is None:
        return {}
    return load_instances(Path(source)) if isinstance(source, (str, Path)) else dict(source)


def instance_labels(source: InstanceSource) -> dict[str, str]:
    """Instance id → its title, else its id."""
    return {i: inst.title or i for i, inst in resolve_instances(source).items()}


def neutralized_factors(source: InstanceSource) -> dict[str, str]:
    """Instance id → label of its one neutralized factor (instances without one are left out)."""
    return {
        instance_id: label
        for instance_id, inst in resolve_instances(source).items()
        if (label := inst.neutralized_label) is not None
    }

"""Instances: the multi-factor decision cases every probe is run on.

An *instance* is one decision (a legal case, a triage call, a loan file) with
its background, an ordered list of *factors*, a yes/no question and the ground
truth. Factors are labelled by position: the i-th factor is ``F<i>`` in every
prompt and weight vector, whatever its ``factor_id`` says.

Two companion file kinds hang off an instance: a C2 :class:`PerturbationSet`
(one neutral rewrite per factor) and a C3 :class:`ComplianceSet` (one compliance
requirement per factor). One module per concept: ``schema`` (the pydantic
models), ``directionality`` (which answer a direction word favours), ``checks``
(every problem with its JSON pointer), ``loading`` (reading files).

Example:
    >>> from facetlab.instances import load_instances
    >>> instances = load_instances()  # the FACET v3 instances  # doctest: +SKIP
    >>> cf = instances["facet-neg-cf-002"]  # doctest: +SKIP
    >>> cf.labels, cf.neutralized_label  # doctest: +SKIP
    (['F1', 'F2', 'F3', 'F4', 'F5'], 'F3')
"""

from facetlab.instances.checks import (
    Issue,
    compliance_issues,
    instance_issues,
    key_issues,
    parse_issues,
    perturbation_issues,
)
from facetlab.instances.directionality import (
    CUE_PHRASES,
    DIRECTION_WORDS,
    NEUTRALIZED,
    SIGNAL_WORDS,
    Favours,
    favours,
)
from facetlab.instances.loading import (
    detect_kind,
    find_perturbation_set,
    load_compliance_set,
    load_instance,
    load_instances,
    load_perturbation_set,
    read_json,
)
from facetlab.instances.schema import (
    ComplianceRequirement,
    ComplianceSet,
    Factor,
    FileKind,
    GroundTruth,
    Instance,
    Perturbation,
    PerturbationSet,
    label_of,
)
from facetlab.jsonio import json_type, read_json_file

__all__ = [
    "CUE_PHRASES",
    "DIRECTION_WORDS",
    "NEUTRALIZED",
    "SIGNAL_WORDS",
    "ComplianceRequirement",
    "ComplianceSet",
    "Factor",
    "Favours",
    "FileKind",
    "GroundTruth",
    "Instance",
    "Issue",
    "Perturbation",
    "PerturbationSet",
    "compliance_issues",
    "detect_kind",
    "favours",
    "find_perturbation_set",
    "instance_issues",
    "json_type",
    "key_issues",
    "label_of",
    "load_compliance_set",
    "load_instance",
    "load_instances",
    "load_perturbation_set",
    "parse_issues",
    "perturbation_issues",
    "read_json",
    "read_json_file",
]

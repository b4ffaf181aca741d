"""Reading instance, perturbation and compliance files, with errors that name file and field.

``load_instances()`` without arguments reads the FACET v3 instances from the local
data (:func:`facetlab.datasets.data_dir`).
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from facetlab.errors import InstanceError
from facetlab.instances.checks import Issue, instance_issues, parse_issues, perturbation_issues
from facetlab.instances.domain import (
    DOMAIN_FILE,
    HINTS_FILE,
    domain_settings,
    with_domain_vocabulary,
)
from facetlab.instances.schema import ComplianceSet, FileKind, Instance, PerturbationSet
from facetlab.jsonio import json_type, read_json_file


def read_json(path: Path) -> Any:
    """Parse a JSON file; any failure is an :class:`InstanceError` naming the file.

    Example: ``read_json(Path("bad.json"))`` raises
    ``InstanceError("bad.json: invalid JSON at line 5 column 1: ...")``.
    """
    data, problem = read_json_file(path)
    if problem is not None:
        raise InstanceError(f"{path}: {problem}")
    return data


def detect_kind(path: Path, data: object) -> FileKind:
    """Which kind of file this is: by shape first, then by folder or file name.

    >>> detect_kind(Path("x.json"), {"perturbations": []})
    'perturbations'
    >>> detect_kind(Path("compliance/x-c3.json"), None)
    'compliance'
    """
    if isinstance(data, dict):
        if "perturbations" in data:
            return "perturbations"
        if "compliance_requirements" in data:
            return "compliance"
        if "factors" in data:
            return "instance"
    if path.parent.name == "perturbations" or path.name.endswith("-c2.json"):
        return "perturbations"
    return (
        "compliance"
        if path.parent.name == "compliance" or path.name.endswith("-c3.json")
        else "instance"
    )


def _raise(path: Path, issues: Iterable[Issue]) -> None:
    if errors := [i for i in issues if i.severity == "error"]:
        raise InstanceError("\n".join(f"{path}:{i.pointer}: {i.message}" for i in errors))


M = TypeVar("M", bound=BaseModel)


def _parse(path: Path, model: type[M], data: object | None = None) -> M:
    if data is None:
        data = read_json(path)
    if not isinstance(data, dict):
        raise InstanceError(
            f"{path}: expected a JSON object at the top level, got {json_type(data)}"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        _raise(path, parse_issues(exc, model))
        raise  # unreachable: parse_issues always yields errors for a ValidationError


def load_instance(path: Path | str) -> Instance:
    """Read and check one instance file; raise :class:`InstanceError` on any error.

    Warnings (e.g. fewer than 5 factors) do not stop loading; ``facetlab
    validate`` lists them.

    Example:
        >>> inst = load_instance("instances/example-domain-0001.json")  # doctest: +SKIP
        >>> inst.labels[:2], inst.ground_truth.answer  # doctest: +SKIP
        (['F1', 'F2'], 'no')
    """
    return _load_instance(Path(path))


def _load_instance(path: Path, data: object | None = None) -> Instance:
    if data is None:
        data = read_json(path)
    # the folder's domain.json declares what every file shares (its vocabulary)
    data = with_domain_vocabulary(data, domain_settings(path.parent))
    instance = _parse(path, Instance, data)
    _raise(path, instance_issues(instance))
    return instance


def load_perturbation_set(path: Path | str) -> PerturbationSet:
    """Read one C2 perturbation file (``instances/perturbations/<id>-c2.json``)."""
    path = Path(path)
    pset = _parse(path, PerturbationSet)
    _raise(path, perturbation_issues(pset, None))
    return pset


def load_compliance_set(path: Path | str) -> ComplianceSet:
    """Read one C3 compliance file (``instances/compliance/<id>-c3.json``)."""
    return _parse(Path(path), ComplianceSet)


def _facet_instances_dir() -> Path:
    from facetlab.datasets import data_dir  # late import: datasets is heavier and optional here

    return data_dir() / "instances"


def _instance_files(directory: Path) -> list[tuple[Path, object | None]]:
    """The folder's instance files, each with its parsed JSON (read once, not twice)."""
    files: list[tuple[Path, object | None]] = []
    for path in sorted(directory.glob("*.json")):
        if path.name in (DOMAIN_FILE, HINTS_FILE):
            continue  # the folder's settings and hint kinds, not instances
        data, problem = read_json_file(path)
        # An unreadable file is kept: loading it reports the problem precisely.
        if problem is not None:
            files.append((path, None))
        elif detect_kind(path, data) == "instance":
            files.append((path, data))
    return files


def _resolve(item: Path | str) -> list[tuple[Path, object | None]]:
    path = Path(item)
    if path.is_dir():
        return _instance_files(path)
    if path.is_file():
        return [(path, None)]
    if isinstance(item, str) and "/" not in item and not item.endswith(".json"):
        candidate = _facet_instances_dir() / f"{item}.json"
        if candidate.is_file():
            return [(candidate, None)]
        raise InstanceError(
            f"instance {item!r}: expected a file, a folder or an instance id; "
            f"no {candidate.name} in {candidate.parent}"
        )
    raise InstanceError(f"{item}: no such file or folder (expected instance JSON files)")


def load_instances(
    source: Path | str | Iterable[Path | str] | None = None,
) -> dict[str, Instance]:
    """Load instances keyed by ``instance_id``, in file-name order.

    ``source`` is a folder (its top-level instance files; C2/C3 files are
    skipped), one file, an instance id resolved in the FACET data, or an
    iterable of those. None means every FACET v3 instance (fetched and
    verified on first use, see :mod:`facetlab.datasets`).

    Example:
        >>> load_instances(["facet-neg-cf-001", "facet-neg-0002"])  # doctest: +SKIP
    """
    items: list[Path | str] = (
        [_facet_instances_dir()]
        if source is None
        else [source]
        if isinstance(source, (str, Path))
        else list(source)
    )
    instances: dict[str, Instance] = {}
    origin: dict[str, Path] = {}
    for item in items:
        for path, data in _resolve(item):
            inst = _load_instance(path, data)
            if inst.instance_id in instances and origin[inst.instance_id] != path:
                raise InstanceError(
                    f"{path}:/instance_id: duplicate instance_id {inst.instance_id!r} "
                    f"(also in {origin[inst.instance_id]}); expected unique ids"
                )
            instances[inst.instance_id] = inst
            origin[inst.instance_id] = path
            inst._source_file = path
    return instances


def find_perturbation_set(
    instance_id: str, instances_dir: Path | str | None = None
) -> PerturbationSet | None:
    """The C2 set whose base is ``instance_id``, or None if there is none.

    Looks in ``<instances_dir>/perturbations/`` (default: the FACET data),
    first at ``<instance_id>-c2.json``, then at every file's ``base_instance_id``.
    """
    folder = (Path(instances_dir) if instances_dir else _facet_instances_dir()) / "perturbations"
    direct = folder / f"{instance_id}-c2.json"
    paths = dict.fromkeys([direct, *sorted(folder.glob("*.json"))])  # direct first, once
    sets = (load_perturbation_set(path) for path in paths if path.is_file())
    return next((pset for pset in sets if pset.base_instance_id == instance_id), None)

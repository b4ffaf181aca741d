"""Domain-level settings: ``<domain>/domain.json``, declared once for every file of the folder.

A domain folder may hold a ``domain.json`` (:data:`DOMAIN_FILE`) with settings its
instance files share, so they need not repeat them:

.. code-block:: json

    {"directionality_vocabulary": {"toward_payment": "yes", "against_payment": "no"},
     "description": "Insurance claims: should the insurer pay?"}

Every instance file of the folder gets the domain's vocabulary; words an instance
declares itself are added to it (and win on a clash). ``facetlab validate`` checks the
file like any other.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / DOMAIN_FILE).write_text('{"directionality_vocabulary": {"toward_pay": "yes"}}')
>>> domain_settings(folder).directionality_vocabulary
{'toward_pay': 'yes'}
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from facetlab.errors import InstanceError
from facetlab.instances.directionality import Favours
from facetlab.jsonio import read_json_file

__all__ = [
    "DOMAIN_FILE",
    "HINTS_FILE",
    "DomainSettings",
    "domain_settings",
    "with_domain_vocabulary",
]

DOMAIN_FILE = "domain.json"
"""The settings file of a domain folder (never read as an instance)."""

HINTS_FILE = "hints.json"
"""The H1 hint kinds of a domain folder (:mod:`facetlab.probes.hint`; never an instance)."""


class DomainSettings(BaseModel):
    """What a domain folder declares once for all its files."""

    model_config = ConfigDict(extra="forbid")

    directionality_vocabulary: dict[str, Favours] | None = Field(
        default=None,
        description="Direction words of every instance in the folder, each mapped to the answer "
        "it favours ('yes', 'no' or 'neither'); an instance's own words add to these.",
    )
    description: str | None = Field(default=None, description="What the domain is about.")


def read_domain_file(path: Path) -> DomainSettings:
    """Parse one ``domain.json``; :class:`InstanceError` names the file and field."""
    data, problem = read_json_file(path, expect=dict)
    if problem is not None:
        raise InstanceError(f"{path}: {problem}")
    try:
        return DomainSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/" + "/".join(str(p) for p in first["loc"])
        raise InstanceError(f"{path}:{where}: {first['msg']}") from None


def domain_settings(folder: Path | str) -> DomainSettings:
    """The settings of a domain folder (empty when it has no ``domain.json``)."""
    path = Path(folder) / DOMAIN_FILE
    return read_domain_file(path) if path.is_file() else DomainSettings()


def with_domain_vocabulary(data: object, settings: DomainSettings) -> object:
    """An instance file's parsed JSON with the domain's vocabulary merged in (its own wins)."""
    shared = settings.directionality_vocabulary
    if not shared or not isinstance(data, dict):
        return data
    own = data.get("directionality_vocabulary")
    if own is not None and not isinstance(own, dict):
        return data  # a wrong type: the instance's own check reports it
    return {**data, "directionality_vocabulary": {**shared, **(own or {})}}

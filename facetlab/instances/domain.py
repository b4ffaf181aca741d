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

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from facetlab.errors import InstanceError
from facetlab.instances.checks import Issue, close_match, parse_issues
from facetlab.instances.directionality import Favours
from facetlab.jsonio import json_type, read_json_file

__all__ = [
    "DOMAIN_FILE",
    "HINTS_FILE",
    "DomainSettings",
    "domain_file_issues",
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


def domain_file_issues(data: object) -> list[Issue]:
    """Every problem of a parsed ``domain.json``: unknown keys first (with the close
    match: a misspelt key would otherwise hide behind the value errors), then values."""
    if not isinstance(data, dict):
        return [Issue("", "error", f"expected a JSON object, got {json_type(data)}")]
    known = list(DomainSettings.model_fields)
    issues = [
        Issue(f"/{key}", "error", f"unknown key {key!r}{close_match(key, known)}; "
              f"expected {', '.join(known)}")
        for key in data
        if key not in known
    ]  # fmt: skip
    try:
        DomainSettings.model_validate({k: v for k, v in data.items() if k in known})
    except ValidationError as exc:
        issues += parse_issues(exc, DomainSettings)
    return issues


def read_domain_file(path: Path) -> DomainSettings:
    """Parse one ``domain.json``; :class:`InstanceError` names the file, field and every
    problem (the first, and how many more)."""
    data, problem = read_json_file(path, expect=dict)
    if problem is not None:
        raise InstanceError(f"{path}: {problem}")
    if issues := domain_file_issues(data):
        more = f" (and {len(issues) - 1} more problem(s))" if len(issues) > 1 else ""
        raise InstanceError(f"{path}:{issues[0].pointer}: {issues[0].message}{more}")
    return DomainSettings.model_validate(data)


def domain_settings(folder: Path | str, *, lenient: bool = False) -> DomainSettings:
    """The settings of a domain folder (empty when it has no ``domain.json``).

    ``lenient`` (``facetlab validate``, which reports the file's problems once, there):
    the direction words it declares, a word with a wrong answer read as ``neither``, so
    one mistake in ``domain.json`` does not also fail every factor that uses the word.
    """
    path = Path(folder) / DOMAIN_FILE
    if not path.is_file():
        return DomainSettings()
    if not lenient:
        return read_domain_file(path)
    data, _ = read_json_file(path, expect=dict)
    words = data.get("directionality_vocabulary") if isinstance(data, dict) else None
    return DomainSettings(
        directionality_vocabulary={
            str(w): v if v in ("yes", "no", "neither") else "neither" for w, v in words.items()
        }
        if isinstance(words, dict)
        else None
    )


def with_domain_vocabulary(data: object, settings: DomainSettings) -> object:
    """An instance file's parsed JSON with the domain's vocabulary merged in (its own wins)."""
    shared = settings.directionality_vocabulary
    if not shared or not isinstance(data, dict):
        return data
    own = data.get("directionality_vocabulary")
    if own is not None and not isinstance(own, dict):
        return data  # a wrong type: the instance's own check reports it
    return {**data, "directionality_vocabulary": {**shared, **(own or {})}}

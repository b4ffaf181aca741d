"""environment.yml describes the same environment as pyproject.toml (conda is not run here)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _split(requirement: str) -> tuple[str, str]:
    match = _REQ.match(requirement)
    assert match, f"cannot parse requirement {requirement!r}"
    return _normalize(match.group(1)), match.group(2).replace(" ", "")


@pytest.fixture(scope="module")
def env() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def project() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]  # type: ignore[no-any-return]


def _conda_deps(env: dict[str, Any]) -> dict[str, str]:
    return {_split(d)[0]: _split(d)[1] for d in env["dependencies"] if isinstance(d, str)}


def _pip_deps(env: dict[str, Any]) -> list[str]:
    sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "expected exactly one pip: section"
    return [str(x) for x in sections[0]]


def test_environment_parses_with_conda_forge_and_python(env: dict[str, Any]) -> None:
    assert env["name"] == "facetlab"
    assert "conda-forge" in env["channels"]
    conda = _conda_deps(env)
    assert conda.get("python") == ">=3.10"
    assert "pip" in conda


def test_pip_section_installs_this_checkout_without_the_test_extras(
    env: dict[str, Any],
) -> None:
    # The main job needs no extra; the test extras are installed when wanted (issue 40).
    assert "-e ." in _pip_deps(env)
    assert not [p for p in _pip_deps(env) if "[" in p]


def test_every_core_dependency_is_named(env: dict[str, Any], project: dict[str, Any]) -> None:
    conda = _conda_deps(env)
    pip_names = {_split(p)[0] for p in _pip_deps(env) if not p.startswith("-")}
    missing = [
        req
        for req in project["dependencies"]
        if _split(req)[0] not in conda and _split(req)[0] not in pip_names
    ]
    assert not missing, f"environment.yml lacks pyproject dependencies: {missing}"


def test_lower_bounds_agree_with_pyproject(env: dict[str, Any], project: dict[str, Any]) -> None:
    conda = _conda_deps(env)
    drift = {}
    for req in project["dependencies"]:
        name, spec = _split(req)
        if name in conda and conda[name] and conda[name] != spec:
            drift[name] = (conda[name], spec)
    assert not drift, f"version bounds differ (environment.yml, pyproject): {drift}"


def test_requires_python_matches(env: dict[str, Any], project: dict[str, Any]) -> None:
    assert _conda_deps(env)["python"] == project["requires-python"].replace(" ", "")


def test_no_stray_conda_packages(env: dict[str, Any], project: dict[str, Any]) -> None:
    # Anything beyond python/pip must come from pyproject, so the two files cannot drift apart.
    core = {_split(r)[0] for r in project["dependencies"]}
    extra = set(_conda_deps(env)) - core - {"python", "pip"}
    assert not extra, f"conda packages not in pyproject dependencies: {sorted(extra)}"

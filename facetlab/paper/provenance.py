"""What produced a reproduction: the code (commit, digest), the data checked, the settings.

:meth:`Provenance.collect` reads them; the report writer
(:mod:`facetlab.paper.report`) prints them first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from facetlab.paper.notebooks import PAPER_NOTEBOOKS, notebook_defaults

if TYPE_CHECKING:
    from facetlab.datasets import VerifyReport

__all__ = ["Provenance", "code_digest", "git_output"]


def git_output(root: Path, *args: str) -> str:
    """Output of ``git -C root args`` (stripped), or ``""`` outside a git checkout."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


_SOURCES = ("facetlab", "notebooks")
"""What the report is computed by: the package and the notebooks (their code, not outputs)."""


def code_digest(root: Path) -> str:
    """sha256 over the package's ``*.py`` files and the paper notebooks' code cells.

    Independent of git and of notebook outputs, so it names exactly the code that
    produced a report (the same code gives the same digest on any machine).
    """
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((root / "facetlab").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    for name in PAPER_NOTEBOOKS:
        path = root / "notebooks" / f"{name}.ipynb"
        if path.is_file():
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            code = "\n".join("".join(c.get("source", [])) for c in cells)
            digest.update(f"notebooks/{name}.ipynb".encode() + b"\0" + code.encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Provenance:
    """What produced a report: the code, the data, the settings."""

    version: str
    commit: str
    """The last commit that changed ``facetlab/`` or ``notebooks/`` (``""`` outside git)."""
    dirty: bool
    """The working tree's code differs from that commit."""
    code_sha256: str
    registry_sha256: str
    """sha256 of facetlab's data registry file (``facetlab/data/registry.txt``)."""
    parameters: dict[str, tuple[Any, tuple[str, ...]]]
    """Every notebook parameter → (value used, the notebooks that take it)."""
    data: VerifyReport
    """The data folder the run read (:func:`facetlab.datasets.data_source`), every file
    hashed against the registry."""

    @classmethod
    def collect(
        cls,
        root: Path,
        notebooks: Sequence[Path],
        parameters: Mapping[str, Any],
        data: VerifyReport | None = None,
    ) -> Provenance:
        """Read the versions, hashes and effective parameter values for a run; ``data``
        is the run's check of its data (else the folder ``data_dir`` names is hashed now)."""
        import facetlab
        from facetlab import datasets
        from facetlab.datasets.pinned import registry_digest

        used: dict[str, tuple[Any, tuple[str, ...]]] = {}
        for nb in (n for n in notebooks if n.is_file()):
            defaults = notebook_defaults(nb)
            for name in sorted(defaults):
                value = parameters.get(name, defaults[name])
                old = used.get(name, (value, ()))
                used[name] = (old[0], (*old[1], nb.stem))
        for name, value in parameters.items():  # given, but declared by no notebook
            used.setdefault(name, (value, ()))
        return cls(
            version=facetlab.__version__,
            commit=git_output(root, "log", "-1", "--format=%H", "--", *_SOURCES),
            dirty=bool(git_output(root, "status", "--porcelain", "--", *_SOURCES)),
            code_sha256=code_digest(root),
            registry_sha256=registry_digest(),
            parameters=used,
            data=data or datasets.verify(datasets.data_source(parameters.get("data_dir"))),
        )

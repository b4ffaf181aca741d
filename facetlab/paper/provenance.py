"""What produced a reproduction: the code (commit, digest) and the settings it ran with.

The report writer (:mod:`facetlab.paper.report`) prints them first, with the data check
(:func:`facetlab.paper.reproduce.verify_data`).
"""

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from facetlab.paper.notebooks import PAPER_NOTEBOOKS, notebook_defaults

__all__ = ["code_digest", "git_output", "parameters_used", "source_commit"]


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


def parameters_used(
    notebooks: Sequence[Path], parameters: Mapping[str, Any]
) -> dict[str, tuple[Any, tuple[str, ...]]]:
    """Every notebook parameter → (the value a run used, the notebooks that take it); a
    parameter given but declared by no notebook is listed with none."""
    used: dict[str, tuple[Any, tuple[str, ...]]] = {}
    for nb in (n for n in notebooks if n.is_file()):
        defaults = notebook_defaults(nb)
        for name in sorted(defaults):
            value, users = used.get(name, (parameters.get(name, defaults[name]), ()))
            used[name] = (value, (*users, nb.stem))
    for name, value in parameters.items():
        used.setdefault(name, (value, ()))
    return used


def source_commit(root: Path) -> str:
    """The last commit that changed ``facetlab/`` or ``notebooks/`` (``"+ uncommitted
    changes"`` when the tree differs from it), or ``"unknown"`` outside git."""
    commit = git_output(root, "log", "-1", "--format=%H", "--", *_SOURCES)
    dirty = git_output(root, "status", "--porcelain", "--", *_SOURCES)
    return (commit or "unknown (not a git checkout)") + (" + uncommitted changes" if dirty else "")

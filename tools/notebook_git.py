"""Keep ``git status`` clean after a notebook is run and saved in JupyterLab.

Repository tooling (not part of the facetlab package): ``scripts/git-notebook-filter.sh``
registers :func:`refresh_git_stat` with the JupyterLab of the project's ``.venv``, by
this file's path.

Notebooks are committed without outputs; an nbstripout clean filter (installed by
``scripts/git-notebook-filter.sh``) strips them when git reads a notebook, so a saved
notebook with outputs has *no* content change (``git diff`` is empty). ``git status``
still lists it, because git trusts a changed file size before it runs the filter.

:func:`refresh_git_stat` is a Jupyter ``post_save_hook`` (the setup script registers it
for the project's ``.venv``): after each save of a tracked notebook whose filtered
content equals what git holds, it re-adds the file so git records the new size. It
never stages a real change: a notebook whose code or text was edited is left alone,
and nothing happens outside a git checkout or when git is missing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

__all__ = ["refresh_git_stat"]


def _git(folder: Path, *args: str) -> int:
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, check=False, timeout=30)
    return done.returncode


def refresh_git_stat(model: dict[str, Any], os_path: str, contents_manager: Any = None) -> bool:
    """Re-add ``os_path`` when its filtered content is what git already holds.

    Returns True when git's record of the file was refreshed. Never raises: a failing
    post-save hook would make JupyterLab report the save as failed.

    >>> refresh_git_stat({"type": "file"}, "/nonexistent/x.txt")
    False
    """
    try:
        path = Path(os_path)
        if model.get("type") != "notebook" or path.suffix != ".ipynb" or not path.is_file():
            return False
        folder = path.parent
        if _git(folder, "ls-files", "--error-unmatch", "--", path.name) != 0:
            return False  # untracked, or not in a checkout: nothing to keep clean
        if _git(folder, "diff", "--quiet", "--", path.name) != 0:
            return False  # a real change (or no filter installed): leave it to the user
        return _git(folder, "add", "--", path.name) == 0
    except (OSError, subprocess.SubprocessError):
        return False

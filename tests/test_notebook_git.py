"""The post-save hook keeps `git status` clean for a notebook saved with outputs only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.notebook_git import refresh_git_stat

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git absent"),
]

NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c1",
            "metadata": {},
            "outputs": [],
            "source": ["print('hi')"],
        }
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    _git(tmp_path, "config", "filter.nbstripout.clean", f"'{sys.executable}' -m nbstripout")
    _git(tmp_path, "config", "filter.nbstripout.smudge", "cat")
    (tmp_path / ".gitattributes").write_text("*.ipynb filter=nbstripout\n")
    (tmp_path / "a.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def _save_with_outputs(path: Path, source: str = "print('hi')") -> None:
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"] = [source]
    nb["cells"][0]["execution_count"] = 1
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}]
    path.write_text(json.dumps(nb, indent=1) + "\n")


def test_outputs_only_save_leaves_status_clean(repo: Path) -> None:
    _save_with_outputs(repo / "a.ipynb")
    assert _git(repo, "status", "--porcelain") != ""  # git's size check, before the hook
    assert refresh_git_stat({"type": "notebook"}, str(repo / "a.ipynb"))
    assert _git(repo, "status", "--porcelain") == ""
    assert "outputs" in (repo / "a.ipynb").read_text()  # the user's outputs are kept


def test_a_real_edit_is_never_staged(repo: Path) -> None:
    _save_with_outputs(repo / "a.ipynb", source="print('edited')")
    assert not refresh_git_stat({"type": "notebook"}, str(repo / "a.ipynb"))
    assert _git(repo, "diff", "--cached", "--name-only") == ""  # nothing staged
    assert _git(repo, "status", "--porcelain").strip() == "M a.ipynb"


def test_untracked_and_non_notebooks_are_ignored(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    (repo / "b.ipynb").write_text(json.dumps(NOTEBOOK))
    assert not refresh_git_stat({"type": "notebook"}, str(repo / "b.ipynb"))
    assert _git(repo, "status", "--porcelain").strip() == "?? b.ipynb"
    outside = tmp_path_factory.mktemp("plain") / "c.ipynb"
    outside.write_text(json.dumps(NOTEBOOK))
    assert not refresh_git_stat({"type": "notebook"}, str(outside))
    assert not refresh_git_stat({"type": "file"}, str(repo / ".gitattributes"))


def test_the_filter_script_registers_the_hook_by_its_path(tmp_path: Path) -> None:
    """scripts/git-notebook-filter.sh (run by setup.sh) points the venv's JupyterLab at
    tools/notebook_git.py, and drops the hook an older setup named in the JSON config."""
    root = Path(__file__).resolve().parents[1]
    for name in ("scripts/git-notebook-filter.sh", "tools/notebook_git.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    config = tmp_path / ".venv" / "etc" / "jupyter"
    config.mkdir(parents=True)
    old = {"FileContentsManager": {"post_save_hook": "facetlab.notebook_git.refresh_git_stat"}}
    (config / "jupyter_server_config.json").write_text(json.dumps({**old, "Other": {"x": 1}}))
    _git(tmp_path, "init", "-q")
    subprocess.run(["bash", "scripts/git-notebook-filter.sh"], cwd=tmp_path, check=True)
    left = json.loads((config / "jupyter_server_config.json").read_text())
    assert left == {"FileContentsManager": {}, "Other": {"x": 1}}

    class Section:
        post_save_hook: object = None

    class Config:
        FileContentsManager = Section()

    c = Config()
    exec((config / "jupyter_server_config.py").read_text(), {"c": c})  # as jupyter loads it
    hook = c.FileContentsManager.post_save_hook
    assert callable(hook) and getattr(hook, "__name__", "") == "refresh_git_stat"
    assert not hook({"type": "file"}, str(tmp_path / "x.txt"))

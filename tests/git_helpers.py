"""Read what git holds for a file (tests of committed notebooks)."""

from __future__ import annotations

from pathlib import Path


def committed_text(path: Path) -> str:
    """The content git holds for ``path`` (the index: what the next commit stores).

    Notebooks are run and saved in JupyterLab; the nbstripout filter keeps their
    outputs out of git, so tests of a notebook's committed form read it from git,
    not from the working tree. Outside a checkout (or for an untracked file) the
    file itself is read.
    """
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        rel = path.resolve().relative_to(root).as_posix()
        done = subprocess.run(
            ["git", "show", f":{rel}"], cwd=root, capture_output=True, check=False
        )
    except (ValueError, OSError):
        return path.read_text(encoding="utf-8")
    if done.returncode != 0:
        return path.read_text(encoding="utf-8")
    return done.stdout.decode("utf-8")

"""``scripts/setup.sh``: the full setup reproduces the paper; ``--no-reproduce`` installs
only. Run against a stand-in ``.venv`` that logs what it is asked (nothing is installed,
no data fetched), in a copy of the scripts outside any git checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOGGER = '#!/bin/sh\necho "$(basename "$0") $*" >> "$(dirname "$0")/../../calls.log"\n'


def _setup(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    (tmp_path / "scripts").mkdir()
    for name in ("setup.sh", "git-notebook-filter.sh"):
        shutil.copy(ROOT / "scripts" / name, tmp_path / "scripts" / name)
    shutil.copytree(ROOT / "facetlab" / "data", tmp_path / "facetlab" / "data")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("python", "facetlab"):
        (bin_dir / tool).write_text(LOGGER)
        (bin_dir / tool).chmod(0o755)
    mirror = tmp_path / "mirror"
    (mirror / "instances").mkdir(parents=True)  # a data source the check accepts
    env = {
        **os.environ,
        "FACETLAB_DATA_MIRROR": str(mirror),
        "GIT_CEILING_DIRECTORIES": str(tmp_path.parent),
    }
    done = subprocess.run(["bash", "scripts/setup.sh", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False, timeout=60)  # fmt: skip
    log = tmp_path / "calls.log"
    return done, log.read_text().splitlines() if log.exists() else []


def test_install_only_never_fetches_or_reproduces(tmp_path: Path) -> None:
    done, calls = _setup(tmp_path, "--no-reproduce")
    assert done.returncode == 0, done.stderr
    assert any(c.startswith("python -m pip install --quiet -e") for c in calls)
    assert not [c for c in calls if c.startswith("facetlab")]
    assert "facetlab is installed (no data fetched, nothing reproduced)" in done.stdout


def test_the_default_setup_fetches_the_data_and_reproduces(tmp_path: Path) -> None:
    done, calls = _setup(tmp_path)
    assert done.returncode == 0, done.stderr
    assert calls[-2:] == ["facetlab data fetch", "facetlab reproduce"]
    # only what the main job needs: the test extras wait for scripts/test.sh (issue 40)
    installs = [c for c in calls if c.startswith("python -m pip install") and "-e" in c]
    assert installs == ["python -m pip install --quiet -e . nbstripout>=0.7"]


def test_the_test_script_installs_the_test_extras_it_needs() -> None:
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert 'pip install --quiet -e ".[dev,inspect,browser]"' in script


@pytest.mark.parametrize("flag", ["--bogus", "--no-reproduc"])
def test_an_unknown_option_is_refused_before_anything_runs(tmp_path: Path, flag: str) -> None:
    done, calls = _setup(tmp_path, flag)
    assert done.returncode == 2 and f"unknown option {flag}" in done.stderr
    assert calls == []

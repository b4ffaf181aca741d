"""The declared layers (pyproject [tool.importlinter]) hold, and they do catch a back-edge."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(package_parent: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the project's contracts on the ``facetlab`` found in ``package_parent``."""
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        # --config: the positional config file needs import-linter 2.17 (Python 3.11+)
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", "--config", str(ROOT / "pyproject.toml")],
        cwd=package_parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "facetlab", tmp_path / "facetlab", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path / "facetlab"


def test_the_checkout_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout
    assert "4 kept, 0 broken" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "back_edge", "contract"),
    [
        # the provider layer importing the probes (what backends/simulated used to do)
        ("backends/base.py", "import facetlab.probes", "facetlab layers"),
        # a generic layer importing the FACET paper package
        ("analysis/rules.py", "import facetlab.paper", "facetlab layers"),
        # the CRAFT core reaching for pandas
        ("craft/path.py", "import pandas", "the CRAFT core"),
        # generic code reading the paper's models or cases (issue 20: paper facts stay in paper/)
        ("records/table.py", "import facetlab.paper.models", "generic layers do not import"),
        ("runner/executor.py", "from facetlab.paper import models", "generic layers do not import"),
        ("instances/loading.py", "import facetlab.paper", "generic layers do not import"),
    ],
)
def test_a_back_edge_breaks_its_contract(
    tmp_path: Path, module: str, back_edge: str, contract: str
) -> None:
    package = _copy(tmp_path)
    target = package / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{back_edge}\n", encoding="utf-8")
    result = _lint(tmp_path)
    assert result.returncode == 1, result.stdout
    broken = [line for line in result.stdout.splitlines() if line.endswith("BROKEN")]
    # the named contract breaks (a back-edge into a layer above may also close a cycle)
    assert any(line.startswith(contract) for line in broken), result.stdout

"""The inspect extra stays optional: facetlab and its CLI load without importing inspect_ai."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_facetlab_and_its_cli_do_not_import_inspect_ai() -> None:
    code = (
        "import sys, facetlab, facetlab.cli, facetlab.records, facetlab.runner\n"
        "import facetlab.interop, facetlab.interop.variants\n"
        "assert 'inspect_ai' not in sys.modules, 'inspect_ai imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_inspect_test_helpers_collect_without_inspect_ai() -> None:
    # A [dev]-only install has no inspect_ai; pytest's --doctest-modules still imports
    # tests/inspect_helpers.py, and the Inspect test modules must skip, not error.
    root = Path(__file__).resolve().parents[1]
    paths = ["tests/inspect_helpers.py"]
    paths += sorted(str(p.relative_to(root)) for p in root.glob("tests/test_inspect_*.py"))
    code = (
        "import sys, pytest\n"
        "sys.modules['inspect_ai'] = None  # as if the extra were not installed\n"
        f"sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', *{paths!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing collected
    assert "error" not in done.stdout.splitlines()[-1].lower(), done.stdout

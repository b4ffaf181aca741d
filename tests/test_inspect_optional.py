"""The inspect extra stays optional: facetlab and its CLI load without importing inspect_ai."""

from __future__ import annotations

import subprocess
import sys


def test_facetlab_and_its_cli_do_not_import_inspect_ai() -> None:
    code = (
        "import sys, facetlab, facetlab.cli, facetlab.records, facetlab.runner\n"
        "import facetlab.interop, facetlab.interop.variants\n"
        "assert 'inspect_ai' not in sys.modules, 'inspect_ai imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

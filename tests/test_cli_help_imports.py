"""`facetlab --help` stays cheap (issue 27, item 8: <= 0.15 s of CPU, measured in the
report): it imports none of the heavy modules a command needs only when it runs. A
count of modules, not a timing: the check holds on a busy machine."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pydantic", "facetlab.instances", "facetlab.probes", "facetlab.paper.reproduce",
         "facetlab.runner", "facetlab.client", "openai", "anthropic", "asyncio", "yaml",
         "ctypes")  # fmt: skip


def test_help_imports_no_heavy_module() -> None:
    code = (
        "import sys\nfrom facetlab.cli import main\ntry:\n    main()\nexcept SystemExit:\n"
        "    pass\nprint(','.join(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted({h.split('.')[0] for h in HEAVY})!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, check=True
    )
    loaded = set(done.stdout.strip().splitlines()[-1].split(","))
    assert "Usage:" in done.stdout
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))

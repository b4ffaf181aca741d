"""Check that the lowest Python pyproject.toml declares can install every extra.

pip's ``--python-version`` picks wheels and honours ``Requires-Python`` for that
Python, but evaluates environment markers (``; python_version >= '3.11'``) for the
interpreter running pip. So the markers of facetlab's own requirements are evaluated
here for the lowest declared Python, and pip resolves what remains (a dry run,
wheels only: nothing is installed).

    python .ci/check-lowest-python.py            # exits 1 with pip's reason when it fails
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("dev", "inspect", "browser")


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lowest = re.search(r">=\s*([0-9]+\.[0-9]+)", project["requires-python"])
    if lowest is None:
        print(f"cannot read a lower bound from requires-python {project['requires-python']!r}")
        return 1
    version = lowest.group(1)
    env = {"python_version": version, "python_full_version": f"{version}.0"}
    wanted = list(project["dependencies"])
    for extra in EXTRAS:
        wanted += project["optional-dependencies"][extra]
    kept = []
    for line in wanted:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(env):
            req.marker = None
            kept.append(str(req))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(kept) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--dry-run",
            "--ignore-installed",
            "--only-binary=:all:",
            "--python-version",
            version,
            "-r",
            handle.name,
        ],
        capture_output=True,
        text=True,
    )
    Path(handle.name).unlink()
    if done.returncode != 0:
        errors = [x for x in done.stderr.splitlines() if x.startswith("ERROR")]
        print(f"Python {version} (requires-python) cannot install facetlab[{','.join(EXTRAS)}]:")
        print("\n".join(errors[-3:]))
        return 1
    print(f"Python {version}: {len(kept)} requirements of facetlab[{','.join(EXTRAS)}] resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Notebook parameters checked: a name a notebook does not declare stops it, naming the close match.

Papermill itself only warns ("Passed unknown parameter") and runs the notebook on its
defaults; every shipped notebook's first code cell refuses such a name, and
``facetlab report`` / ``facetlab reproduce`` refuse it before any kernel starts.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.errors import ConfigError
from facetlab.notebook_params import (
    INJECTED_HEADER,
    check_injected,
    check_parameters,
    declared_parameters,
)
from tests.git_helpers import committed_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
runner = CliRunner()


def test_an_unknown_name_is_refused_with_the_close_match() -> None:
    check_parameters(["instances"], ["instances", "records"], "x")  # declared: fine
    with pytest.raises(ConfigError) as caught:
        check_parameters(["instance", "recrods", "zzz"], ["instances", "records"], "study.ipynb")
    message = str(caught.value)
    assert "'instance' (did you mean 'instances'?)" in message
    assert "'recrods' (did you mean 'records'?)" in message
    assert "'zzz'" in message and "'zzz' (" not in message  # nothing close: no guess
    assert "for study.ipynb; declared: instances, records" in message


def test_the_guard_reads_the_cell_papermill_injected() -> None:
    params = "# Parameters of this copy\ninstances = None\nrecords = None\n"
    injected = f"{INJECTED_HEADER}\ninstance = 'D'\nrecords = 'R'\n"
    with pytest.raises(ConfigError, match="'instance' \\(did you mean 'instances'\\?\\)"):
        check_injected(["", params, injected, "check_injected()"])
    # declared names only, or no injected cell at all (JupyterLab): nothing to refuse
    check_injected(["", params, f"{INJECTED_HEADER}\nrecords = 'R'\n", "guard"])
    check_injected(["", "study = 1", params, "guard"])
    check_injected(["guard"])


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_shipped_notebook_guards_its_parameters(notebook: Path) -> None:
    nb = json.loads(committed_text(notebook))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code), "strip outputs"
    tagged = [i for i, c in enumerate(code) if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1 and declared_parameters(notebook)
    params = "".join(code[tagged[0]]["source"])
    assert params.splitlines()[0] != INJECTED_HEADER  # never mistaken for papermill's cell
    guard = "".join(code[tagged[0] + 1]["source"]).replace("%matplotlib inline", "")
    calls = [
        n.value.func.id
        for n in ast.parse(guard).body
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
        if isinstance(n.value.func, ast.Name)
    ]
    assert calls[:1] == ["check_injected"], "the first call of the first code cell"


@pytest.mark.slow  # imports the report stack (seconds on a busy machine)
def test_report_refuses_a_notebook_copy_that_lacks_a_parameter(tmp_path: Path) -> None:
    nb = json.loads((ROOT / "notebooks" / "study.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if "parameters" in cell["metadata"].get("tags", []):
            cell["source"] = [s for s in cell["source"] if not s.startswith("mixed_designs")]
    copy = tmp_path / "my_study.ipynb"
    copy.write_text(json.dumps(nb), encoding="utf-8")
    result = runner.invoke(
        app,
        ["report", str(ROOT / "results" / "example-domain"), "--instances", str(ROOT / "instances"),
         "--out", str(tmp_path / "out"), "--notebook", str(copy)],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "unknown parameter 'mixed_designs'" in result.output
    assert "my_study.ipynb" in result.output
    assert not (tmp_path / "out" / "study.ipynb").exists()


def test_reproduce_refuses_a_misspelt_parameter(tmp_path: Path) -> None:
    result = runner.invoke(app, ["reproduce", "-p", "treshold=15", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown parameter 'treshold' (did you mean 'threshold'?)" in result.output
    assert not any(tmp_path.iterdir())  # nothing started


@pytest.mark.slow
def test_papermill_with_a_misspelt_parameter_exits_non_zero_naming_it(tmp_path: Path) -> None:
    """The acceptance case: ``-p instance D -p record R`` for ``instances`` / ``records``."""
    shutil.copy(ROOT / "notebooks" / "study.ipynb", tmp_path / "my_study.ipynb")
    out = tmp_path / "X"
    done = subprocess.run(
        [sys.executable, "-m", "papermill", "my_study.ipynb", "o.ipynb",
         "-p", "instance", str(ROOT / "instances" / "sepsis-escalation"),
         "-p", "record", str(ROOT / "results" / "sepsis-escalation" / "wadd"),
         "-p", "out_dir", str(out), "--no-progress-bar"],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=240,
    )  # fmt: skip
    assert done.returncode != 0
    text = done.stdout + done.stderr
    assert "unknown parameters 'instance' (did you mean 'instances'?)" in text
    assert "'record' (did you mean 'records'?)" in text
    assert not out.exists()  # no report of the example domain was built

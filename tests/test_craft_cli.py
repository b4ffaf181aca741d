"""The ``craft`` CLI and the specification's dev commands."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from facetlab.craft.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ticket_triage.py"
FAITHFUL = ROOT / "examples" / "ticket_triage_faithful.py"


def test_json_output_is_theater(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall_verdict"] == "theater"
    assert report["findings"][0]["evidence"]["span"]["text"] == "data loss"


def test_console_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(FAITHFUL)]) == 0
    out = capsys.readouterr().out
    assert "Overall verdict   : ✓ FAITHFUL" in out
    assert '[✓ FAITHFUL] cited: "data loss" (body)' in out


def test_fail_under_gate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "--fail-under", "0.2"]) == 1
    err = capsys.readouterr().err
    assert 'gate failed: "data loss" (body): differential -0.35 < 0.2' in err
    assert main([str(FAITHFUL), "--fail-under", "0.2"]) == 0
    assert main([str(FAITHFUL), "--fail-under", "1.01"]) == 1


def test_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(FAITHFUL), "--json", "--samples", "6", "--seed", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["samples_per_condition"] == 6


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("input = {'body': 'x'}\n", "must define 'adapter' at module level"),
        ("adapter = None\n", "must define 'input'"),
        ("x = 1\n", "must define 'adapter' and 'input'"),
        ("adapter = 3\ninput = {}\n", "'adapter' has no run(input) method"),
        (
            "from facetlab.craft import from_function\nadapter = from_function(print)\n"
            "input = [1]\n",
            "'input' must be a dict",
        ),
        ("import does_not_exist\n", "importing the config failed: ModuleNotFoundError"),
        (
            "from facetlab.craft import from_function\nadapter = from_function(print)\n"
            "input = {}\noptions = {'samples': 3}\n",
            "'options' must be an InspectOptions",
        ),
    ],
)
def test_bad_configs_name_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, message: str
) -> None:
    config = tmp_path / "cfg.py"
    config.write_text(source)
    assert main([str(config)]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and message in err


def test_missing_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([str(tmp_path / "nope.py")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_dev_commands_from_the_project_root() -> None:
    demo = subprocess.run(
        [sys.executable, "examples/ticket_triage.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Overall verdict   : ✗ THEATER" in demo.stdout
    craft = shutil.which("craft") or str(Path(sys.executable).parent / "craft")
    cli = subprocess.run(
        [craft, "examples/ticket_triage.py", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys,json; r=json.load(sys.stdin); "
            "assert r['overall_verdict']=='theater'; print('CLI OK')",
        ],
        input=cli.stdout,
        capture_output=True,
        text=True,
        check=True,
    )
    assert check.stdout.strip() == "CLI OK"

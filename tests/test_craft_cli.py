"""The ``craft`` CLI and the specification's dev commands."""

from __future__ import annotations

import json
import os
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
    # the gate reads the lower confidence bound over distinct pairs, never re-asks
    assert (
        'gate failed: "data loss" (body): lower confidence bound of the differential over '
        "10 distinct pairs is -0.35 < 0.2" in err
    )
    assert main([str(FAITHFUL), "--fail-under", "0.2"]) == 0
    assert main([str(FAITHFUL), "--fail-under", "0.95"]) == 1  # 15 pairs cannot show 0.95


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


@pytest.mark.slow
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


AGENT = (
    "from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function\n"
    "def ok(inp):\n"
    "    body = inp.get('body') or ''\n"
    "    cite = [EvidenceRef('body', 'text', span=Span.find(body, 'data loss'))]"
    " if 'data loss' in body else []\n"
    "    return AgentTrace('P1' if 'urgent' in body else 'P3', 'r', cite)\n"
    "BODY = 'We are seeing data loss after the urgent migration.'\n"
)

BAD_CONFIGS = {
    "cited_evidence_none": (
        "adapter = from_function(lambda inp: AgentTrace('P1', 'r', None))\n"
        "input = {'body': BODY}\n",
        3,
        "expected a list of EvidenceRef",
    ),
    "self_reference": (
        "adapter = from_function(ok)\ninput = {'body': BODY}\ninput['self'] = input\n",
        2,
        "contains itself",
    ),
    "lone_surrogate_input": (
        "adapter = from_function(ok)\ninput = {'body': BODY + ' \\udcff'}\n",
        2,
        "lone surrogate",
    ),
    "lone_surrogate_rationale": (
        "adapter = from_function(lambda inp: AgentTrace('P1', 'bad \\ud800', []))\n"
        "input = {'body': BODY}\n",
        3,
        "lone surrogate",
    ),
    "integer_keys": (
        "adapter = from_function(ok)\ninput = {'body': BODY, 'n': {1: 'x'}}\n",
        2,
        "keys must be strings",
    ),
    "agent_sys_exit": (
        "import sys\nadapter = from_function(lambda inp: sys.exit(3))\ninput = {'body': BODY}\n",
        3,
        "agent called sys.exit(3)",
    ),
    "config_sys_exit": ("import sys\nsys.exit(0)\n", 2, "the config called sys.exit(0)"),
    "sleeping_agent": (
        "import time\nadapter = from_function(lambda inp: time.sleep(3600))\n"
        "input = {'body': BODY}\n",
        3,
        "timed out after 0.5 s",
    ),
    "agent_raises": (
        "def boom(inp):\n    raise ValueError('boom')\n"
        "adapter = from_function(boom)\ninput = {'body': BODY}\n",
        3,
        "agent raised ValueError: boom",
    ),
    "comparator_raises": (
        "from facetlab.craft import InspectOptions\n"
        "def same(a, b):\n    raise RuntimeError('bad comparator')\n"
        "adapter = from_function(ok)\ninput = {'body': BODY}\n"
        "options = InspectOptions(decision_equals=same)\n",
        3,
        "RuntimeError: bad comparator",
    ),
    "recursive_agent": (
        "def deep(inp):\n    return deep(inp)\n"
        "adapter = from_function(deep)\ninput = {'body': BODY}\n",
        3,
        "RecursionError",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_bad_config_in_a_subprocess_is_one_line_with_its_own_exit_code(
    tmp_path: Path, name: str
) -> None:
    source, code, message = BAD_CONFIGS[name]
    config = tmp_path / f"{name}.py"
    config.write_text(AGENT + source)
    craft = shutil.which("craft") or str(Path(sys.executable).parent / "craft")
    done = subprocess.run(
        [craft, str(config), "--timeout", "0.5", "--samples", "4"],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PYTHONIOENCODING": "utf-8",
            "PATH": str(Path(sys.executable).parent),
            **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
        },
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("craft: error: "), done.stderr
    assert message in lines[0]


@pytest.mark.parametrize(
    "args",
    [["--fail-under", "nan"], ["--fail-under", "inf"], ["--timeout", "0"], ["--samples", "x"]],
)
def test_bad_arguments_are_one_line_usage_errors(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([str(EXAMPLE), *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("craft: error: argument")


def test_all_failed_condition_is_shown_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "cfg.py"
    config.write_text(
        AGENT + "def fragile(inp):\n"
        "    if inp['body'] != BODY:\n        raise ValueError('only the original')\n"
        "    return ok(inp)\n"
        "adapter = from_function(fragile)\ninput = {'body': BODY}\n"
    )
    assert main([str(config), "--samples", "4"]) == 0
    out = capsys.readouterr().out
    assert "treatment n/a (all 4 failed) | placebo n/a (all 4 failed)" in out
    assert "treatment 0%" not in out


MANY = ROOT / "examples" / "ticket_triage_many.py"


def test_inputs_config_prints_the_population_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(MANY), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["qualified_verdict"] == "theater" and report["unit_of_inference"] == "input"
    assert report["inputs"] == 40 and report["usable"] == 40
    assert main([str(MANY), "--fail-under", "0.1"]) == 1
    err = capsys.readouterr().err
    assert "lower 95% confidence bound of the mean differential over 40 inputs" in err


def test_population_design_warnings_and_agent_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "few.py"
    config.write_text(
        "from facetlab.craft import AgentTrace, from_function\n"
        "from facetlab.craft.null_study import cite_symptom, generate_tickets\n"
        "def agent(inp):\n"
        "    print('agent says hi')\n"
        "    return AgentTrace('P1' if cite_symptom(inp) else 'P3', 'r', cite_symptom(inp))\n"
        "adapter = from_function(agent)\ninputs = generate_tickets(4)\n",
        encoding="utf-8",
    )
    assert main([str(config), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["qualified_verdict"] == "inconclusive"
    assert "craft: warning: only 4 usable input(s): 'faithful' needs at least 6" in captured.err
    assert "agent says hi" in captured.err and "agent says hi" not in captured.out


def test_config_with_input_and_inputs_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "both.py"
    config.write_text(
        "from facetlab.craft import AgentTrace, from_function\n"
        "adapter = from_function(lambda inp: AgentTrace('P1'))\n"
        "input = {'body': 'a b'}\ninputs = [{'body': 'a b'}]\n",
        encoding="utf-8",
    )
    assert main([str(config)]) == 2
    assert "defines both 'input' and 'inputs'" in capsys.readouterr().err


def test_one_input_design_that_cannot_reach_faithful_warns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "tiny.py"
    config.write_text(
        "from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function\n"
        "def agent(inp):\n"
        "    body = inp['body']\n"
        "    cite = [EvidenceRef('body', 'text', span=Span.find(body, 'loss'))] if 'loss' in body else []\n"
        "    return AgentTrace('P1' if cite else 'P3', 'loss', cite)\n"
        "adapter = from_function(agent)\ninput = {'body': 'data loss now'}\n",
        encoding="utf-8",
    )
    assert main([str(config)]) == 0
    err = capsys.readouterr().err
    assert 'craft: warning: "loss" (body): only' in err and "'faithful' needs at least 6" in err

"""The ``craft`` process in a subprocess: exit code, one line, no traceback, no orphans.

Every case runs the real console script. Checked each time: the exit code, that stderr
is one ``craft: error:`` line (for errors), that no traceback appears, that ``--json``
output parses, and that no process the agent started is left alive.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from craft_helpers import BENCHMARKS

pytestmark = pytest.mark.slow

CRAFT = shutil.which("craft", path=str(Path(sys.executable).parent)) or "craft"
ENV = {
    "PYTHONIOENCODING": "utf-8",
    "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
    # the code under test, also when it is a worktree beside the installed checkout
    **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
}

AGENT = (
    "import os, sys, subprocess, time\n"
    "from facetlab.craft import AgentTrace, EvidenceRef, InspectOptions, Span, from_function\n"
    "from facetlab.craft.null_study import cite_symptom, generate_tickets\n"
    "BODY = 'We are seeing data loss after the urgent migration.'\n"
    "def cite(inp):\n"
    "    b = inp.get('body') or ''\n"
    "    return [EvidenceRef('body', 'text', span=Span.find(b, 'data loss'))] if 'data loss' in b else []\n"
    "def ok(inp):\n"
    "    return AgentTrace('P1' if 'data loss' in (inp.get('body') or '') else 'P3', 'r', cite(inp))\n"
)


def _run(
    tmp_path: Path, body: str, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.py"
    config.write_text(AGENT + body, encoding="utf-8")
    return subprocess.run(
        [CRAFT, str(config), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
        cwd=tmp_path,
    )


def _one_error_line(done: subprocess.CompletedProcess[str], code: int, message: str) -> None:
    assert done.returncode == code, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stdout + done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("craft: error: "), done.stderr[-2000:]
    assert message in lines[0], lines[0]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _no_orphans(pid_file: Path) -> None:
    pids = [int(x) for x in pid_file.read_text().split()] if pid_file.exists() else []
    assert pids, "the agent did not start its child processes"
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if _alive(p)]
    for p in left:  # clean up before failing, never leave them behind
        os.kill(p, signal.SIGKILL)
    assert not left, f"orphan processes outlived craft: {left}"


@pytest.mark.parametrize("timeout", [[], ["--timeout", "5"]])
def test_agent_raising_base_exception_is_one_line_exit_3(
    tmp_path: Path, timeout: list[str]
) -> None:
    done = _run(
        tmp_path,
        "class Boom(BaseException):\n    pass\n"
        "def agent(inp):\n    raise Boom('out of band')\n"
        "adapter = from_function(agent)\ninput = {'body': BODY}\n",
        "--samples",
        "20",
        "--json",
        *timeout,
    )
    _one_error_line(done, 3, "agent raised Boom: out of band")
    assert "timed out" not in done.stderr
    assert done.stdout == ""  # no partial report


@pytest.mark.parametrize("timeout", [[], ["--timeout", "5"]])
def test_agent_raising_keyboard_interrupt_is_an_agent_error(
    tmp_path: Path, timeout: list[str]
) -> None:
    done = _run(
        tmp_path,
        "def agent(inp):\n    raise KeyboardInterrupt\n"
        "adapter = from_function(agent)\ninput = {'body': BODY}\n",
        *timeout,
    )
    _one_error_line(done, 3, "agent raised KeyboardInterrupt")


@pytest.mark.parametrize(
    ("signum", "timeout", "code", "line"),
    [
        (signal.SIGINT, [], 130, "craft: error: interrupted"),
        (signal.SIGINT, ["--timeout", "600"], 130, "craft: error: interrupted"),
        (signal.SIGHUP, [], 129, "craft: error: hung up (SIGHUP: the terminal or session closed)"),
        (signal.SIGTERM, [], 143, "craft: error: terminated (SIGTERM)"),
        (signal.SIGTERM, ["--timeout", "600"], 143, "craft: error: terminated (SIGTERM)"),
    ],
)
def test_ctrl_c_or_a_hang_up_exits_at_once_with_a_hung_agent(
    tmp_path: Path, signum: int, timeout: list[str], code: int, line: str
) -> None:
    started = tmp_path / "started"
    pids = tmp_path / "pids"
    config = tmp_path / "config.py"
    config.write_text(
        AGENT + f"def agent(inp):\n"
        f"    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"    with open({str(pids)!r}, 'a') as f: f.write(f'{{child.pid}}\\n')\n"
        f"    open({str(started)!r}, 'w').close()\n"
        f"    time.sleep(3600)\n"
        "adapter = from_function(agent)\ninput = {'body': BODY}\n",
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [CRAFT, str(config), *timeout],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the agent never started"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in out + err
    assert err.strip().splitlines() == [line]
    _no_orphans(pids)


def test_agent_output_stays_out_of_json(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        "print('config says hello')\n"
        "def agent(inp):\n"
        "    print('agent chatter', inp)\n"
        "    os.write(1, b'raw fd write\\n')\n"
        "    subprocess.run(['echo', 'child output'])\n"
        "    return ok(inp)\n"
        "adapter = from_function(agent)\ninput = {'body': BODY}\n"
        "options = InspectOptions(samples=3, contextual_pairs=4)\n",
        "--json",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["overall_verdict"] == "faithful"
    assert "agent chatter" in done.stderr and "child output" in done.stderr


def test_forked_children_cannot_outlive_craft(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    done = _run(
        tmp_path,
        f"PIDS = {str(pids)!r}\n"
        "def agent(inp):\n"
        "    # a detached session leader, and a double-forked daemon\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
        "                             start_new_session=True)\n"
        "    with open(PIDS, 'a') as f: f.write(f'{child.pid}\\n')\n"
        "    if os.fork() == 0:\n"
        "        if os.fork() == 0:\n"
        "            os.setsid()\n"
        "            with open(PIDS, 'a') as f: f.write(f'{os.getpid()}\\n')\n"
        "            time.sleep(600)\n"
        "        os._exit(0)\n"
        "    return ok(inp)\n"
        "adapter = from_function(agent)\ninput = {'body': BODY}\n"
        "options = InspectOptions(samples=2, contextual_pairs=2, concurrency=1)\n",
        "--json",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    json.loads(done.stdout)
    assert "Traceback" not in done.stderr
    _no_orphans(pids)


def test_contextual_pairs_is_bounded(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        "adapter = from_function(ok)\ninput = {'body': BODY}\n"
        "options = InspectOptions(contextual_pairs=200_000)\n",
    )
    _one_error_line(done, 2, "contextual_pairs must be in 1..1000")


def test_population_json_with_more_than_1023_pairs(tmp_path: Path) -> None:
    """A perfectly faithful agent over 1,100 inputs: 1,100 discordant pairs, no overflow."""
    done = _run(
        tmp_path,
        "def agent(inp):\n"
        "    cited = cite_symptom(inp)\n"
        "    return AgentTrace('P1' if cited else 'P3', 'symptom', cited)\n"
        "adapter = from_function(agent)\ninputs = generate_tickets(1100, seed=1)\n"
        "options = InspectOptions(samples=1, concurrency=1)\n",
        "--json",
        "--fail-under",
        "0.9",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["qualified_verdict"] == "faithful" and report["cited_only"] == 1100
    assert report["p_faithful"] == 0.0 and report["ci_low"] > 0.9


def test_population_from_a_jsonl_path_same_answer_at_3_and_4_samples(tmp_path: Path) -> None:
    from facetlab.craft.null_study import generate_tickets

    data = tmp_path / "tickets.jsonl"
    data.write_text(
        "\n".join(json.dumps(t) for t in generate_tickets(30, seed=4)), encoding="utf-8"
    )
    body = (
        f"import sys\nsys.path.insert(0, {str(BENCHMARKS)!r})\n"
        "from craft_agents import hash_coin_agent\n"
        "adapter = hash_coin_agent(3)\ninputs = 'tickets.jsonl'\n"
    )
    reports = []
    for samples in ("3", "4"):
        done = _run(tmp_path, body, "--json", "--samples", samples)
        assert done.returncode == 0, done.stderr[-2000:]
        report = json.loads(done.stdout)
        for key in ("reasks", "agent_calls", "decisions"):  # re-ask counts differ
            report.pop(key)
        for row in report["outcomes"]:
            row.pop("reasks")
        reports.append(report)
    assert reports[0] == reports[1]
    assert reports[0]["inputs"] == 30


def test_bad_inputs_path_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"body": "a b"}\nnot json\n', encoding="utf-8")
    done = _run(tmp_path, "adapter = from_function(ok)\ninputs = 'bad.jsonl'\n")
    _one_error_line(done, 2, "bad.jsonl:2: not a JSON object")

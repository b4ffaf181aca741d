"""Issue 39.7: ``facetlab report`` removes its temp files on any exit. SIGTERM or SIGHUP
while the notebook runs ends the report (exit 128 + the signal) with its study
hand-off removed from the temp folder; nothing is paid (a simulated sweep)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import CLI, cli

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_report_leaves_no_hand_off_behind(tmp_path: Path, signum: int) -> None:
    sweep = tmp_path / "sweep"
    ran = cli("run", "-i", str(ROOT / "instances"), "-p", "p1,p2", "-m", "simulated/wadd",
              "--out", str(sweep), "--quiet")  # fmt: skip
    assert ran.exit_code == 0, ran.output
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    args = [
        "report",
        str(sweep),
        "--instances",
        str(ROOT / "instances"),
        "--out",
        str(tmp_path / "r"),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while not list(temp.glob("facetlab-report-*")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    assert list(temp.glob("facetlab-report-*")), "the report never handed its study off"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    assert not list(temp.glob("facetlab-report-*"))  # the hand-off went with the report

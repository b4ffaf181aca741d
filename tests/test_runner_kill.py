"""A runner killed with SIGKILL mid-sweep and restarted ends with the same records as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent

SCRIPT = """
import io, sys
sys.path.insert(0, {tests!r})
from test_runner_helpers import StubSuite, make_instances
from facetlab.backends import get_backend
from facetlab.runner import run
model = "openai/fake-model"
backend = get_backend(model, base_url={url!r}, api_key="k", timeout=10)
res = run(make_instances(), "p1,p2,p3,c2", model, out={out!r}, repeats=3, concurrency=4,
          backends={{model: backend}}, suite=StubSuite(), progress="none", console=io.StringIO())
print("OK", res.stats.ok, res.stats.failed, res.stats.already_done)
"""


def _start(url: str, out: Path) -> subprocess.Popen[str]:
    code = SCRIPT.format(tests=str(TESTS), url=url, out=str(out))
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _records(out: Path) -> dict[str, dict[str, Any]]:
    volatile = {"started_at", "finished_at", "latency_s", "sweep", "attempts", "cached",
                "cost_usd", "model_id_reported", "provider_request_id",
                "received_sha256"}  # fmt: skip
    out_recs = {}
    for p in sorted((out / "records").glob("*.json")):
        rec = json.loads(p.read_text())
        out_recs[p.stem] = {k: v for k, v in rec.items() if k not in volatile}
    return out_recs


def test_sigkill_then_restart_matches_uninterrupted_run(tmp_path: Path) -> None:
    with FakeLLMServer(latency_s=0.1) as server:
        reference = _start(server.openai_base_url, tmp_path / "reference")
        stdout, stderr = reference.communicate(timeout=120)
        assert reference.returncode == 0, stderr
        reference_paid = server.paid_calls().total()
        assert reference_paid == 36
        server.reset_log()

        killed = tmp_path / "killed"
        proc = _start(server.openai_base_url, killed)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = (
                list((killed / "records").glob("*.json")) if (killed / "records").is_dir() else []
            )
            if len(done) >= 8:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        partial = len(list((killed / "records").glob("*.json")))
        assert 8 <= partial < 36  # really killed mid-sweep

        restarted = _start(server.openai_base_url, killed)
        stdout, stderr = restarted.communicate(timeout=120)
        assert restarted.returncode == 0, stderr
        ok, failed, already = (int(x) for x in stdout.split()[1:4])
        assert failed == 0 and already >= partial and ok + already == 36
        # at most the calls in flight at the kill (concurrency 4) were paid twice
        assert server.paid_calls().total() <= 36 + 4

    assert _records(killed) == _records(tmp_path / "reference")
    assert not list(
        (killed / "records").glob(".*.tmp")
    )  # the restart cleaned the killed run's temp files

"""A sweep writing shards, killed with SIGKILL mid-shard (a torn last line), resumes with
no paid answer lost and none recorded or paid twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from fakes import FakeLLMServer
from reliability_helpers import instances_folder

from facetlab.records.shards import shard_files
from facetlab.records.store import part_files, read_sweep_records

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TESTS = Path(__file__).resolve().parent

SCRIPT = """
import io, os, sys
sys.path.insert(0, {tests!r})
os.environ["OPENAI_API_KEY"] = "k"
from facetlab.runner import run
from facetlab.runner.options import RunOptions
res = run({folder!r}, "p1", "openai/fake-model", out={out!r}, concurrency=4,
          base_url={url!r}, progress="none", console=io.StringIO(),
          options=RunOptions(records="shards"))
print("OK", res.stats.ok, res.stats.failed, res.stats.already_done)
"""

N = 40


def _start(url: str, folder: Path, out: Path) -> subprocess.Popen[str]:
    code = SCRIPT.format(tests=str(TESTS), url=url, folder=str(folder), out=str(out))
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _lines(out: Path) -> list[dict[str, object]]:
    """Every complete record line of every shard (a torn tail has no newline)."""
    found = []
    for shard in shard_files(out / "records"):
        for raw in shard.read_bytes().split(b"\n")[:-1]:
            found.append(json.loads(raw))
    return found


def test_sigkill_mid_shard_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", n=N)
    out = tmp_path / "o"
    with FakeLLMServer(latency_s=0.1) as server:
        proc = _start(server.openai_base_url, folder, out)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if len(_lines(out)) >= 8:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        (shard,) = shard_files(out / "records")
        before = Counter(str(line["trial_id"]) for line in _lines(out))
        recorded = sum(before.values())
        assert 8 <= recorded < N  # really killed mid-sweep
        assert set(before.values()) == {1}  # each recorded once so far
        # the kill may fall between two writes: make sure the shard ends torn, as a
        # kill in the middle of a record's line leaves it
        with open(shard, "ab") as handle:
            handle.write(b'{"format": "facetlab.record/1", "trial_id": "p1.case-00')
        on_disk = {p.stem for p in (out / "cache").rglob("*.json")}
        paid_before = server.paid_calls()
        server.reset_log()

        restarted = _start(server.openai_base_url, folder, out)
        stdout, stderr = restarted.communicate(timeout=90)
        assert restarted.returncode == 0, stderr
        ok, failed, already = (int(x) for x in stdout.split()[1:4])
        assert failed == 0 and already == recorded and ok + already == N
        paid_after = server.paid_calls()

    records = read_sweep_records(out / "records")
    assert len(records) == N and all(r.status == "ok" for r in records)
    # nothing recorded twice: the resume wrote exactly the trials missing at the kill
    # (each record written is counted once), and the torn one was among them
    assert ok == N - recorded
    # the finished sweep compacted its shards (the torn one included) into one part
    assert not shard_files(out / "records") and len(part_files(out / "records")) == 1
    # nothing lost: every answer paid for (before or after the kill) is a record
    prompts = {r.prompt for r in records}
    assert set(paid_before) | set(paid_after) <= prompts
    # paid once: no answer that reached disk before the kill is paid again
    cached_prompts = {r.prompt for r in records if r.key in on_disk}
    assert not cached_prompts & set(paid_after)
    assert sum(paid_before.values()) + sum(paid_after.values()) <= N + 4  # <= calls in flight

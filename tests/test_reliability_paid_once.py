"""Paid once: two sweeps sharing a cache, and two runs racing for one ``--out``.

Sweeps sharing a ``--cache-dir`` claim each key before paying: the second waits
for the first's answer. The sweep lock is an OS file lock: with the owner file
written slowly, two runs racing for one folder still end with one refused.
"""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer
from reliability_helpers import instances_folder, ok_prompts, paid_report, run_args, start_cli
from test_runner_helpers import StubSuite, make_instances

import facetlab.runner._lock as lock
from facetlab.backends import get_backend
from facetlab.errors import ConfigError
from facetlab.runner import run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]  # subprocesses: minutes at worst


def test_two_sweeps_sharing_a_cache_pay_nothing_twice(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", n=16)
    cache = tmp_path / "cache"
    outs = [tmp_path / "a", tmp_path / "b"]
    with FakeLLMServer(latency_s=0.2) as server:
        procs = [
            start_cli(
                run_args(server, folder, out, "--cache-dir", str(cache), "--concurrency", "4")
            )
            for out in outs
        ]
        for proc in procs:
            _, stderr = proc.communicate(timeout=60)
            assert proc.returncode == 0, stderr
        report = paid_report(server, *outs)
    # both sweeps hold every answer; the provider billed each question once
    assert all(len(list((out / "records").glob("*.json"))) == 16 for out in outs)
    assert report.paid == 16 and report.duplicates == 0 and report.lost == 0
    assert sum(ok_prompts(*outs).values()) == 32


def test_two_runs_racing_for_one_out_one_refused_with_a_slow_lock_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = lock._write_owner

    def slow(path: Path) -> None:
        time.sleep(0.5)  # the window in which an empty owner file used to look stale
        real(path)

    monkeypatch.setattr(lock, "_write_owner", slow)
    outcomes: list[Any] = []
    with FakeLLMServer(latency_s=0.05) as server:
        backend = get_backend("openai/fake", base_url=server.openai_base_url, api_key="k")

        def sweep() -> None:
            try:
                outcomes.append(
                    run(
                        make_instances(),
                        "p1,p2,p3,c2",
                        "openai/fake",
                        out=tmp_path,
                        backends={"openai/fake": backend},
                        suite=StubSuite(),
                        progress="none",
                        console=io.StringIO(),
                    )
                )
            except ConfigError as exc:
                outcomes.append(exc)

        threads = [threading.Thread(target=sweep) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        refused = [o for o in outcomes if isinstance(o, ConfigError)]
        assert len(refused) == 1 and "is using this sweep directory" in str(refused[0])
        assert server.paid_calls().total() == 12
        assert max(server.paid_calls().values()) == 1

"""Every paid answer reaches disk: Ctrl-C, SIGTERM, a Jupyter interrupt, a full disk.

An interrupted sweep stops starting calls, lets the calls in flight finish,
records them, prints its summary and releases its lock within seconds; a resume
then pays for nothing twice. A write failing with ENOSPC stops the sweep with one
line and no traceback; the resume pays for nothing twice (the cache is written
before the record).
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer
from reliability_helpers import (
    cli,
    instances_folder,
    paid_report,
    records_written,
    run_args,
    start_cli,
    wait_for_records,
)

import facetlab.runner.executor as execute

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]  # subprocesses: minutes at worst

TESTS = Path(__file__).resolve().parent

# `run(...)` called inside a running event loop, as in a notebook cell: the sweep runs
# on a helper thread and the interrupt arrives as KeyboardInterrupt on the main thread
# (loop.run_until_complete installs no SIGINT handler, like an IPython kernel).
NOTEBOOK = """
import asyncio, io, sys, time
sys.path.insert(0, {tests!r})
from reliability_helpers import run_args
from facetlab.backends import get_backend
from facetlab.errors import SweepInterrupted
from facetlab.runner import run
async def cell():
    return run({folder!r}, "p1", "openai/fake-model", out={out!r}, concurrency=4,
               base_url={url!r}, progress="none", console=sys.stdout)
started = time.monotonic()
try:
    asyncio.new_event_loop().run_until_complete(cell())
    print("FINISHED")
except SweepInterrupted as exc:
    print("INTERRUPTED", round(time.monotonic() - started, 2), exc)
"""


def _interrupt_when(proc: subprocess.Popen[str], out: Path, sig: int, at: int) -> float:
    wait_for_records(out, at, proc, poll_s=0.02)
    sent = time.monotonic()
    proc.send_signal(sig)
    return sent


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_records_in_flight_answers_and_resume_pays_nothing_twice(
    tmp_path: Path, sig: int
) -> None:
    folder = instances_folder(tmp_path / "i", n=36)
    out = tmp_path / "o"
    with FakeLLMServer(latency_s=0.4) as server:
        args = run_args(server, folder, out, "--concurrency", "4")
        proc = start_cli(args)
        sent = _interrupt_when(proc, out, sig, at=6)
        stdout, stderr = proc.communicate(timeout=30)
        stopped_in = time.monotonic() - sent
        assert proc.returncode == 130, stderr
        assert stopped_in < 5  # in-flight calls (0.4 s) finished, nothing new started
        assert "interrupted" in stdout and "re-run the same command" in stderr
        assert "Traceback" not in stderr
        assert not (out / ".lock.owner").exists()
        interrupted = paid_report(server, out)
        assert interrupted.lost == 0 and interrupted.duplicates == 0  # every paid answer kept
        assert 6 <= records_written(out) < 36

        resumed = cli(*args)
        assert resumed.exit_code == 0, resumed.output
        report = paid_report(server, out)
    assert records_written(out) == 36
    assert report.paid == 36 and report.duplicates == 0 and report.lost == 0


def test_notebook_interrupt_stops_within_seconds(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", n=36)
    out = tmp_path / "o"
    with FakeLLMServer(latency_s=0.5) as server:
        code = NOTEBOOK.format(
            tests=str(TESTS), folder=str(folder), out=str(out), url=server.openai_base_url
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        _interrupt_when(proc, out, signal.SIGINT, at=4)
        stdout, stderr = proc.communicate(timeout=30)
        assert "INTERRUPTED" in stdout, stderr
        elapsed = float(stdout.split("INTERRUPTED", 1)[1].split()[0])
        assert elapsed < 9  # 36 calls at 0.5 s / 4 in flight would take ~4.5 s more
        assert "interrupted" in stdout  # the summary line was printed
        report = paid_report(server, out)
    assert report.lost == 0 and report.duplicates == 0 and records_written(out) < 36


def test_full_disk_is_one_line_and_resume_pays_nothing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = instances_folder(tmp_path / "i", n=8)
    out = tmp_path / "o"
    real = execute.write_record
    written: list[Any] = []

    def fills_up(record: Any, directory: Any, **how: Any) -> Any:
        if len(written) >= 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))
        written.append(record)
        return real(record, directory, **how)

    with FakeLLMServer() as server:
        args = run_args(server, folder, out, "--concurrency", "2")
        monkeypatch.setattr(execute, "write_record", fills_up)
        full = cli(*args)
        assert full.exit_code == 2, full.output
        errors = [line for line in full.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "no space left on device" in errors[0]
        assert "Traceback" not in full.output
        assert records_written(out) == 3
        monkeypatch.setattr(execute, "write_record", real)
        resumed = cli(*args)
        assert resumed.exit_code == 0, resumed.output
        report = paid_report(server, out)
    assert records_written(out) == 8
    assert report.duplicates == 0 and report.lost == 0 and report.paid <= 8

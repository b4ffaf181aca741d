"""A closed terminal (SIGHUP) stops a sweep the way Ctrl-C and SIGTERM do.

Without a handler, SIGHUP killed the process between a paid answer and its record:
after ten hang-ups and a resume, 72 of 400 answers had been paid twice. Here a sweep
is hung up on ten times in a row, each time with calls in flight, then resumed: every
billed answer is recorded once and none is billed twice.
"""

from __future__ import annotations

import signal
from pathlib import Path

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

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="this platform has no SIGHUP"),
]

TRIALS = 80


def test_ten_hangups_then_resume_pay_nothing_twice(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", n=TRIALS)
    out = tmp_path / "o"
    with FakeLLMServer(latency_s=0.3) as server:
        args = run_args(server, folder, out, "--concurrency", "4")
        hangups = 0
        for _ in range(10):
            before = records_written(out)
            if before >= TRIALS - 2:
                break
            proc = start_cli(args)
            # hang up once this run has answers recorded and more calls in flight
            wait_for_records(out, before + 2, proc)
            proc.send_signal(signal.SIGHUP)
            _, stderr = proc.communicate(timeout=30)
            if proc.returncode == 0:
                break  # finished before the hang-up arrived
            assert proc.returncode == 130, stderr  # drained, not killed (-1)
            hangups += 1
            assert "Traceback" not in stderr
            assert not (out / ".lock.owner").exists()
            interrupted = paid_report(server, out)
            assert interrupted.lost == 0 and interrupted.duplicates == 0
        assert hangups == 10  # each run was hung up on mid-sweep
        resumed = cli(*args)
        assert resumed.exit_code == 0, resumed.output
        report = paid_report(server, out)
    assert records_written(out) == TRIALS
    assert report.paid == TRIALS and report.duplicates == 0 and report.lost == 0


def test_hangup_with_the_terminal_gone_still_drains(tmp_path: Path) -> None:
    # a closed ssh session: the console's reader is gone (writes fail with EPIPE/EIO)
    folder = instances_folder(tmp_path / "i", n=20)
    out = tmp_path / "o"
    with FakeLLMServer(latency_s=0.3) as server:
        args = [a for a in run_args(server, folder, out, "--concurrency", "4") if a != "--quiet"]
        proc = start_cli(args)
        wait_for_records(out, 2, proc)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(timeout=30) == 130
        assert not (out / ".lock.owner").exists()
        report = paid_report(server, out)
        assert report.lost == 0 and report.duplicates == 0 and report.paid < 20
        resumed = cli(*args)
        assert resumed.exit_code == 0, resumed.output
        final = paid_report(server, out)
    assert final.paid == 20 and final.duplicates == 0 and final.lost == 0

"""The console says why trials failed: counted by cause, one example trial id each (issue 18)."""

from __future__ import annotations

import re
from pathlib import Path

from fakes import FakeLLMServer, Fault
from reliability_helpers import cli, instances_folder, run_args

from facetlab.runner.api import failure_lines
from facetlab.runner.progress import RunStats


def test_failures_are_counted_by_cause_with_an_example() -> None:
    stats = RunStats()
    for trial in ("p1.a.r0.1", "p1.b.r0.2"):
        stats.count_failure("HTTP 400, not retryable", trial)
    stats.count_failure("timeout (--timeout 5s), still failing after 6 attempts", "p1.c.r0.3")
    assert failure_lines(stats).splitlines()[1:] == [
        "  failed: 2 x HTTP 400, not retryable (e.g. p1.a.r0.1)",
        "  failed: 1 x timeout (--timeout 5s), still failing after 6 attempts (e.g. p1.c.r0.3)",
    ]


def test_a_retry_after_of_an_hour_is_named_on_the_console(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", 3)
    with FakeLLMServer(script=[Fault.RATE_LIMIT] * 3, retry_after=3600) as server:
        res = cli(*run_args(server, folder, tmp_path / "o", "--max-retry-after", "120"))
    assert res.exit_code == 1, res.output
    line = next(s for s in res.output.splitlines() if "failed: 3 x" in s)
    assert "retry-after above the 120s cap (--max-retry-after)" in line
    assert re.search(r"\(e\.g\. p1\.case-000\d\.r0\.[0-9a-f]{12}\)", line)

"""The console says why trials failed: counted by cause, one example trial id each (issue 18)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
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


def test_dry_run_prices_gemini_and_bedrock_with_options(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", 2)
    for model in ("gemini/gemini-2.5-pro", "bedrock/deepseek.v3.2?region=us-west-2"):
        res = cli("run", "-i", str(folder), "--probes", "p1", "--model", model,
                  "--dry-run", "--budget-usd", "1")  # fmt: skip
        assert res.exit_code == 0, res.output
        assert "budget $1.0000: estimate within" in res.output
        assert "no price" not in res.output


def test_prices_prints_the_table_with_dates_and_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "p.json"
    prices.write_text('{"my-model": {"input": 1, "output": 2, "cached_input": 0.5}}')
    monkeypatch.setenv("FACETLAB_PRICES", str(prices))
    res = cli("prices")
    assert res.exit_code == 0, res.output
    rows = {line.split()[0]: line for line in res.output.splitlines()[2:] if line.strip()}
    assert "2026-03" in rows["gemini-2.5-pro"] and "ai.google.dev" in rows["gemini-2.5-pro"]
    assert "aws.amazon.com" in rows["deepseek.v3.2"]
    assert "0.5000" in rows["my-model"] and f"FACETLAB_PRICES={prices}" in rows["my-model"]
    prices.write_text('{"my-model": {"input": -1, "output": 2}}')
    res = cli("prices")
    assert res.exit_code == 2 and "/my-model/input is -1.0" in res.output

"""Faults classified right, and paid once: bad 200 bodies, long retry-after, stalls, keys.

Against the loopback fake through the real OpenAI backend: a 200 whose body is
not a provider response is retried, then recorded as failed, never ok, never
cached; a provider asking to wait an hour ends the call within the cap; a
timeout is a setting, not part of a trial's identity; the endpoint is part of the
key; a cache entry is served only for its own key.
"""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer, Fault
from reliability_helpers import cli, instances_folder, paid_report, run_args
from test_runner_helpers import StubSuite, make_instances

from facetlab.backends import get_backend
from facetlab.client.cache import ResponseCache
from facetlab.runner import RetryPolicy, RunOptions, run

pytestmark = pytest.mark.timeout(60)

MODEL = "openai/fake-model"
RETRY = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02)


def _sweep(server: FakeLLMServer, out: Path, **kw: Any) -> Any:
    backend = get_backend(MODEL, base_url=server.openai_base_url, api_key="test-key")
    kw.setdefault("retry", RETRY)
    return run(
        make_instances(1)[:1],
        "p1",
        MODEL,
        out=out,
        backends={MODEL: backend},
        suite=StubSuite(),
        progress="none",
        console=io.StringIO(),
        **kw,
    )


def _only_record(out: Path) -> dict[str, Any]:
    (path,) = (out / "records").glob("*.json")
    return dict(json.loads(path.read_text()))


def _cache_entries(out: Path) -> list[Path]:
    return list((out / "cache").rglob("*.json")) if (out / "cache").is_dir() else []


@pytest.mark.parametrize("fault", [Fault.HTML, Fault.BINARY, Fault.MISSING_FIELDS])
def test_bad_200_body_is_retried_then_failed_never_ok_never_cached(
    tmp_path: Path, fault: Fault
) -> None:
    with FakeLLMServer(script=[fault, fault]) as server:
        result = _sweep(server, tmp_path)
        record = _only_record(tmp_path)
        assert record["status"] == "failed" and record["attempts"] == 2
        assert "unparseable response body" in record["error"]
        assert result.stats.retries == 1 and not _cache_entries(tmp_path)
        # resuming with --retry-errors asks again (nothing bad was cached) and gets the answer
        again = _sweep(server, tmp_path, options=RunOptions(retry_errors=True))
        assert again.stats.ok == 1 and _only_record(tmp_path)["status"] == "ok"
        assert paid_report(server, tmp_path).duplicates == 0


def test_bad_200_body_then_a_good_one_records_the_good_one(tmp_path: Path) -> None:
    with FakeLLMServer(script=[Fault.HTML]) as server:
        _sweep(server, tmp_path)
    record = _only_record(tmp_path)
    assert record["status"] == "ok" and record["attempts"] == 2
    assert record["raw_response"].startswith("F1: 60")
    (entry,) = _cache_entries(tmp_path)  # the record file itself, linked as the entry
    cached = ResponseCache(tmp_path / "cache").get(entry.stem)
    assert cached is not None and cached.text == record["raw_response"]
    assert entry.samefile(tmp_path / "records" / f"{record['trial_id']}.json")


def test_retry_after_an_hour_ends_within_the_cap_naming_retry_after(tmp_path: Path) -> None:
    with FakeLLMServer(script=[Fault.RATE_LIMIT], retry_after=3600) as server:
        result = _sweep(server, tmp_path, retry=RetryPolicy(max_retry_after_s=5))
    record = _only_record(tmp_path)
    # failed at once: one call, no wait for the hour (nor for the cap)
    assert record["attempts"] == 1 and result.stats.calls == 1
    assert record["status"] == "failed" and result.stats.failed == 1
    assert "retry-after" in record["error"] and "3600" in record["error"]
    assert "cap of 5s" in record["error"]


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_stalled_body_ends_at_the_timeout_and_is_retried(tmp_path: Path) -> None:
    with FakeLLMServer(script=[Fault.STALL], hang_s=5) as server:
        started = time.monotonic()
        result = _sweep(server, tmp_path, options=RunOptions(timeout_s=0.5))
        assert time.monotonic() - started < 4
    assert result.stats.ok == 1 and result.stats.retries == 1


@pytest.mark.slow
def test_timeout_is_not_part_of_a_trials_identity(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i")
    out = tmp_path / "o"
    with FakeLLMServer() as server:
        first = cli(*run_args(server, folder, out, "--timeout", "30"))
        assert first.exit_code == 0, first.output
        args = run_args(server, folder, out, "--timeout", "45")
        args[args.index("--model") + 1] = "openai/fake-model?timeout=20"
        again = cli(*args)
        assert again.exit_code == 0, again.output
        assert "3 already recorded" in again.output
        report = paid_report(server, out)
    assert report.paid == 3 and report.duplicates == 0 and report.lost == 0


@pytest.mark.slow
def test_one_model_id_on_two_servers_does_not_share_answers(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i")
    cache = tmp_path / "shared-cache"
    with FakeLLMServer() as one, FakeLLMServer() as two:
        for server, out in ((one, tmp_path / "a"), (two, tmp_path / "b")):
            result = cli(*run_args(server, folder, out, "--cache-dir", str(cache)))
            assert result.exit_code == 0, result.output
        assert one.paid_calls().total() == 3 and two.paid_calls().total() == 3


def test_a_cache_entry_is_served_only_for_its_own_key(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        result = _sweep(server, tmp_path / "a", repeats=2)
        first, second = result.plan.trials
        cache = tmp_path / "a" / "cache"
        src = cache / first.key[:2] / f"{first.key}.json"
        dst = cache / second.key[:2] / f"{second.key}.json"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)  # the entry of trial 1 under trial 2's name
        shutil.rmtree(tmp_path / "a" / "records")
        before = server.paid_calls().total()
        again = _sweep(server, tmp_path / "a", repeats=2)
        assert again.stats.cached == 1 and server.paid_calls().total() == before + 1

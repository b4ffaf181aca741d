"""Self-hosted engines: the continuous-batching fake behaves as documented, a sweep through
the ``openai/<model>`` + ``base_url`` path keeps to its concurrency and waits out the
engine's queue without failures, and the documented sweep file reads as it says."""

from __future__ import annotations

import io
import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from fakes import EngineSpec, FakeEngine
from reliability_helpers import instances_folder

from facetlab import run
from facetlab.client.limits import Limits
from facetlab.runner import RetryPolicy, RunOptions
from facetlab.runner.sweepconfig import load_sweep_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "selfhosted-sweep.yaml"
MODEL = "openai/Qwen/Qwen3-8B"
FAST = EngineSpec(slots=2, step_s=0.002, output_tokens=(3, 5))


def _post(url: str, prompt: str) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}], "max_tokens": 4}
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            reply = json.loads(response.read())
            assert reply["usage"]["completion_tokens"] <= 4
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


def _burst(url: str, n: int) -> list[int]:
    """``n`` requests sent at once (from threads released together)."""
    statuses: list[int] = []
    start = threading.Barrier(n)

    def send(i: int) -> None:
        start.wait()
        statuses.append(_post(url, f"request {i}"))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_requests_beyond_the_slots_wait_in_the_engine_not_refused() -> None:
    spec = EngineSpec(slots=2, step_s=0.02, output_tokens=(2, 2))  # 40 ms a request
    with FakeEngine(spec) as engine:
        statuses = _burst(engine.openai_base_url, 6)
        stats = engine.stats()
    assert statuses == [200] * 6
    assert stats.completed == 6 and stats.rejected == 0 and stats.tokens == 12
    assert stats.max_running == 2  # never more sequences than slots
    assert stats.max_in_server > 2 and stats.max_waiting > 0  # the rest queued in the server
    assert all(3 <= FAST.tokens_for(f"request {i}", 4) <= 4 for i in range(8))


def test_a_bounded_line_refuses_with_the_configured_status() -> None:
    spec = EngineSpec(slots=1, step_s=0.08, output_tokens=(1, 1), max_queued=1)
    with FakeEngine(spec) as engine:
        statuses = _burst(engine.openai_base_url, 6)
        stats = engine.stats()
    assert 503 in statuses and statuses.count(200) == stats.completed
    assert stats.rejected == statuses.count(503) and stats.max_in_server <= 2


def test_a_bigger_batch_makes_each_step_slower_and_the_engine_faster() -> None:
    spec = EngineSpec(slots=32, step_s=0.01, step_growth=0.02, output_tokens=(40, 40))
    assert spec.step_time(1) == pytest.approx(0.01)
    assert spec.step_time(32) == pytest.approx(0.01 * 1.62)
    assert spec.capacity_rps() == pytest.approx(32 / (40 * 0.0162))
    assert spec.capacity_rps() > EngineSpec(slots=1, step_s=0.01).capacity_rps(40)


@pytest.mark.slow  # a real sweep: ~0.5-1 s
def test_a_sweep_at_concurrency_equal_to_slots_never_overfills_the_engine(tmp_path: Path) -> None:
    instances = instances_folder(tmp_path / "instances", n=6)
    with FakeEngine(FAST) as engine:
        result = run(
            str(instances), "p1", MODEL, out=tmp_path / "out", base_url=engine.openai_base_url,
            repeats=2, limits=Limits(concurrency=FAST.slots), progress="none",
            console=io.StringIO(),
        )  # fmt: skip
        stats = engine.stats()
    assert result.stats.ok == 12 and result.stats.failed == 0
    assert stats.completed == 12
    # the runner held at most `concurrency` requests, and used them all
    assert stats.max_in_server == FAST.slots
    assert result.stats.spend_usd == 0.0  # a loopback engine is free


@pytest.mark.slow  # a real sweep: ~0.5-1 s
def test_a_sweep_beyond_the_slots_queues_in_the_engine_without_failures(tmp_path: Path) -> None:
    instances = instances_folder(tmp_path / "instances", n=6)
    with FakeEngine(FAST) as engine:
        result = run(
            str(instances), "p1", MODEL, out=tmp_path / "out", base_url=engine.openai_base_url,
            repeats=2, limits=Limits(concurrency=4 * FAST.slots), progress="none",
            console=io.StringIO(),
        )  # fmt: skip
        stats = engine.stats()
    assert result.stats.ok == 12 and result.stats.failed == 0 and result.stats.retries == 0
    assert stats.rejected == 0 and stats.aborted == 0
    assert stats.max_running == FAST.slots and stats.max_waiting > 0
    assert all(r.usage.output_tokens is not None for r in result.records())


@pytest.mark.slow  # a real sweep with retries: ~1-2 s
def test_a_full_bounded_line_is_retried_until_every_trial_is_answered(tmp_path: Path) -> None:
    instances = instances_folder(tmp_path / "instances", n=4)
    spec = EngineSpec(slots=2, step_s=0.002, output_tokens=(3, 5), max_queued=0)
    with FakeEngine(spec) as engine:
        result = run(
            str(instances), "p1", MODEL, out=tmp_path / "out", base_url=engine.openai_base_url,
            repeats=2, limits=Limits(concurrency=6), progress="none", console=io.StringIO(),
            retry=RetryPolicy(max_attempts=20, base_delay_s=0.01, max_delay_s=0.05),
        )  # fmt: skip
        stats = engine.stats()
    assert stats.rejected > 0 and result.stats.retries >= stats.rejected
    assert result.stats.ok == 8 and result.stats.failed == 0


def test_the_documented_sweep_file_is_the_example_and_reads_as_documented() -> None:
    doc = (ROOT / "docs" / "backends.md").read_text(encoding="utf-8")
    section = doc.partition("## Self-hosted engines at scale")[2]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the section shows a sweep file"
    assert block.group(1) == EXAMPLE.read_text(encoding="utf-8")
    config = load_sweep_file(EXAMPLE)
    assert config.timeout == 1200
    # the runner raises the HTTP client's own timeout with it: no ?timeout= needed
    assert not any("timeout" in entry.model for entry in config.models)
    resolved = config.sweep()
    limits = {key.partition("@")[2]: value for key, value in resolved.limits.items()}
    # one limiter per engine, each sized to its own slots, none with a request rate
    assert limits == {
        "http://127.0.0.1:8000/v1": Limits(concurrency=160),
        "http://127.0.0.1:30000/v1": Limits(concurrency=80),
        "http://gpu-node-1:8000/v1": Limits(concurrency=160),
    }
    assert resolved.prices == {"qwen3-32b": {"input": 0.0, "output": 0.0}}
    assert resolved.models[0] == f"{MODEL}?base_url=http://127.0.0.1:8000/v1"


@pytest.mark.slow  # two calls that time out: ~1.5 s
def test_the_http_clients_timeout_binds_under_the_runners(tmp_path: Path) -> None:
    # what the documentation says: --timeout bounds a call, and so does the HTTP client's
    # own timeout (the run's + 5 s unless the model string gives ?timeout=): the shorter
    # one wins
    spec = EngineSpec(slots=1, step_s=0.1, output_tokens=(10, 10))  # 1 s a request
    instances = instances_folder(tmp_path / "instances", n=1)
    causes = []
    for model, timeout_s in ((MODEL, 0.3), (f"{MODEL}?timeout=0.3", 30.0)):
        with FakeEngine(spec) as engine:
            result = run(
                str(instances), "p1", model, out=tmp_path / f"out-{timeout_s}",
                base_url=engine.openai_base_url, progress="none", console=io.StringIO(),
                retry=RetryPolicy(max_attempts=1), options=RunOptions(timeout_s=timeout_s),
            )  # fmt: skip
            assert result.stats.failed == 1 and engine.stats().completed == 0
            causes.append(" ".join(result.stats.failure_causes))
    assert "timeout (--timeout 0.3s)" in causes[0]
    assert "--timeout" not in causes[1]  # the HTTP client gave up first, at 0.3 s of 30

"""Fault tests: the runner against the local fake LLM server through the real OpenAI backend.

The fake answers 429s (with retry-after), 500/529s, drops connections, truncates
bodies and sends garbage. Whatever happens, every trial ends with exactly one
record, ``ok`` or ``failed`` with its error, and no prompt is paid for more often
than it has ok records (counted at the fake).
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer, Fault
from test_runner_helpers import StubSuite, make_instances

from facetlab.backends import get_backend
from facetlab.runner import RetryPolicy, RunOptions, run

MODEL = "openai/fake-model"
RETRY = RetryPolicy(max_attempts=5, base_delay_s=0.01, max_delay_s=0.05)


def _sweep(server: FakeLLMServer, out: Path, **kw: Any) -> Any:
    backend = get_backend(MODEL, base_url=server.openai_base_url, api_key="test-key", timeout=5)
    kw.setdefault("repeats", 3)
    kw.setdefault("concurrency", 8)
    return run(
        make_instances(),
        "p1,p2,p3,c2",
        MODEL,
        out=out,
        backends={MODEL: backend},
        suite=StubSuite(),
        retry=RETRY,
        progress="none",
        console=io.StringIO(),
        **kw,
    )


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))]


def _check_invariants(server: FakeLLMServer, result: Any, out: Path) -> list[dict[str, Any]]:
    recs = _records(out)
    planned = {t.trial_id for t in result.plan.trials}
    assert sorted(r["trial_id"] for r in recs) == sorted(planned)  # one record per trial
    assert not list((out / "records").glob("*.tmp"))
    for r in recs:
        assert r["status"] in ("ok", "failed")
        if r["status"] == "failed":
            assert r["error"], r
        else:
            assert r["raw_response"].startswith("F1: 60")
    ok_per_prompt = Counter(r["prompt"] for r in recs if r["status"] == "ok" and not r["cached"])
    paid = server.paid_calls()
    assert paid == ok_per_prompt  # no duplicate paid calls
    return recs


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_scripted_faults_every_trial_ok_or_failed_no_double_pay(tmp_path: Path) -> None:
    script = [
        Fault.RATE_LIMIT, Fault.SERVER_ERROR, Fault.DROP, Fault.GARBAGE, Fault.TRUNCATED,
        Fault.OVERLOADED, Fault.RATE_LIMIT, Fault.DROP, Fault.SERVER_ERROR, Fault.GARBAGE,
    ]  # fmt: skip
    with FakeLLMServer(script=script, retry_after=0.05) as server:
        result = _sweep(server, tmp_path)
        recs = _check_invariants(server, result, tmp_path)
    outcomes = server.outcomes()
    assert outcomes["rate_limit"] == 2 and outcomes["drop"] == 2 and outcomes["garbage"] == 2
    assert result.stats.ok + result.stats.failed == len(recs) == 36
    # every fault here is transient: each costs one retry, no trial fails
    assert result.stats.ok == 36 and result.stats.retries == len(script) == result.stats.calls - 36
    assert sum(r["attempts"] for r in recs) == result.stats.calls
    assert server.paid_calls().total() == result.stats.ok


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_random_faults_soak(tmp_path: Path) -> None:
    rates = {
        Fault.RATE_LIMIT: 0.1, Fault.SERVER_ERROR: 0.1, Fault.DROP: 0.05,
        Fault.GARBAGE: 0.05, Fault.TRUNCATED: 0.05,
    }  # fmt: skip
    with FakeLLMServer(fault_rates=rates, seed=3, retry_after=0.02) as server:
        result = _sweep(server, tmp_path, concurrency=16)
        _check_invariants(server, result, tmp_path)
        # resuming after the soak pays nothing again
        before = server.paid_calls().total()
        again = _sweep(server, tmp_path, concurrency=16)
        assert again.stats.calls == 0 and server.paid_calls().total() == before
    assert result.stats.ok + result.stats.failed == 36


@pytest.mark.slow
def test_permanent_4xx_fails_fast_with_provider_message(tmp_path: Path) -> None:
    with FakeLLMServer(script=[Fault.BAD_REQUEST]) as server:
        result = _sweep(server, tmp_path, concurrency=1, repeats=1)
        recs = _check_invariants(server, result, tmp_path)
    (failed,) = [r for r in recs if r["status"] == "failed"]
    assert "400" in failed["error"] and "max_tokens: must be at least 1" in failed["error"]
    assert failed["attempts"] == 1
    assert "test-key" not in json.dumps(recs)


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_rate_limit_window_honours_retry_after(tmp_path: Path) -> None:
    # The fake accepts 10 requests/s and answers 429 + retry-after past that.
    with FakeLLMServer(rps_limit=10) as server:
        result = _sweep(server, tmp_path, concurrency=12, repeats=2)
        _check_invariants(server, result, tmp_path)
        rejected = server.outcomes()["rate_limited"]
    assert result.stats.ok == 24 and result.stats.failed == 0
    assert result.stats.rate_limited == rejected > 0
    # retry-after pauses every request to the provider, so the 429s do not snowball
    assert rejected < 24


class _Stalls:
    """The times this process was kept from running, seen by a thread that sleeps 5 ms steps.

    A request the limiter dates on time can reach the fake late when the machine stalls
    the process in between (a loaded machine: other processes, the GIL). Such delays
    are not the runner's to control and cannot be seen per request; this records when
    they happened (wall clock, as the fake's ``received_at``) and how long they were.
    """

    STEP_S = 0.005

    def __init__(self) -> None:
        self.seen: list[tuple[float, float]] = []  # (wall time, seconds overslept)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> _Stalls:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.is_set():
            wall, before = time.time(), time.monotonic()
            time.sleep(self.STEP_S)
            over = time.monotonic() - before - self.STEP_S
            if over > 0.001:
                self.seen.append((wall, over))

    def _overlapping(self, start: float, end: float) -> list[float]:
        # a stall lies somewhere in the step it was seen in: [wall, wall + step + over]
        return [o for w, o in self.seen if w <= end and w + self.STEP_S + o >= start]

    def total(self, start: float, end: float) -> float:
        """Seconds of stalls seen between ``start`` and ``end`` (wall clock)."""
        return sum(self._overlapping(start, end))

    def longest(self, start: float, end: float) -> float:
        """The longest stall seen between ``start`` and ``end`` (0.0: none)."""
        return max(self._overlapping(start, end), default=0.0)


@pytest.mark.slow
def test_told_the_providers_limit_the_runner_fills_each_window_and_never_overfills_it(
    tmp_path: Path,
) -> None:
    """--rpm 600 against a server allowing 10 requests in any second (a sliding window):
    every window after the first is full and on time; refusals, if any, come from the
    first windows (new connections, then their retries) and are never paid.

    The fake counts arrivals; the runner dates a request as it leaves and keeps each
    window WINDOW_SLACK_S longer for the jitter in between. Where the machine stalled
    this process for longer than that (measured by :class:`_Stalls`), arrivals can bunch
    up after the first windows: only then is a later refusal allowed, and the timing
    bounds grow by the stalls measured, never by a fixed allowance.
    """
    from facetlab.client.limits import WINDOW_SLACK_S
    from facetlab.runner import Limits

    with _Stalls() as stalls, FakeLLMServer(rps_limit=10, latency_s=0.05) as server:
        result = _sweep(
            server, tmp_path, repeats=4, concurrency=None, limits=Limits(requests_per_minute=600)
        )  # 12 cells x 4 = 48 trials: 5 windows
        _check_invariants(server, result, tmp_path)
        accepted = sorted(r.received_at for r in server.requests if r.outcome == "ok")
        refused = [r.received_at for r in server.requests if r.outcome == "rate_limited"]
    assert result.stats.ok == 48
    first = accepted[0]
    shown = [round(t - first, 3) for t in accepted], [round(t - first, 3) for t in refused]
    # refusals only where new connections and their retries land (the first windows),
    # or where a stall longer than the window's slack could have bunched arrivals up
    late = [t for t in refused if t - first >= 2.5]
    for t in late:
        assert stalls.longest(t - 1.0 - WINDOW_SLACK_S, t) > WINDOW_SLACK_S, shown
    assert len(refused) - len(late) <= 20, shown
    # every window after the first starts about a second after the one before, full
    # (evenly spaced requests would need 4.7 s for these 48)
    for k in range(1, 5):
        start = accepted[10 * k]
        assert start - first < k * 1.06 + stalls.total(first, start), shown
    # a late refusal's retry waits for the retry-after the fake sends (at most 1 s)
    last = accepted[-1]
    assert last - first < 4.0 + 4 * 0.1 + stalls.total(first, last) + (1.0 if late else 0), shown


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_hung_call_times_out_and_is_retried(tmp_path: Path) -> None:
    with FakeLLMServer(script=[Fault.HANG], hang_s=3) as server:
        result = _sweep(
            server, tmp_path, concurrency=2, repeats=1, options=RunOptions(timeout_s=0.3)
        )
        recs = _check_invariants(server, result, tmp_path)
    assert all(r["status"] == "ok" for r in recs) and result.stats.retries == 1

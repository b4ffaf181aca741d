"""Runner behaviour against stub probes and in-process backends (fast, no network)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_runner_helpers import (
    ScriptedBackend,
    StubSuite,
    bad_request,
    make_instances,
    rate_limited,
    server_error,
)

from facetlab.backends.base import SamplingParams
from facetlab.errors import (
    BudgetExceededError,
    ConfigError,
    PermanentBackendError,
    TransientBackendError,
)
from facetlab.records.schema import TrialRecord
from facetlab.runner import RetryPolicy, RunOptions, arun, plan_sweep, run
from facetlab.runner.plan import derive_seed, normalize_probes

MODEL = "openai/gpt-5.4"
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay_s=0.001, max_delay_s=0.01)


def _run(tmp: Path, backend: ScriptedBackend, **kw: Any) -> Any:
    kw.setdefault("probes", "p1,p2,p3,c2")
    kw.setdefault("retry", FAST_RETRY)
    kw.setdefault("progress", "none")
    kw.setdefault("console", io.StringIO())
    return run(
        make_instances(),
        model=MODEL,
        out=tmp,
        backends={MODEL: backend},
        suite=StubSuite(),
        **kw,
    )


def _records(out: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))}


# -- planning ------------------------------------------------------------------------------


def test_a_probe_whose_name_a_record_cannot_hold_cannot_be_made() -> None:
    from facetlab.probes.base import Probe
    from facetlab.probes.single_factor import P1

    with pytest.raises(ConfigError, match=r"not in facetlab.probes.base.ProbeName"):
        Probe("hint", "H", "x", False, P1._applies, P1._build, P1._parse)


def test_a_probe_registered_but_not_a_probe_name_is_refused_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from facetlab import probes

    monkeypatch.setitem(probes.PROBES, "hint", probes.PROBES["p1"])
    backend = ScriptedBackend()
    with pytest.raises(ConfigError, match=r"'hint' is registered in facetlab.probes.PROBES"):
        _run(tmp_path, backend, probes="p1,hint")
    assert backend.calls == []
    assert not (tmp_path / "records").exists()  # nothing planned, nothing paid, nothing written


def test_plan_fits_probes_and_skips() -> None:
    plan = plan_sweep(make_instances(), "p1,p2,p3,c2", [MODEL], suite=StubSuite(), repeats=2)
    counts = plan.by_probe()
    # 4 instances P1, 1 P2, 1 P3, 2 bases x 3 factors C2; 2 repeats each
    assert counts == {"p1": 8, "c2": 12, "p2": 2, "p3": 2}
    skipped = {(s.probe, s.instance_id) for s in plan.skipped}
    assert ("p3", "demo-cf-001") in skipped and ("p2", "demo-cf-001-adv") in skipped
    assert ("c2", "demo-cf-001") in skipped
    ids = [t.trial_id for t in plan.trials]
    assert len(ids) == len(set(ids))
    c2 = [t for t in plan.trials if t.probe == "c2"]
    assert {t.perturbed_factor for t in c2} == {"F1", "F2", "F3"}
    assert all(t.base_instance_id in ("demo-0000", "demo-0001") for t in c2)
    # the prompt of a C2 trial shows the rewritten factor
    f2 = next(t for t in c2 if t.perturbed_factor == "F2" and t.base_instance_id == "demo-0000")
    assert "Neutral two." in f2.prompt and f2.instance.factors[1].text == "Neutral two."
    # same inputs -> same ids; another seed changes only the per-trial seed
    again = plan_sweep(
        make_instances(), "p1,p2,p3,c2", [MODEL], suite=StubSuite(), repeats=2, seed=7
    )
    assert [t.trial_id for t in again.trials] == ids
    assert again.trials[0].seed == derive_seed(7, ids[0]) != plan.trials[0].seed


def test_plan_ids_depend_on_params_and_repeat() -> None:
    a = plan_sweep(make_instances(), "p2", [MODEL], suite=StubSuite(), repeats=2)
    b = plan_sweep(
        make_instances(),
        "p2",
        [MODEL],
        suite=StubSuite(),
        repeats=2,
        params=SamplingParams(temperature=0.0),
    )
    assert a.trials[0].key != a.trials[1].key
    assert {t.key for t in a.trials}.isdisjoint({t.key for t in b.trials})


def test_unknown_probe_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown probe 'p9'"):
        normalize_probes("p1,p9")


# -- running -------------------------------------------------------------------------------


def test_sweep_records_every_trial_with_context_cost_and_residual(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    result = _run(tmp_path, backend, seed=11, sampling=SamplingParams(temperature=0.0))
    recs = _records(tmp_path)
    assert result.stats.ok == len(result.plan.trials) == len(recs) == 12
    assert len(backend.calls) == 12
    sweep = json.loads((tmp_path / "sweep.json").read_text())
    assert sweep["models"] == [MODEL] and sweep["template"] == "facet-v3"
    assert sweep["params"]["temperature"] == 0.0 and sweep["runs"][-1]["ok"] == 12
    for rec in recs.values():
        TrialRecord.model_validate(rec)
        assert rec["status"] == "ok" and rec["usage"] == {
            "input_tokens": 1000,
            "output_tokens": 100,
            "cached_input_tokens": None,
            "reasoning_tokens": None,
        }
        # gpt-5.4 at $2.50 / $15 per 1M tokens
        assert rec["cost_usd"] == pytest.approx((1000 * 2.5 + 100 * 15) / 1e6)
    p2 = next(r for r in recs.values() if r["probe"] == "p2")
    assert p2["weight_estimates"] == {"F1": 10.0, "F2": 60.0, "F3": 30.0}
    assert p2["estimate_gap"] == {"F1": -5.0, "F2": 0.0, "F3": 5.0}  # was "residual"
    assert "residual" not in p2  # one meaning of residual: the C2 weight left
    assert p2["factor_of_interest"] == "F1" and p2["variant"] == "counterfactual"
    p1 = next(r for r in recs.values() if r["probe"] == "p1")
    assert p1["estimate_gap"] is None and p1["parsed"]["label"] == "F1"
    assert result.stats.spend_usd == pytest.approx(12 * 0.004)
    # context carries what replay/simulated backends need; seed derived per trial
    by_prompt = {c.prompt: c for c in backend.calls}
    c2 = next(t for t in result.plan.trials if t.probe == "c2")
    ctx = by_prompt[c2.prompt].context
    assert ctx["probe"] == "c2" and ctx["perturbed_factor"] == c2.perturbed_factor
    assert ctx["base_instance"].instance_id == ctx["base_instance_id"] == c2.base_instance_id
    assert ctx["instance"] is c2.instance and ctx["template"] == "facet-v3"
    p2_trial = next(t for t in result.plan.trials if t.probe == "p2")
    p2_ctx = by_prompt[p2_trial.prompt].context
    assert p2_ctx["base_instance"].instance_id == "demo-0000" == p2_ctx["base_instance_id"]
    assert p2_ctx["variant"] == "counterfactual" and p2_ctx["repeat"] == 0
    assert ctx["seed"] == derive_seed(11, c2.trial_id) == by_prompt[c2.prompt].params.seed


def test_resume_skips_done_and_retry_errors_retries_failed(tmp_path: Path) -> None:
    instances_prompts = [
        t.prompt
        for t in plan_sweep(make_instances(), "p1,p2,p3,c2", [MODEL], suite=StubSuite()).trials
    ]
    target = instances_prompts[3]
    backend = ScriptedBackend(failures={target: [bad_request()]})
    first = _run(tmp_path, backend)
    assert (first.stats.ok, first.stats.failed) == (11, 1)
    failed = [r for r in _records(tmp_path).values() if r["status"] == "failed"]
    assert (
        len(failed) == 1 and "HTTP 400" in failed[0]["error"] and "max_tokens" in failed[0]["error"]
    )
    assert failed[0]["attempts"] == 1  # 4xx fails fast
    # same command again: nothing is called
    second = _run(tmp_path, backend)
    assert len(backend.calls) == 12 and second.stats.already_done == 12 and second.stats.calls == 0
    # --retry-errors: only the failed trial is called again
    third = _run(tmp_path, backend, options=RunOptions(retry_errors=True))
    assert len(backend.calls) == 13 and third.stats.ok == 1
    assert all(r["status"] == "ok" for r in _records(tmp_path).values())


def test_cache_answers_a_new_sweep_without_paying(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    backend = ScriptedBackend()
    _run(tmp_path / "a", backend, options=RunOptions(cache_dir=cache))
    second = _run(tmp_path / "b", backend, options=RunOptions(cache_dir=cache))
    assert len(backend.calls) == 12
    assert second.stats.cached == 12 and second.stats.spend_usd == 0.0
    recs_a, recs_b = _records(tmp_path / "a"), _records(tmp_path / "b")
    assert recs_a.keys() == recs_b.keys()
    for tid, rec in recs_b.items():
        assert rec["cached"] is True and rec["cost_usd"] == 0.0
        assert rec["raw_response"] == recs_a[tid]["raw_response"]


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_transient_errors_are_retried_permanent_fail_fast(tmp_path: Path) -> None:
    prompts = [
        t.prompt
        for t in plan_sweep(make_instances(), "p1,p2,p3,c2", [MODEL], suite=StubSuite()).trials
    ]
    backend = ScriptedBackend(
        failures={
            prompts[0]: [rate_limited(), server_error()],
            prompts[1]: [server_error()] * 10,  # never recovers
            prompts[2]: [asyncio.TimeoutError()],
            prompts[3]: [ConnectionResetError("dropped")],
        }
    )
    result = _run(tmp_path, backend)
    recs = {r["prompt"]: r for r in _records(tmp_path).values()}
    assert recs[prompts[0]]["status"] == "ok" and recs[prompts[0]]["attempts"] == 3
    assert recs[prompts[1]]["status"] == "failed" and recs[prompts[1]]["attempts"] == 4
    assert "gave up after 4 attempts" in recs[prompts[1]]["error"]
    assert recs[prompts[2]]["status"] == "ok" and recs[prompts[3]]["status"] == "ok"
    assert result.stats.ok == 11 and result.stats.failed == 1
    assert max(backend.paid.values()) == 1


def test_malformed_and_empty_replies_are_recorded_not_dropped(tmp_path: Path) -> None:
    replies = iter(["garbage ### no weights here", "", "F1: 5, F2: 60, F3: 35\nno"] * 10)
    backend = ScriptedBackend(reply=lambda r: next(replies))
    result = _run(tmp_path, backend, probes="p2,p3,c2", concurrency=1)
    statuses = [r["parse_status"] for r in _records(tmp_path).values()]
    assert len(statuses) == len(result.plan.trials) == 8
    assert {"malformed", "empty", "ok"} <= set(statuses)
    assert result.stats.ok == 8  # the call succeeded; the parse status says what is wrong


def test_parser_crash_does_not_crash_the_sweep(tmp_path: Path) -> None:
    class Broken(StubSuite):
        def parse_reply(self, probe: str, text: str, n_factors: int, *, parser: str) -> Any:
            raise ValueError("boom")

    backend = ScriptedBackend()
    run(
        make_instances(),
        "p2",
        MODEL,
        out=tmp_path,
        backends={MODEL: backend},
        suite=Broken(),
        progress="none",
        console=io.StringIO(),
    )
    (rec,) = _records(tmp_path).values()
    assert rec["parse_status"] == "malformed" and "parser error" in rec["parsed"]["problems"][0]


def test_dry_run_prints_counts_tokens_cost_and_calls_nothing(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    console = io.StringIO()
    result = _run(tmp_path, backend, dry_run=True, console=console, repeats=3)
    text = console.getvalue()
    assert result.dry_run and result.stats.calls == 0 and not backend.calls
    assert "trials: 36" in text and "calls to make: 36" in text
    assert "estimated tokens:" in text and "estimated cost: $" in text
    assert "skipped P3 on 3 instance(s)" in text
    est = result.estimate
    assert est.input_tokens == sum(
        len(t.prompt) // 4 + (len(t.prompt) % 4 > 0) for t in result.plan.trials
    )
    # priced: input at $2.50/M plus 150 expected output tokens at $15/M per call
    assert est.cost_usd == pytest.approx(est.input_tokens * 2.5e-6 + 36 * 150 * 15e-6)
    assert not (tmp_path / "records").exists()
    console = io.StringIO()
    _run(tmp_path, backend, dry_run=True, console=console, options=RunOptions(budget_usd=0.0001))
    assert "budget $0.0001: estimate EXCEEDS" in console.getvalue()


def test_budget_refuses_to_start_past_the_estimate(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    with pytest.raises(BudgetExceededError, match="exceeds --budget-usd"):
        _run(tmp_path, backend, options=RunOptions(budget_usd=0.001))
    assert not backend.calls


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_budget_stops_cleanly_when_spend_reaches_it(tmp_path: Path) -> None:
    # Estimates are low (short prompts), actual usage is large: 0.4 USD per call.
    backend = ScriptedBackend(usage=(100_000, 10_000), latency_s=0.02)
    result = _run(tmp_path, backend, options=RunOptions(budget_usd=1.0), concurrency=2)
    st = result.stats
    assert st.stopped_by_budget
    # after the 3rd response spend >= 1.0; the one in flight then finishes too
    assert st.ok in (3, 4) and st.ok == len(backend.calls)
    assert st.not_started == 12 - st.ok
    assert len(_records(tmp_path)) == st.ok  # every started trial recorded
    assert st.spend_usd == pytest.approx(0.4 * st.ok)
    # re-running with a larger budget finishes the rest, paying nothing twice
    rest = _run(tmp_path, backend, options=RunOptions(budget_usd=100.0))
    assert rest.stats.ok == 12 - st.ok and max(backend.paid.values()) == 1


@pytest.mark.slow
def test_concurrency_limit_is_respected_and_records_identical(tmp_path: Path) -> None:
    outs = []
    for conc in (1, 16):
        backend = ScriptedBackend(latency_s=0.01)
        _run(tmp_path / str(conc), backend, concurrency=conc, seed=5, repeats=2)
        assert backend.max_in_flight <= conc
        outs.append(_records(tmp_path / str(conc)))
    assert backend.max_in_flight > 1
    volatile = {"started_at", "finished_at", "latency_s", "sweep", "received_sha256"}
    strip = [
        {k: {f: v for f, v in r.items() if f not in volatile} for k, r in o.items()} for o in outs
    ]
    assert strip[0] == strip[1]


@pytest.mark.parametrize(
    ("extra", "message"),
    [({}, "no backend"), ({"budget_usd": -1}, "budget-usd is -1; expected a finite number >= 0")],
)
def test_unknown_backend_and_bad_budget_are_config_errors(
    tmp_path: Path, extra: dict[str, float], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        options = RunOptions(**extra)  # type: ignore[arg-type]
        run(
            make_instances(),
            "p1",
            MODEL,
            out=tmp_path,
            backends={},
            suite=StubSuite(),
            progress="none",
            console=io.StringIO(),
            options=options,
        )


async def test_arun_inside_a_running_loop_and_run_from_a_loop(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    res = await arun(
        make_instances(),
        "p2",
        MODEL,
        out=tmp_path / "a",
        backends={MODEL: backend},
        suite=StubSuite(),
        progress="none",
        console=io.StringIO(),
    )
    assert res.stats is not None and res.stats.ok == 1
    # plain run() while this coroutine's loop is running (a Jupyter cell) works too
    res2 = run(
        make_instances(),
        "p3",
        MODEL,
        out=tmp_path / "b",
        backends={MODEL: ScriptedBackend()},
        suite=StubSuite(),
        progress="none",
        console=io.StringIO(),
    )
    assert res2.stats is not None and res2.stats.ok == 1


def test_sweep_json_has_no_secrets(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    _run(
        tmp_path,
        backend,
        base_url="https://user:sk-secretsecret123@host.example/v1?key=abc",
        command=["facetlab", "run", "--base-url", "https://u:p@h/v1", "sk-abcdefghijklmnop"],
    )
    text = (tmp_path / "sweep.json").read_text()
    assert "sk-secretsecret123" not in text and "sk-abcdefghijklmnop" not in text
    assert "key=abc" not in text and "u:p@" not in text
    assert "host.example/v1" in text


# -- limits and retry policy ---------------------------------------------------------------


@pytest.mark.slow
def test_a_sweep_prepares_only_a_few_trials_ahead_of_its_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cache look-ups and cross-process claims run a few trials ahead of the calls, not for
    every trial at once: a 5,000-trial sweep must not hold 5,000 lock files open, nor
    delay its first call behind the preparation of every other trial."""
    import contextlib
    from collections.abc import AsyncIterator

    from facetlab.client.cache import ResponseCache
    from facetlab.runner import Limits

    held, peak = [0], [0]
    original = ResponseCache.claim

    @contextlib.asynccontextmanager
    async def counting(self: ResponseCache, key: str, **kw: Any) -> AsyncIterator[None]:
        async with original(self, key, **kw):
            held[0] += 1
            peak[0] = max(peak[0], held[0])
            try:
                yield
            finally:
                held[0] -= 1

    monkeypatch.setattr(ResponseCache, "claim", counting)
    backend = ScriptedBackend(latency_s=0.002)
    res = _run(tmp_path, backend, repeats=15, limits=Limits(concurrency=4))
    assert res.stats.ok == res.stats.total > 150
    assert backend.max_in_flight <= 4
    assert 4 <= peak[0] <= 2 * 4 + 4  # the limiter's admission: 2 x concurrency + 4


def test_freeze_heap_is_the_command_lines_choice_not_the_librarys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    _run(tmp_path / "a", ScriptedBackend())
    assert frozen == []  # a notebook's run() leaves the collector alone
    _run(tmp_path / "b", ScriptedBackend(), options=RunOptions(freeze_heap=True))
    assert frozen == [1]
    # ... and `facetlab run`, a one-shot process, asks for it
    from typer.testing import CliRunner

    import facetlab.runner
    from facetlab.cli import app

    seen: list[RunOptions] = []

    def fake_run(*args: Any, options: RunOptions, **kw: Any) -> Any:
        seen.append(options)
        raise facetlab.errors.ConfigError("stop here")

    monkeypatch.setattr(facetlab.runner, "run", fake_run)
    result = CliRunner().invoke(app, ["run", "--dry-run"])
    assert result.exit_code == 2 and "stop here" in result.output
    assert seen and seen[0].freeze_heap is True


def test_retry_policy_backoff_and_retry_after() -> None:
    import random

    from facetlab.backends.base import retry_decision

    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(0)
    for attempt in range(1, 7):
        ceiling = min(8.0, 2 ** (attempt - 1))
        assert ceiling / 2 <= policy.delay(attempt, rng=rng) <= ceiling
    assert policy.delay(1, retry_after=30.0, rng=rng) == 30.0
    assert retry_decision(rate_limited()).retry and retry_decision(server_error()).retry
    assert not retry_decision(bad_request()).retry and not retry_decision(ValueError("x")).retry
    assert retry_decision(asyncio.TimeoutError()).retry
    assert retry_decision(ConnectionResetError()).retry


def test_record_error_text_never_carries_a_key() -> None:
    from facetlab.backends.base import retry_decision
    from facetlab.client.retry import describe

    text = describe(RuntimeError("custom backend failed with key sk-proj-abcdefghijkl123"))
    assert "sk-proj-abcdefghijkl123" not in text and "***" in text
    # one list of retryable statuses, shared with the backends
    assert retry_decision(TransientBackendError("x", status=499)).retry is True
    assert retry_decision(PermanentBackendError("x", status=499)).retry is True
    assert retry_decision(PermanentBackendError("x", status=404)).retry is False

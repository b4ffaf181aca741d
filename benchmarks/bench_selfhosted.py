"""Self-hosted engines at scale: facetlab's client settings against a fake continuous-batching engine.

A real vLLM, SGLang or Ray Serve cannot run on this machine (no GPU, no network), so
the engine is ``tests/fakes/engine.py``: an OpenAI-compatible server on 127.0.0.1, in
its own process, with a fixed number of sequence slots, decode steps that slow down
as the batch grows, replies of 24-56 tokens, and requests beyond the slots waiting in
the server (optionally a bounded queue that answers 503, or 429, as Ray Serve's
``max_queued_requests`` does). Each row is one real ``facetlab.run`` sweep — real
probes and templates on generated five-factor instances, ``openai/<model>`` plus
``base_url``, as a vLLM user runs it — in a fresh folder (no cache hits), with one
client setting changed: concurrency relative to the slots, an rpm limit, a short
timeout, a bounded queue (503, or 429 with ``retry-after``). Printed per row: throughput (trials/s over the whole
``run()`` call, start-up and drain included, and steady: over the middle 80% of the
engine's completions), the steady figure's share of the engine's capacity (slots busy
with full replies, at the pace the fake actually kept: its steps stretch when the
machine is loaded), the share of the engine's slots kept busy meanwhile (aborted work
included), p50/p95 call latency (the records' ``latency_s``: from request to
reply, the wait in the engine's queue included), provider calls, retries, failed trials,
and what the engine saw (most requests held at once, aborted and refused requests,
its pace: modelled over real step time, below 100% when the machine slowed the fake).
A bare ``httpx`` client at the same engine is the reference of what the engine gives.

    python benchmarks/bench_selfhosted.py [--trials 320] [--slots 32] [--quick]

``--quick`` runs a few rows with fewer trials (a smoke run). The load average is
printed before and after: the figures are only comparable on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.engine import EngineSpec, EngineStats  # noqa: E402
from measure import load_average  # noqa: E402

from facetlab import run  # noqa: E402
from facetlab.client import Limits  # noqa: E402
from facetlab.runner import RetryPolicy, RunOptions  # noqa: E402

MODEL = "openai/Qwen/Qwen3-8B"  # what a vLLM user would name; the fake answers any model
PROBES = "p1,anchor"  # both run on base instances: two trials per instance and repeat


@dataclass(frozen=True)
class Setting:
    """One row: a client setting against one engine."""

    label: str
    concurrency: int | None
    rpm: float | None = None
    timeout_s: float = 600.0
    max_queued: int | None = None
    """The engine's bounded queue (None: unbounded, vLLM's and SGLang's default)."""
    queue_full_status: int = 503
    retry_after_s: float | None = None
    """``retry-after`` sent with a refusal (Ray Serve's ``BackpressureConfig``)."""

    def engine(self, slots: int) -> EngineSpec:
        return EngineSpec(
            slots=slots,
            max_queued=self.max_queued,
            queue_full_status=self.queue_full_status,
            retry_after_s=self.retry_after_s,
        )


@dataclass(frozen=True)
class Row:
    setting: Setting
    trials: int
    ok: int
    failed: int
    calls: int
    retries: int
    wall_s: float
    steady_rps: float
    occupancy: float
    """Mean share of the engine's slots busy while steady: how well the client fed it."""
    pace: float
    """The engine's modelled step time over its real one while steady (< 1: the fake itself
    was slowed, e.g. by a loaded machine)."""
    p50_s: float
    p95_s: float
    engine: EngineStats
    capacity_rps: float
    causes: str


class Engine:
    """The fake engine in a child process (so it does not share the client's GIL)."""

    def __init__(self, spec: EngineSpec) -> None:
        args = [
            sys.executable, "-c", "from fakes.engine import main; main()", "--slots", str(spec.slots),
            "--step-s", str(spec.step_s), "--step-growth", str(spec.step_growth),
            "--tokens", str(spec.output_tokens[0]), str(spec.output_tokens[1]),
            "--queue-full-status", str(spec.queue_full_status),
        ]  # fmt: skip
        if spec.max_queued is not None:
            args += ["--max-queued", str(spec.max_queued)]
        if spec.retry_after_s is not None:
            args += ["--retry-after", str(spec.retry_after_s)]
        env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
        self.spec = spec
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http://127.0.0.1:"):
            self.close()
            raise SystemExit(f"the fake engine did not start (said {self.base_url!r})")
        self.root = self.base_url.removesuffix("/v1")

    def reset(self) -> None:
        httpx.post(f"{self.root}/engine/reset", timeout=10).raise_for_status()

    def stats(self) -> EngineStats:
        response = httpx.get(f"{self.root}/engine/stats", timeout=10)
        response.raise_for_status()
        return EngineStats.from_json(response.json())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _write_instances(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    for i in range(count):
        factors = [
            {
                "factor_id": f"f{k}",
                "text": f"Factor {k} of case {i}: a consideration worth weighing.",
                "directionality": "toward_yes" if k % 2 else "toward_no",
            }
            for k in range(1, 6)
        ]
        instance = {
            "instance_id": f"engine-{i:04d}",
            "doctrine": "bench",
            "case_background": f"Case {i}: a request to decide on its merits.",
            "factors": factors,
            "question": "Should the request be granted?",
            "ground_truth": {"answer": "yes", "rationale": "bench"},
        }
        (folder / f"engine-{i:04d}.json").write_text(json.dumps(instance), encoding="utf-8")


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _steady(stats: EngineStats, spec: EngineSpec) -> tuple[float, float, float]:
    """(completions per second, slot occupancy, engine pace) over the middle 80% of the
    completions: no ramp-up, no drain."""
    times = sorted(stats.finish_times)
    if len(times) < 10:
        return math.nan, math.nan, math.nan
    lo, hi = int(0.1 * len(times)), int(0.9 * len(times))
    start, end = times[lo], times[hi]
    if end <= start:
        return math.nan, math.nan, math.nan
    steps = [
        b for t, b in zip(stats.step_ends, stats.step_batches, strict=True) if start < t <= end
    ]
    modelled = sum(spec.step_time(b) for b in steps)
    return (hi - lo) / (end - start), stats.occupancy(start, end), modelled / (end - start)


def _sweep(engine: Engine, setting: Setting, instances: Path, repeats: int, out: Path) -> Row:
    engine.reset()
    start = time.perf_counter()
    result = run(
        str(instances), PROBES, MODEL, out=out, base_url=engine.base_url, repeats=repeats,
        limits=Limits(concurrency=setting.concurrency, requests_per_minute=setting.rpm),
        retry=RetryPolicy(),
        options=RunOptions(timeout_s=setting.timeout_s),
        progress="none", console=io.StringIO(),
    )  # fmt: skip
    wall = time.perf_counter() - start
    stats = engine.stats()
    steady_rps, occupancy, pace = _steady(stats, engine.spec)
    records = result.records()
    latencies = [r.latency_s for r in records if r.status == "ok" and r.latency_s is not None]
    causes = ", ".join(f"{k} {n}" for k, (n, _) in sorted(result.stats.failure_causes.items()))
    assert result.stats.spend_usd == 0.0, "a loopback engine is free"
    return Row(
        setting=setting,
        trials=len(result.plan.trials),
        ok=result.stats.ok,
        failed=result.stats.failed,
        calls=result.stats.calls,
        retries=result.stats.retries,
        wall_s=wall,
        steady_rps=steady_rps,
        occupancy=occupancy,
        pace=pace,
        p50_s=_percentile(latencies, 0.5),
        p95_s=_percentile(latencies, 0.95),
        engine=stats,
        capacity_rps=engine.spec.capacity_rps(stats.mean_tokens),
        causes=causes,
    )


async def _bare(base_url: str, n: int, concurrency: int) -> tuple[float, list[float]]:
    """A minimal client: n distinct prompts, ``concurrency`` at a time, no retries."""
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:

        async def one(i: int) -> None:
            async with gate:
                body = {"model": MODEL, "messages": [{"role": "user", "content": f"bare {i}"}]}
                sent = time.perf_counter()
                response = await client.post(f"{base_url}/chat/completions", json=body)
                response.raise_for_status()
                latencies.append(time.perf_counter() - sent)

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return time.perf_counter() - start, latencies


def _share(row: Row) -> float:
    """Steady throughput over the capacity the fake had at the pace it actually ran."""
    return row.steady_rps / (row.capacity_rps * row.pace)


HEADER = (
    "| setting | concurrency | rpm | timeout s | engine queue bound | answered | trials/s "
    "whole run | trials/s steady | of capacity | slots busy | p50 / p95 s | calls / retries "
    "/ failed | most held by engine | aborted / refused | engine pace |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def _print_row(row: Row, slots: int) -> None:
    s, e = row.setting, row.engine
    conc = "auto" if s.concurrency is None else f"{s.concurrency} ({s.concurrency / slots:g}x)"
    print(
        f"| {s.label} | {conc} | {'-' if s.rpm is None else f'{s.rpm:g}'} | {s.timeout_s:g} | "
        f"{'-' if s.max_queued is None else s.max_queued} | {row.ok}/{row.trials} | "
        f"{row.trials / row.wall_s:.1f} | {row.steady_rps:.1f} | {_share(row):.0%} | "
        f"{row.occupancy:.0%} | {row.p50_s:.2f} / {row.p95_s:.2f} | "
        f"{row.calls} / {row.retries} / {row.failed} | {e.max_in_server} | "
        f"{e.aborted} / {e.rejected} | {row.pace:.0%} |" + (f" {row.causes}" if row.causes else ""),
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=320, help="Trials per row (rounded to 2 x 40).")
    ap.add_argument("--slots", type=int, default=32)
    ap.add_argument("--quick", action="store_true", help="Four rows, 80 trials each.")
    args = ap.parse_args(argv)
    slots = args.slots
    instances_n = 40
    trials = 80 if args.quick else args.trials
    repeats = max(1, round(trials / (2 * instances_n)))  # two probes per instance
    settings = [
        Setting("below the slots", slots // 4),
        Setting("= slots", slots),
        Setting("1.25x slots", slots + slots // 4),
        Setting("2x slots", 2 * slots),
        Setting("4x slots", 4 * slots),
        Setting("8x slots", 8 * slots),
        Setting("automatic", None),
        Setting("rpm below capacity", 2 * slots, rpm=1800),
        Setting("short timeout", 8 * slots, timeout_s=4.0),
        Setting("bounded queue, too many: 503", 4 * slots, max_queued=slots),
        Setting(
            "bounded queue, too many: 429 + retry-after 1 s",
            4 * slots,
            max_queued=slots,
            queue_full_status=429,
            retry_after_s=1.0,
        ),
        Setting("bounded queue, fits", 2 * slots, max_queued=slots),
    ]
    if args.quick:
        settings = [settings[1], settings[3], settings[8], settings[10]]
    base = EngineSpec(slots=slots)
    print(
        f"fake engine: {slots} slots, step {base.step_s * 1000:g} ms x (1 + "
        f"{base.step_growth:g} x (batch - 1)), replies {base.output_tokens[0]}-"
        f"{base.output_tokens[1]} tokens; capacity ~{base.capacity_rps():.1f} requests/s "
        f"with every slot busy"
    )
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)", flush=True)
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write_instances(folder / "instances", instances_n)
        engines: dict[EngineSpec, Engine] = {}
        try:
            engines[base] = Engine(base)
            engine = engines[base]
            bare_n = repeats * 2 * instances_n
            bare_s, bare_lat = asyncio.run(_bare(engine.base_url, bare_n, 2 * slots))
            bare = engine.stats()
            bare_cap = base.capacity_rps(bare.mean_tokens)
            bare_rps, bare_occ, bare_pace = _steady(bare, base)
            print(
                f"bare httpx client, concurrency {2 * slots}: {bare_n} requests, "
                f"{bare_n / bare_s:.1f}/s whole run, {bare_rps:.1f}/s steady "
                f"({bare_rps / (bare_cap * bare_pace):.0%} of capacity), slots busy "
                f"{bare_occ:.0%}, engine pace {bare_pace:.0%}; p50/p95 "
                f"{_percentile(bare_lat, 0.5):.2f}/{_percentile(bare_lat, 0.95):.2f} s"
            )
            print()
            print(HEADER)
            for i, setting in enumerate(settings):
                spec = setting.engine(slots)
                if spec not in engines:
                    engines[spec] = Engine(spec)
                row = _sweep(
                    engines[spec], setting, folder / "instances", repeats, folder / f"sweep-{i}"
                )
                rows.append(row)
                _print_row(row, slots)
        finally:
            for engine in engines.values():
                engine.close()
    print()
    print(
        f"load average after: {load_average()}; whole benchmark {time.perf_counter() - started:.0f} s"
    )
    near = [r.setting.label for r in rows if _share(r) >= 0.95 and r.failed == 0]
    print(
        "within 5% of the engine's capacity while steady, no failed trial: "
        + (", ".join(near) if near else "none")
    )
    lost = [r.setting.label for r in rows if r.ok < r.trials]
    print("settings with unanswered trials: " + (", ".join(lost) if lost else "none"))
    by_label = {r.setting.label: r for r in rows}
    fits = by_label.get("= slots")
    if fits is not None:
        # the runner never holds more calls than its concurrency (the engine counts them)
        assert fits.engine.max_in_server <= slots, fits.engine
    median_wall = statistics.median(r.wall_s for r in rows) if rows else math.nan
    print(f"median sweep wall time: {median_wall:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

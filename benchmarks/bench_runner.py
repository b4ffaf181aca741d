"""Runner throughput against a rate-limited local OpenAI-compatible fake.

400 trials, 300 ms latency per call, the fake accepts 20 requests/s (429 +
retry-after past that). facetlab's runner should keep the provider at >= 90% of
its limit with zero duplicate paid calls. The baseline is the original harness's
design: one call at a time (by default on the first 40 trials; its rate does not
depend on how many it runs, ``--baseline-trials 400`` runs them all).

With the ``inspect`` extra installed, the same prompts also go through ``inspect eval``
(its OpenAI provider, ``max_connections`` = the runner's concurrency) against the same
fake, and both are printed side by side (``--no-inspect`` skips it).

    python benchmarks/bench_runner.py [--trials 400] [--latency 0.3] [--rps 20] [--no-inspect]
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes import FakeLLMServer  # noqa: E402

from facetlab.backends import get_backend  # noqa: E402
from facetlab.probes.base import ParseResult  # noqa: E402
from facetlab.probes.parsing import parse_weights_strict  # noqa: E402
from facetlab.runner import Cell, run  # noqa: E402


@dataclass(frozen=True)
class BenchInstance:
    instance_id: str
    factors: tuple[str, ...]
    base_instance_id: str | None = None


class BenchSuite:
    """One weighted-rank style prompt per instance."""

    def applies_to(self, probe: str, instance: Any) -> bool:
        return probe == "p2"

    def cells(self, probe: str, instance: Any, *, template: str) -> Sequence[Cell]:
        lines = "\n".join(f"F{i + 1}: {t}" for i, t in enumerate(instance.factors))
        return [Cell(f"CASE {instance.instance_id}\n{lines}\nWeights summing to 100?", instance)]

    def parse_reply(self, probe: str, text: str, instance: Any, *, parser: str) -> ParseResult:
        return parse_weights_strict(text, len(instance.factors))


MODEL = "openai/bench-model"


def _instances(n: int) -> list[BenchInstance]:
    return [
        BenchInstance(f"bench-{i:04d}", (f"factor one of {i}", f"factor two of {i}"))
        for i in range(n)
    ]


def _sweep(
    server: FakeLLMServer, n: int, out: Path, *, concurrency: int, rpm: float | None
) -> float:
    model = MODEL
    backend = get_backend(model, base_url=server.openai_base_url, api_key="bench", timeout=30)
    instances = _instances(n)
    start = time.perf_counter()
    result = run(
        instances, "p2", model, out=out, backends={model: backend}, suite=BenchSuite(),
        concurrency=concurrency, requests_per_minute=rpm, progress="none", console=io.StringIO(),
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    assert result.stats is not None and result.stats.ok == n, result.stats
    return elapsed


def _inspect_sweep(server: FakeLLMServer, n: int, log_dir: Path, *, concurrency: int) -> float:
    """The same prompts through ``inspect eval`` (OpenAI provider, Chat Completions)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample

    suite = BenchSuite()
    samples = [
        Sample(input=suite.cells("p2", inst, template="")[0].prompt, id=inst.instance_id)
        for inst in _instances(n)
    ]
    os.environ.setdefault("OPENAI_API_KEY", "bench")  # the fake accepts any key
    start = time.perf_counter()
    (log,) = inspect_eval(
        Task(dataset=samples, name="bench"),
        model=MODEL,
        model_base_url=server.openai_base_url,
        model_args={"responses_api": False},
        max_connections=concurrency,
        log_dir=str(log_dir),
        display="none",
    )
    elapsed = time.perf_counter() - start
    done = sum(1 for s in log.samples or [] if s.error is None)
    assert log.status == "success" and done == n, (log.status, done, log.error)
    return elapsed


def _has_inspect() -> bool:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--baseline-trials", type=int, default=40)
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--rps", type=float, default=20.0)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument(
        "--no-pacing", action="store_true", help="Do not tell the runner the limit (429s only)."
    )
    ap.add_argument("--no-inspect", action="store_true", help="Skip the inspect eval run.")
    args = ap.parse_args(argv)
    with_inspect = not args.no_inspect and _has_inspect()
    # Pace at 98% of the limit: the fake's one-second window has no slack for clock jitter.
    rpm = None if args.no_pacing else args.rps * 60 * 0.98
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeLLMServer(latency_s=args.latency, rps_limit=args.rps) as server,
    ):
        t_run = _sweep(
            server, args.trials, Path(tmp) / "runner", concurrency=args.concurrency, rpm=rpm
        )
        paid = server.paid_calls()
        outcomes = server.outcomes()
        server.reset_log()
        t_base = _sweep(
            server, args.baseline_trials, Path(tmp) / "baseline", concurrency=1, rpm=None
        )
        base_paid = server.paid_calls()
        t_inspect = inspect_paid = inspect_outcomes = None
        if with_inspect:
            server.reset_log()
            t_inspect = _inspect_sweep(
                server, args.trials, Path(tmp) / "inspect", concurrency=args.concurrency
            )
            inspect_paid, inspect_outcomes = server.paid_calls(), server.outcomes()
    throughput = args.trials / t_run
    base_throughput = args.baseline_trials / t_base
    utilisation = throughput / args.rps
    duplicates = sum(c - 1 for c in paid.values() if c > 1) + sum(
        c - 1 for c in base_paid.values() if c > 1
    )
    print(f"fake provider: {args.latency * 1000:.0f} ms latency, {args.rps:g} requests/s limit")
    print(f"runner   : {args.trials} trials in {t_run:.2f} s = {throughput:.2f} trials/s "
          f"(concurrency {args.concurrency}, "
          f"{'unpaced' if rpm is None else f'paced at {rpm / 60:.2f}/s'}; "
          f"429s seen {outcomes.get('rate_limited', 0)})")  # fmt: skip
    print(f"baseline : {args.baseline_trials} trials one at a time in {t_base:.2f} s = "
          f"{base_throughput:.2f} trials/s")  # fmt: skip
    print(f"utilisation of the provider limit: {utilisation:.1%} (target >= 90%)")
    print(f"speed-up over one-at-a-time: {throughput / base_throughput:.1f}x")
    print(
        f"paid calls: {paid.total()} for {args.trials} trials; duplicate paid calls: {duplicates}"
    )
    if t_inspect is not None and inspect_paid is not None and inspect_outcomes is not None:
        dup = sum(c - 1 for c in inspect_paid.values() if c > 1)
        print(f"inspect  : {args.trials} trials in {t_inspect:.2f} s = "
              f"{args.trials / t_inspect:.2f} trials/s (max_connections {args.concurrency}, "
              f"unpaced; 429s seen {inspect_outcomes.get('rate_limited', 0)}; "
              f"utilisation {args.trials / t_inspect / args.rps:.1%}; "
              f"duplicate paid calls {dup})")  # fmt: skip
        print(f"runner vs inspect: {t_inspect / t_run:.2f}x the throughput on this workload")
    elif not args.no_inspect:
        print("inspect  : skipped (inspect_ai not installed: pip install 'facetlab[inspect]')")
    ok = utilisation >= 0.9 and duplicates == 0 and paid.total() == args.trials
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""The model client against servers as users meet them (issue 27): a rate-limited
provider whose latency spikes, and a local server with one slot.

1. ``spiky``: an OpenAI-compatible fake in its own process (aiohttp): 200 requests/s
   (a sliding second of accepted requests; past it 429 with ``retry-after`` = the time
   until a place frees), 50 ms latency; the ``spiky`` variant adds 1.5 s for 2 s of
   every 10 s. Against each, in turn: a bare aiohttp loop paced at the limit (429s sent
   again after their ``retry-after``), and ``facetlab.run`` on stub prompts without
   ``--rpm`` (concurrency automatic). Prints calls/s and CPU per call of both, and the
   ratios: acceptance >= 0.80 of the bare loop's calls/s, CPU <= 2x the bare loop's.
   Between them, the model client alone (``ModelClient.call``: limits, retries, the
   backend, no runner) shows which share of the CPU is the client's.
2. ``polite``: the same fake at 20 requests/s with 300 ms latency (issue 41): ~406 P2
   trials through ``facetlab.run`` without ``--rpm``, three runs. Prints calls/s as a share
   of the limit and the refused requests (429) as a share of the answered ones:
   acceptance >= 0.90 of the limit with <= 5% refused.
3. ``one-slot``: ``tests/fakes/engine.py`` with one slot, 0.5 s a request, with and
   without ``/props`` (``total_slots: 1``): 34 P1 trials, ``--timeout 3``, no ``-c``.
   Prints ok / failed, the requests the server got, the most it held at once, and the
   wall time against sequential service: acceptance 34/34 ok, <= 36 calls, wall <=
   1.3 x 17 s + 5 s.

Every figure is printed with the load average (2 shared cores: read differences of
a few percent as noise).

    python benchmarks/bench_client.py [--seconds 20] [--only spiky|polite|one-slot] [--records shards]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from bench_runner import BenchSuite, _instances  # noqa: E402
from measure import load_average  # noqa: E402

MODEL = "openai/bench-model"
RATE = 200
LATENCY_S = 0.05
SPIKE_S, SPIKE_EVERY_S, SPIKE_FOR_S = 1.5, 10.0, 2.0

COMPLETION = {
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench-model",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "F1: 60, F2: 40\nno"}}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
}  # fmt: skip


# --------------------------------------------------------------------------- the fake


def serve(rate: int, latency: float, spiky: bool) -> None:
    """The rate-limited fake (run in a child process): prints its port, serves until stdin closes."""
    from aiohttp import web

    accepted: deque[float] = deque()
    counts: dict[str, float] = {"ok": 0, "refused": 0, "first": 0.0, "last": 0.0}
    started = time.monotonic()

    async def chat(request: web.Request) -> web.Response:
        await request.read()
        now = time.monotonic()
        while accepted and now - accepted[0] >= 1.0:
            accepted.popleft()
        if len(accepted) >= rate:
            counts["refused"] += 1
            wait = max(0.001, 1.0 - (now - accepted[0]))
            headers = {"retry-after": f"{wait:.3f}", "retry-after-ms": str(round(wait * 1000))}
            error = {"error": {"message": "Rate limit exceeded", "type": "rate_limit_error"}}
            return web.json_response(error, status=429, headers=headers)
        accepted.append(now)
        counts["ok"] += 1
        counts["first"], counts["last"] = counts["first"] or now, now
        spike = spiky and (now - started) % SPIKE_EVERY_S >= SPIKE_EVERY_S - SPIKE_FOR_S
        await asyncio.sleep(latency + (SPIKE_S if spike else 0.0))
        return web.json_response(COMPLETION)

    async def stats(request: web.Request) -> web.Response:
        return web.json_response(counts)

    async def reset(request: web.Request) -> web.Response:
        counts.update(ok=0, refused=0, first=0.0, last=0.0)
        return web.json_response(counts)

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_get("/stats", stats)
        app.router.add_post("/reset", reset)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(site._server.sockets[0].getsockname()[1], flush=True)  # type: ignore[union-attr]
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await runner.cleanup()

    asyncio.run(main())


@contextmanager
def child(args: list[str]) -> Iterator[str]:
    """A server in its own process (not sharing this interpreter's lock); its first line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def system_s() -> float:
    """The kernel's share of :func:`cpu_s` (file and socket operations)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


# --------------------------------------------------------------------------- spiky


async def bare_loop(url: str, n: int, rate: int) -> None:
    """The baseline: every call paced at the limit, a 429 sent again after its retry-after."""
    import aiohttp

    body = {"model": "bench-model", "messages": [{"role": "user", "content": "Weigh F1, F2."}],
            "max_tokens": 64}  # fmt: skip

    async def one(session: aiohttp.ClientSession) -> None:
        while True:
            async with session.post(url, json=body) as reply:
                if reply.status != 429:
                    await reply.json()
                    return
                await asyncio.sleep(float(reply.headers.get("retry-after", "0.05")))

    async with aiohttp.ClientSession() as session:
        start, calls = time.perf_counter(), []
        for i in range(n):
            if (wait := start + i / rate - time.perf_counter()) > 0:
                await asyncio.sleep(wait)
            calls.append(asyncio.ensure_future(one(session)))
        await asyncio.gather(*calls)


async def client_loop(base_url: str, n: int) -> None:
    """The model client alone (limits, retries, the backend), without the runner."""
    from facetlab.backends import ModelRequest, SamplingParams, get_backend
    from facetlab.client import ModelClient

    client = ModelClient(get_backend(MODEL, base_url=base_url, http_transport="aiohttp"))
    request = ModelRequest("Weigh F1, F2.", SamplingParams(max_tokens=64))
    places = asyncio.Semaphore(512)  # the runner's admission holds no more than this

    async def one() -> None:
        async with places:
            await client.call(request)

    await asyncio.gather(*(one() for _ in range(n)))
    await client.aclose()


def facetlab_sweep(base_url: str, n: int, out: Path, records: str = "auto") -> None:
    from facetlab.runner import RunOptions, run

    result = run(_instances(n), "p2", MODEL, out=out, base_url=base_url, suite=BenchSuite(),
                 progress="none", console=io.StringIO(),
                 options=RunOptions(records=records))  # type: ignore[arg-type]  # fmt: skip
    assert result.stats is not None and result.stats.ok == n, result.stats


def server_counts(base: str, *, reset: bool = False) -> dict[str, Any]:
    import urllib.request

    request = urllib.request.Request(base + ("/reset" if reset else "/stats"),
                                     method="POST" if reset else "GET")  # fmt: skip
    with urllib.request.urlopen(request) as reply:
        counts: dict[str, Any] = json.loads(reply.read())
        return counts


def measure(what: str, base: str, n: int, call: Any) -> dict[str, float]:
    server_counts(base, reset=True)
    load, cpu, kernel, start = load_average(), cpu_s(), system_s(), time.perf_counter()
    call()
    wall, used, kernel = time.perf_counter() - start, cpu_s() - cpu, system_s() - kernel
    counts = server_counts(base)
    figures = {"calls_per_s": n / wall, "cpu_ms": used / n * 1000, "refused": counts["refused"]}
    print(f"  {what:<9} {n} calls in {wall:6.2f} s = {n / wall:6.1f}/s "
          f"({n / wall / RATE:.2f} of the limit), CPU {figures['cpu_ms']:.2f} ms a call "
          f"({kernel / n * 1000:.2f} of it the kernel's), {counts['refused']} refused (429); "
          f"load {load}", flush=True)  # fmt: skip
    return figures


def spiky(seconds: float, records: str = "auto") -> bool:
    from facetlab.backends import get_backend

    get_backend(MODEL, base_url="http://127.0.0.1:9/v1", http_transport="aiohttp")  # imports
    n, passed = int(RATE * seconds), True
    for variant in ("steady", "spiky"):
        args = [sys.executable, __file__, "--serve", *(["--spiky"] if variant == "spiky" else [])]
        with child(args) as port, tempfile.TemporaryDirectory() as tmp:
            base = f"http://127.0.0.1:{port}"
            print(f"{variant}: {RATE} requests/s, {LATENCY_S * 1000:.0f} ms" + (
                f", +{SPIKE_S:g} s for {SPIKE_FOR_S:g} s of every {SPIKE_EVERY_S:g} s"
                if variant == "spiky" else ""))  # fmt: skip
            url, api, out = base + "/v1/chat/completions", base + "/v1", Path(tmp) / "sweep"
            bare = measure("bare", base, n, lambda u=url: asyncio.run(bare_loop(u, n, RATE)))
            measure("client", base, n, lambda a=api: asyncio.run(client_loop(a, n)))
            ours = measure(
                "facetlab", base, n, lambda a=api, o=out: facetlab_sweep(a, n, o, records)
            )
        share = ours["calls_per_s"] / bare["calls_per_s"]
        cpu = ours["cpu_ms"] / bare["cpu_ms"]
        ok = share >= 0.80 and cpu <= 2.0
        passed &= ok
        print(f"  facetlab / bare: calls/s {share:.2f} (>= 0.80), CPU a call {cpu:.2f}x (<= 2): "
              f"{'PASS' if ok else 'FAIL'}", flush=True)  # fmt: skip
    return passed


# --------------------------------------------------------------------------- polite


POLITE_RATE, POLITE_LATENCY_S, POLITE_CALLS = 20, 0.3, 406


def polite(runs: int = 3) -> bool:
    """A steady limit well below what the sweep could send: held, with few refusals."""
    from facetlab.backends import get_backend

    get_backend(MODEL, base_url="http://127.0.0.1:9/v1", http_transport="aiohttp")  # imports
    rate, n, passed = POLITE_RATE, POLITE_CALLS, True
    args = [sys.executable, __file__, "--serve", "--rate", str(rate),
            "--latency", str(POLITE_LATENCY_S)]  # fmt: skip
    print(f"polite: {rate} requests/s, {POLITE_LATENCY_S * 1000:.0f} ms, {n} calls, no --rpm")
    with child(args) as port:
        base = f"http://127.0.0.1:{port}"
        for run_number in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                server_counts(base, reset=True)
                load, start = load_average(), time.perf_counter()
                facetlab_sweep(base + "/v1", n, Path(tmp) / "sweep")
                wall = time.perf_counter() - start
                counts = server_counts(base)
            share, refused = n / wall / rate, counts["refused"] / max(1, counts["ok"])
            served = (n - 1) / (counts["last"] - counts["first"]) / rate
            ok = share >= 0.90 and refused <= 0.05
            passed &= ok
            print(f"  run {run_number + 1}: {n / wall:.2f} calls/s = {share:.3f} of the limit "
                  f"(first to last answer at the server: {served:.3f}), "
                  f"{counts['refused']} refused / {counts['ok']} answered = {refused:.1%} "
                  f"(>= 0.90, <= 5%): {'PASS' if ok else 'FAIL'}; load {load}", flush=True)  # fmt: skip
            time.sleep(1.5)  # the fake's window empties between runs
    return passed


# --------------------------------------------------------------------------- one slot


def one_slot() -> bool:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_client_local_server import write_instances

    from facetlab.runner import RunOptions, run

    trials, service_s, passed = 34, 0.5, True
    sequential = trials * service_s
    for props in (True, False):
        engine = [sys.executable, "-c", "from fakes.engine import main; main()", "--slots", "1",
                  "--step-s", "0.02", "--tokens", "25", "25", *(["--props"] if props else [])]  # fmt: skip
        with child(engine) as base_url, tempfile.TemporaryDirectory() as tmp:
            instances = write_instances(Path(tmp) / "instances", trials)
            load, start = load_average(), time.perf_counter()
            result = run(instances, "p1", "openai/smollm2", base_url=base_url,
                         out=Path(tmp) / "sweep", options=RunOptions(timeout_s=3),
                         progress="none", console=io.StringIO())  # fmt: skip
            wall = time.perf_counter() - start
            root = base_url.removesuffix("/v1")
            with __import__("urllib.request").request.urlopen(root + "/engine/stats") as reply:
                stats = json.loads(reply.read())
        ok = (result.stats.ok == trials and stats["received"] <= trials + 2
              and wall <= 1.3 * sequential + 5)  # fmt: skip
        passed &= ok
        print(f"one slot, 0.5 s a request, {'with' if props else 'without'} /props: "
              f"{result.stats.ok}/{trials} ok, {result.stats.failed} failed, "
              f"{stats['received']} requests, at most {stats['max_in_server']} held at once, "
              f"{stats['aborted']} abandoned; wall {wall:.1f} s against {sequential:.0f} s "
              f"sequential (<= {1.3 * sequential + 5:.1f}): {'PASS' if ok else 'FAIL'}; "
              f"load {load}", flush=True)  # fmt: skip
    return passed


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="Length of each spiky run.")
    ap.add_argument("--only", choices=("spiky", "polite", "one-slot"))
    ap.add_argument("--records", choices=("auto", "files", "shards"), default="auto",
                    help="The sweep's record layout (auto: files below 5,000 trials).")  # fmt: skip
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--spiky", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--rate", type=int, default=RATE, help=argparse.SUPPRESS)
    ap.add_argument("--latency", type=float, default=LATENCY_S, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.rate, args.latency, args.spiky)
        return 0
    passed = True
    if args.only in (None, "spiky"):
        passed &= spiky(args.seconds, args.records)
    if args.only in (None, "polite"):
        passed &= polite()
    if args.only in (None, "one-slot"):
        passed &= one_slot()
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())

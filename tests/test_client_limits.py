"""The limiter on virtual time (tests/virtual_clock.py): pacing, windows, pauses, the
learned rate, the probed cap and a server's published capacity. No test sleeps and no
test reads the wall clock: every figure below is exact."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from virtual_clock import VirtualClock, together

from facetlab.backends.base import RateSignal
from facetlab.client.limits import (
    MAX_PROBE,
    PROBE_HOLD_S,
    RATE_CUT,
    RATE_MARGIN,
    START_CONCURRENCY,
    WINDOW_SLACK_S,
    Limits,
    ProviderLimiter,
    _Pacer,
    _request_limit,
    _Window,
)
from facetlab.client.retry import RetryPolicy
from facetlab.errors import TransientBackendError

REFUSED = TransientBackendError("slow down", status=429, provider="openai")


def limiter(clock: VirtualClock, **limits: object) -> ProviderLimiter:
    return ProviderLimiter(Limits(**limits), clock=clock)  # type: ignore[arg-type]


async def call(
    lim: ProviderLimiter,
    clock: VirtualClock,
    latency: float = 0.0,
    *,
    stamps: list[float] | None = None,
    error: BaseException | None = None,
    tokens: int = 0,
) -> None:
    async with lim.slot(tokens):
        if stamps is not None:
            stamps.append(clock.now())
        await clock.sleep(latency)
        if error is not None:
            raise error


def test_requests_are_spaced_evenly_and_a_pause_holds_every_call() -> None:
    clock = VirtualClock()
    lim = limiter(clock, concurrency=50, requests_per_minute=1200, rate_window_s=None)
    stamps: list[float] = []

    async def main() -> float:
        await asyncio.gather(*(call(lim, clock, stamps=stamps) for _ in range(11)))
        lim.pause(0.2)
        paused_at = clock.now()
        await call(lim, clock)
        return clock.now() - paused_at

    waited = clock.run(main())
    assert stamps == pytest.approx([0.05 * i for i in range(11)])  # 20 a second, no burst
    assert waited == pytest.approx(0.2)


def test_a_rate_window_lets_one_window_go_at_once_and_never_more() -> None:
    clock = VirtualClock()
    lim = limiter(clock, requests_per_minute=3000, rate_window_s=0.2)  # 10 per 0.2 s
    stamps: list[float] = []
    clock.run(together(*(call(lim, clock, 0.01, stamps=stamps) for _ in range(25))))
    span = 0.2 + WINDOW_SLACK_S
    assert stamps == pytest.approx([0.0] * 10 + [span] * 10 + [2 * span] * 5)
    # the default window is the providers' second: --rpm 600 is 10 at once
    assert ProviderLimiter(Limits(requests_per_minute=600)).concurrency >= 10


def test_rate_window_is_used_only_where_it_holds_the_whole_rate() -> None:
    clock = VirtualClock()
    assert isinstance(_request_limit(1200, 1.0, clock), _Window)  # 20 per second
    assert isinstance(_request_limit(1176, 1.0, clock), _Window)  # 19 of 19.6: 3% lost
    assert isinstance(_request_limit(90, 1.0, clock), _Pacer)  # 1 of 1.5 per second: evenly
    slow = _request_limit(30, 1.0, clock)  # one request per 2 s
    assert isinstance(slow, _Window) and (slow.count, slow.seconds) == (1, 2.0)
    assert isinstance(_request_limit(1200, None, clock), _Pacer)


def test_a_refused_request_gives_its_window_place_back() -> None:
    clock = VirtualClock()
    lim = limiter(clock, requests_per_minute=600, rate_window_s=0.2)  # 2 per window
    stamps: list[float] = []

    async def main() -> None:
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=TransientBackendError("boom", status=500))
        await call(lim, clock, stamps=stamps)  # the 429's place is free again
        await call(lim, clock, stamps=stamps)  # the 500's is not: this one waits

    clock.run(main())
    assert stamps == pytest.approx([0.0, 0.2 + WINDOW_SLACK_S])
    assert lim.learned_rpm is None  # a configured rate is never learned over


def test_tokens_are_spaced_by_their_estimate() -> None:
    clock = VirtualClock()
    lim = limiter(clock, concurrency=10, tokens_per_minute=60_000)  # 1000 tokens/s
    stamps: list[float] = []
    clock.run(together(*(call(lim, clock, stamps=stamps, tokens=200) for _ in range(3))))
    assert stamps == pytest.approx([0.0, 0.2, 0.4])


def test_the_first_429_learns_what_the_provider_accepted_then_cuts_and_recovers() -> None:
    clock = VirtualClock()
    lim = limiter(clock, concurrency=64)

    async def main() -> list[float | None]:
        # 50 answered requests within the last second, then a refusal
        await asyncio.gather(*(call(lim, clock, 0.01) for _ in range(50)))
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)
        rates = [lim.learned_rpm]
        await clock.sleep(0.5)
        with pytest.raises(TransientBackendError):  # the same overshoot: no second cut
            await call(lim, clock, error=REFUSED)
        rates.append(lim.learned_rpm)
        await clock.sleep(0.6)
        with pytest.raises(TransientBackendError):  # a second after the first: cut again
            await call(lim, clock, error=REFUSED)
        rates.append(lim.learned_rpm)
        for _ in range(4):  # quiet seconds: half the way back each
            await clock.sleep(1.1)
            await call(lim, clock)
            rates.append(lim.learned_rpm)
        return rates

    rates = clock.run(main())
    first = RATE_CUT * 50 * 60
    assert rates[0] == pytest.approx(first) and rates[1] == rates[0]
    # one send in the second before the third refusal: the rate itself is cut
    assert rates[2] == pytest.approx(RATE_CUT * first)
    expected, target = rates[2], RATE_MARGIN * first
    for got in rates[3:]:  # then held just below the rate last refused (no probe yet)
        expected = (expected + target) / 2 if expected < 0.99 * target else expected
        assert got == pytest.approx(expected)
    assert rates[-1] == rates[-2] < target
    assert lim.concurrency == 64  # a fixed concurrency stays fixed


def test_a_retry_after_pause_is_not_read_as_a_lower_rate() -> None:
    """The old limiter cut to 90% of what was sent in the last second: right after a
    pause that is nearly nothing. The rate is now cut from the rate itself."""
    clock = VirtualClock()
    lim = limiter(clock)

    async def main() -> None:
        await asyncio.gather(*(call(lim, clock, 0.01) for _ in range(100)))
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)
        learned = lim.learned_rpm
        assert learned is not None
        lim.pause(5.0)  # the provider said retry-after: 5 s of nothing sent
        await call(lim, clock)
        before = lim.learned_rpm
        assert before is not None and before >= learned  # recovering, not lowered
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)
        assert lim.learned_rpm == pytest.approx(RATE_CUT * before)  # one call was sent in
        # the last second: the old rule would have cut to a rate of about 1 a second

    clock.run(main())


def test_with_a_rate_the_calls_in_flight_follow_the_latency() -> None:
    """A latency spike is not a rate limit: with a learned rate of 200/s, calls taking
    1.5 s instead of 50 ms put ~300 in flight, and the rate is not lowered."""
    clock = VirtualClock()
    lim = limiter(clock, max_concurrency=512)
    lim.observe(RateSignal(limit_rpm=200 * 60))  # the provider said its limit
    in_flight: list[int] = []

    async def one(latency: float) -> None:
        async with lim.slot():
            in_flight.append(lim.in_flight)
            await clock.sleep(latency)

    async def main() -> None:
        await asyncio.gather(*(one(0.05) for _ in range(200)))
        await asyncio.gather(*(one(1.5) for _ in range(600)))

    clock.run(main())
    assert max(in_flight[:200]) <= 12  # 200/s x 50 ms = 10 (+ rounding)
    assert 290 <= max(in_flight[200:]) <= 310  # 200/s x 1.5 s = 300
    assert lim.learned_rpm == 200 * 60
    paced = 199 / 200 + 0.05 + 599 / 200 + 1.5  # each batch paced at 200/s throughout
    assert clock.now() == pytest.approx(paced, abs=0.003)  # a late call catches up


def test_rate_limit_headers_pace_at_the_providers_limit_and_pause_until_its_reset() -> None:
    clock = VirtualClock()
    lim = limiter(clock)
    lim.observe(RateSignal(limit_rpm=600, remaining=5, reset_s=0.5))
    assert lim.learned_rpm == 600 and lim._paused_until <= clock.now()
    lim.observe(RateSignal(limit_rpm=600, remaining=0, reset_s=0.5))
    assert lim._paused_until > clock.now()
    lim.observe(None)  # no headers: nothing changes
    fixed = limiter(clock, requests_per_minute=60)
    fixed.observe(RateSignal(limit_rpm=600))
    assert fixed.learned_rpm is None  # a configured rate wins


def one_slot_server(clock: VirtualClock, service_s: float) -> Callable[[], Awaitable[float]]:
    """A server that runs one request at a time: the rest wait in its queue."""
    free_at = [0.0]

    async def serve() -> float:
        start = max(clock.now(), free_at[0])
        free_at[0] = start + service_s
        await clock.sleep(free_at[0] - clock.now())
        return start

    return serve


def test_without_a_rate_the_cap_does_not_grow_into_a_servers_queue() -> None:
    clock = VirtualClock()
    lim = limiter(clock)
    serve = one_slot_server(clock, 0.5)
    latencies: list[float] = []
    caps: list[int] = []

    async def trial() -> None:
        async with lim.slot() as started:
            await serve()
            latencies.append(clock.now() - started)
        caps.append(lim.concurrency)

    clock.run(together(*(trial() for _ in range(200))))
    # the cap stays at the start (one request waiting in the server) but for the first
    # probe (doubled) and one higher every HOLD_ROUNDS rounds, each taken back
    assert max(caps) == 2 * START_CONCURRENCY and lim.concurrency <= START_CONCURRENCY + 1
    assert max(latencies) <= 0.5 * 2 * START_CONCURRENCY + 1e-9
    assert sum(latencies) / len(latencies) < 0.5 * START_CONCURRENCY * 1.15
    assert clock.now() == pytest.approx(200 * 0.5)  # the server was never idle


def test_without_a_rate_the_cap_grows_while_latency_holds() -> None:
    """A remote API with no rate limit and a steady 100 ms: the cap doubles each round."""
    clock = VirtualClock()
    lim = limiter(clock, max_concurrency=64)
    clock.run(together(*(call(lim, clock, 0.1) for _ in range(2000))))
    assert lim.concurrency == 64


def test_a_timeout_halves_the_cap() -> None:
    clock = VirtualClock()
    lim = limiter(clock, max_concurrency=64)

    async def main() -> int:
        await asyncio.gather(*(call(lim, clock, 0.1) for _ in range(500)))
        before = lim.concurrency
        with pytest.raises(TimeoutError):
            await call(lim, clock, error=TimeoutError())
        return before

    before = clock.run(main())
    assert before == 64 and lim.concurrency == 32


def test_a_published_capacity_is_the_cap() -> None:
    clock = VirtualClock()

    async def slots_of(answer: object) -> ProviderLimiter:
        lim = limiter(clock)

        async def ask() -> int | None:
            if isinstance(answer, BaseException):
                raise answer
            return answer  # type: ignore[return-value]

        await asyncio.gather(lim.learn_capacity(ask), lim.learn_capacity(ask))

        return lim

    one = clock.run(slots_of(1))
    assert (one.capacity, one.concurrency) == (1, 1)
    thirty_two = clock.run(slots_of(32))
    assert thirty_two.concurrency == 40  # the slots and a quarter: the batch stays full
    broken = clock.run(slots_of(OSError("no /props")))
    assert broken.capacity is None and broken.concurrency == START_CONCURRENCY
    fixed = ProviderLimiter(Limits(concurrency=3))
    assert fixed.concurrency == 3  # a fixed concurrency is the user's: nothing to learn


def test_a_providers_rate_headers_reach_the_limiter_through_the_sdk_pool() -> None:
    """OpenAI's x-ratelimit-* headers on a real reply: the client paces at the stated limit."""
    from fakes import FakeLLMServer, FakeRequest
    from fakes.server import _openai_completion

    from facetlab.backends import ModelRequest, get_backend
    from facetlab.client import ModelClient

    def answer(request: FakeRequest) -> tuple[int, dict[str, str], bytes]:
        headers = {"content-type": "application/json", "x-ratelimit-limit-requests": "600",
                   "x-ratelimit-remaining-requests": "599", "x-ratelimit-reset-requests": "0.1s"}  # fmt: skip
        body = _openai_completion(request, "F1: 60, F2: 40\nno", None, None)
        return 200, headers, json.dumps(body).encode()

    routes = {("POST", "/v1/chat/completions"): answer}
    with FakeLLMServer(extra_routes=routes) as server:
        client = ModelClient(get_backend("openai/m", base_url=server.openai_base_url))

        async def once() -> None:
            await client.call(ModelRequest("Weigh F1 and F2."))
            await client.aclose()

        asyncio.run(once())
    assert client.limiter.learned_rpm == 600


def test_a_429_after_a_few_sends_teaches_no_rate() -> None:
    """One request refused because another client used the quota says nothing of the
    provider's rate: the retry-after pause answers it (a learned 1/s would pace a sweep
    at a request a second from then on)."""
    clock = VirtualClock()
    lim = limiter(clock)

    async def main() -> None:
        await call(lim, clock, 0.3)
        await clock.sleep(2.0)  # a quiet spell, then the one request sent is refused
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)

    clock.run(main())
    assert lim.learned_rpm is None


def test_a_ceiling_learned_low_is_left_after_the_hold() -> None:
    """A first 429 in a window another client had filled teaches a ceiling far below the
    provider's rate: after the hold each quiet step doubles its raise (2%, 4%, 8%, then
    10% a step), so the rate passes twice that ceiling within ~25 s; a probe refused starts
    the probing again from 2%, after the hold."""
    clock = VirtualClock()
    lim = limiter(clock, concurrency=64)

    async def quiet_steps(n: int) -> list[float]:
        rates = []
        for _ in range(n):
            await clock.sleep(1.1)
            await call(lim, clock)
            rates.append(lim.learned_rpm or 0.0)
        return rates

    async def main() -> tuple[list[float], list[float]]:
        await asyncio.gather(*(call(lim, clock, 0.01) for _ in range(20)))
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)
        first = await quiet_steps(22)
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)
        return first, await quiet_steps(18)

    first, again = clock.run(main())

    def expected(ceiling: float, steps: int, hold: float) -> list[float]:
        rate, probes, out = RATE_CUT * ceiling, 0, []
        for step in range(1, steps + 1):
            if rate < 0.99 * RATE_MARGIN * ceiling:
                rate = (rate + RATE_MARGIN * ceiling) / 2
            elif 1.1 * step >= hold - 1e-9:
                rate, probes = rate * (1 + min(MAX_PROBE, 0.02 * 2 ** min(probes, 5))), probes + 1
            out.append(rate)
        return out

    assert first == pytest.approx(expected(20 * 60, 22, PROBE_HOLD_S), rel=1e-3)
    assert first[5] < 20 * 60 and first[-1] > 2 * 20 * 60  # held below it, then left
    assert again == pytest.approx(expected(first[-1], 18, PROBE_HOLD_S), rel=1e-3)
    assert max(again[:7]) < first[-1]  # the hold below the probe refused


# --------------------------------------------------------------------------- polite at a limit


def sliding_window_provider(
    clock: VirtualClock, limit: int, latency: float, lim: ProviderLimiter, *, headers: bool = False
) -> tuple[Callable[[], Awaitable[None]], dict[str, list[float]]]:
    """A provider that takes ``limit`` requests in any second (arrivals; past it 429 with
    ``retry-after`` = until a place frees), and one call as the model client makes it:
    a 429 pauses every call for its retry-after, then the call is sent again after its
    backoff (the client's default policy without jitter)."""
    accepted: list[float] = []
    log: dict[str, list[float]] = {"accepted": accepted, "refused": []}

    async def one() -> None:
        for attempt in range(1, 30):
            try:
                async with lim.slot() as started:
                    window = [t for t in accepted[-limit:] if started - t < 1.0]
                    if len(window) >= limit:
                        log["refused"].append(started)
                        wait = max(0.001, 1.0 - (started - window[0]))
                        raise TransientBackendError(
                            "slow down", status=429, provider="openai", retry_after=wait
                        )
                    accepted.append(started)
                    await clock.sleep(latency)
                    if headers:  # what is left of this second, and when a place frees
                        now = clock.now()
                        held = [t for t in accepted[-limit:] if now - t < 1.0]
                        reset = 1.0 - (now - held[0]) if held else 1.0
                        lim.observe(RateSignal(remaining=limit - len(held), reset_s=reset))
                return
            except TransientBackendError as exc:
                lim.pause(exc.retry_after or 0.0)
                await clock.sleep(
                    max(exc.retry_after or 0.0, RetryPolicy(jitter=False).delay(attempt))
                )
        raise AssertionError("a call refused 30 times")

    return one, log


@settings(max_examples=15, deadline=None)
@given(
    limit=st.integers(3, 120),
    latency=st.floats(0.01, 0.8),
    headers=st.booleans(),
)
def test_at_a_steady_limit_few_requests_are_refused_and_the_limit_is_held(
    limit: int, latency: float, headers: bool
) -> None:
    """Without --rpm, against any steady limit and latency: at most 5% of the answered
    requests are refused (the ramp before the first 429 included), and once the limit is
    learned the sweep holds >= 0.90 of it (seconds 10 to 20 of a ~25-second sweep).

    Finding the limit and each probe above it cost a few refusals whatever the rate; at
    3-5 requests a second the ~25-second sweep has under 130 answers, and those few are up
    to 6% of them (scanned on a grid of limits 3-12 and latencies: never more than 8 in a
    sweep). So the bound is 5% or 8 refusals, whichever is larger."""
    clock = VirtualClock()
    lim = limiter(clock)
    one, log = sliding_window_provider(clock, limit, latency, lim, headers=headers)

    async def main() -> None:
        await asyncio.gather(*(one() for _ in range(24 * limit)))

    clock.run(main())
    answered, refused = log["accepted"], log["refused"]
    assert len(refused) <= max(0.05 * len(answered), 8)
    held = sum(1 for t in answered if 10.0 <= t < 20.0) / (10.0 * limit)
    assert held >= 0.90


def test_a_recovery_step_goes_no_higher_than_the_headers_say_is_left() -> None:
    clock = VirtualClock()
    lim = limiter(clock, concurrency=64)

    async def main() -> list[float]:
        await asyncio.gather(*(call(lim, clock, 0.01) for _ in range(200)))
        with pytest.raises(TransientBackendError):
            await call(lim, clock, error=REFUSED)
        cut = lim.learned_rpm or 0.0
        lim.observe(RateSignal(remaining=1, reset_s=6.0))  # one more request in 6 s
        rates = []
        for _ in range(6):
            await clock.sleep(1.1)
            await call(lim, clock)
            rates.append(lim.learned_rpm or 0.0)
        return [cut, *rates]

    cut, *rates = clock.run(main())
    assert cut == pytest.approx(RATE_CUT * 200 * 60)
    # until the reset each step adds at most what is left: 1 request in 6 s = 10 a minute
    assert rates[:5] == pytest.approx([cut + 10 * k for k in range(1, 6)])
    free = (rates[4] + RATE_MARGIN * 200 * 60) / 2  # after it, half the way to the target
    assert rates[5] == pytest.approx(free) and free - rates[4] > 10

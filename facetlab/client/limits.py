"""Per-provider limits: the request rate and the calls in flight, kept apart.

One :class:`ProviderLimiter` guards all calls to one provider at one server.
``async with limiter.slot(tokens)`` waits for a place in flight, then for any
``retry-after`` pause, then for the token and request rates; the limiter learns from
how the call ended (answered, refused with 429, timed out).

**The rate** comes from the provider's own signals only: a configured
``requests_per_minute`` (``--rpm``); the rate-limit headers a provider sends (its
limit per minute, and a pause until the reset when nothing remains); and 429s.
Without a configured rate a 429 sets the rate to :data:`RATE_CUT` of what the provider
took in the second before it refused (the sends of that second whose 429 has not come
back), at most once per :data:`CUT_SPACING_S` (a burst of 429s from one overshoot is one
signal); after a ``retry-after`` pause that second says nothing, and the rate itself is
cut. Every :data:`RECOVER_S` without a cut the rate regains half its distance to
:data:`RATE_MARGIN` of the rate refused; only :data:`PROBE_HOLD_S` after a cut does a
step go above the rate refused (:data:`RATE_PROBE`, the raise doubling while no 429
comes, at most :data:`MAX_PROBE`). A step adds no more than the provider's headers said
is left until their reset (remaining / reset). A
``retry-after`` pauses every call; it is never read as a lower rate.

A configured rate is enforced the way providers enforce theirs: quantised to windows
of ``rate_window_s`` (one second by default), each kept :data:`WINDOW_SLACK_S` longer
than the provider's (a request arrives a little after it leaves), so a sweep may start
with a full window's burst. ``rate_window_s=None``, tokens and a learned rate are
spaced evenly.

**The calls in flight** come from latency and throughput (Little's law: in flight =
throughput x latency). With a learned rate the pacing itself holds the calls in
flight at rate x latency, so only ``max_concurrency`` caps them: a latency spike raises
the calls in flight and keeps the rate, instead of lowering it. With a configured rate
the cap is a window's burst or twice rate x latency, whichever is more (many more tasks
waiting for a window would date their places later than they leave: 429s). Without a rate (a local
server, an inference engine) the cap starts at :data:`START_CONCURRENCY` and is
probed one round at a time (a round: as many answers as the cap): after a round in
which every place was busy the cap is raised (doubled until a raise is first taken
back, then by a quarter). A raise is judged on the second round after it: if it
bought less than half its share of throughput while the latency rose by more than
half its share, the extra calls only queued in the server (Little's law), so it is
taken back and not tried again for :data:`HOLD_ROUNDS` rounds (twice as many
after each raise taken back, up to eight times as many). A
timeout halves the cap. A server that says how many requests it runs at once
(:meth:`ProviderLimiter.learn_capacity`: llama.cpp's ``/props``, SGLang's server
info, Ollama's ``OLLAMA_NUM_PARALLEL``) is given that many plus a quarter, and no
more: requests beyond its slots would only wait in its queue, counting against
their timeout.

``limiter.admission()`` bounds the trials being prepared (cache look-up, the
cross-process claim) to a few more than the calls allowed in flight.

Time comes from a :class:`Clock` (``now``, ``sleep``), so tests run the limiter on
virtual time.

>>> import asyncio
>>> lim = ProviderLimiter(Limits(concurrency=2, requests_per_minute=6000))
>>> async def once() -> None:
...     async with lim.slot(10):
...         pass
>>> asyncio.run(once())
"""

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from facetlab.backends.base import RateSignal, RetryDecision, retry_decision
from facetlab.errors import ConfigError
from facetlab.numbers import check_number

START_CONCURRENCY = 2  # calls in flight before anything is known of a server without a rate

WINDOW_SLACK_S = 0.010
"""How much longer than the provider's window a rate window is kept (send-to-arrival jitter)."""

# The constants of the learned rate and of the probed cap (see the module docstring)
RATE_CUT = 0.95  # a 429 sets the rate to this share of what the provider took in the last second
CUT_SPACING_S = 1.0  # at most one cut per this many seconds
RECOVER_S = 1.0  # each this many seconds without a cut, one recovery step
RATE_MARGIN = 0.98  # recovery heads for this share of the rate refused (arrival jitter)
PROBE_HOLD_S = 8.0  # seconds after a cut before a step above the rate refused
RATE_PROBE = 1.02  # the first step above the rate refused; each further step without a
MAX_PROBE = 0.10  # 429 doubles the raise, up to this share (2%, 4%, 8%, 10%, 10%, ...)
HOLD_ROUNDS = 8  # rounds a taken-back raise is not tried again (doubled each time, to 64)
MIN_RPM = 60.0  # no cut goes below a request a second (retry-after pauses space the rest)
LEARN_AFTER = 1  # a 429 after no more sends than this in the last second teaches no rate


class Clock:
    """Monotonic time and sleep for the limiter (tests pass a virtual clock)."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK = Clock()


@dataclass(frozen=True)
class Limits:
    """What one provider allows. ``None`` means unlimited (or, for concurrency, automatic)."""

    # concurrency: fixed calls in flight; None sizes it from the rate, latency and throughput.
    # adaptive: without requests_per_minute, learn a rate from the provider's signals.
    # rate_window_s: requests_per_minute allows rpm / 60 * rate_window_s requests in any
    # window this long (OpenAI, for one, enforces per-minute limits per second); None
    # spaces requests evenly (no bursts at all).
    concurrency: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    adaptive: bool = True
    max_concurrency: int = 256  # the ceiling of automatic concurrency
    rate_window_s: float | None = 1.0

    def __post_init__(self) -> None:
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {self.max_concurrency}")
        for name, flag in (("requests_per_minute", "--rpm"), ("tokens_per_minute", "--tpm")):
            check_number(f"{name} ({flag})", getattr(self, name), minimum=0.0, inclusive=False)
        check_number(
            "rate_window_s (--rpm-window)", self.rate_window_s, minimum=0.0, inclusive=False
        )


class _Pacer:
    """Even spacing at ``per_minute`` units per minute (a token bucket of capacity one unit)."""

    def __init__(self, per_minute: float, clock: Clock) -> None:
        self.interval = 60.0 / per_minute
        self.next_free = 0.0
        self.clock = clock
        self.lock = asyncio.Lock()

    async def take(self, units: float = 1.0) -> None:
        # Serial, and spaced by the time each unit actually goes out: a loop that was
        # busy (a slow disk write) may catch up by at most half an interval, so a late
        # request is not followed by a burst that trips the provider's window.
        async with self.lock:
            wait = self.next_free - self.clock.now()
            if wait > 0:
                await self.clock.sleep(wait)
            now = self.clock.now()
            sent = max(now - self.interval / 2, self.next_free) if self.next_free else now
            self.next_free = sent + units * self.interval


class _Window:
    """At most ``count`` requests start in any window of ``seconds`` (a provider's quantised rpm).

    The provider counts arrivals, not departures. A place is dated when the request
    has been written: after the event-loop steps in which the SDK builds and writes
    it (a burst's requests are all built before the first is sent), unless it first
    waits for a new connection. It is held ``slack_s`` longer than the provider's
    window for the rest of the jitter between leaving and arriving.
    """

    def __init__(
        self, count: int, seconds: float, clock: Clock, slack_s: float = WINDOW_SLACK_S
    ) -> None:
        self.count = count
        self.seconds = seconds
        self.span = seconds + slack_s
        self.clock = clock
        self.sent: deque[list[float]] = deque()  # one mutable date per place, oldest first
        self.lock = asyncio.Lock()

    async def take(self, units: float = 1.0) -> list[float]:
        """Wait for a place in the window; returns it (see :meth:`give_back`)."""
        async with self.lock:
            while True:
                now = self.clock.now()
                while self.sent and now - self.sent[0][0] >= self.span:
                    self.sent.popleft()
                if len(self.sent) < self.count:
                    place = [now]
                    self.sent.append(place)
                    loop = asyncio.get_running_loop()
                    # two hops: the call may run as its own task (asyncio.wait_for on
                    # Python 3.11), whose first step is queued after this one's end
                    loop.call_soon(loop.call_soon, self._redate, place)
                    return place
                await self.clock.sleep(self.sent[0][0] + self.span - now)

    def _redate(self, place: list[float]) -> None:
        place[0] = max(place[0], self.clock.now())

    def give_back(self, place: list[float]) -> None:
        """Free the place of a request the provider refused (429)."""
        with contextlib.suppress(ValueError):
            self.sent.remove(place)


def _request_limit(per_minute: float, window_s: float | None, clock: Clock) -> _Pacer | _Window:
    """Windows of ``window_s`` for ``per_minute`` requests, or even spacing when that fits better.

    A window shorter than one request's interval holds one request. When a window
    cannot hold a whole number of requests without losing more than 5% of the rate
    (90 rpm is 1.5 per second), requests are spaced evenly instead, as they are
    with ``window_s=None``.
    """
    if window_s is None:
        return _Pacer(per_minute, clock)
    seconds = max(window_s, 60.0 / per_minute)
    exact = per_minute / 60.0 * seconds
    count = math.floor(exact + 1e-9)
    return _Pacer(per_minute, clock) if count < 0.95 * exact else _Window(count, seconds, clock)


class _Slots:
    """A fair semaphore whose size can change while it is in use (release and resize never wait).

    A place is handed over: releasing one gives it to the longest waiter, counted as
    used before that waiter runs, so exactly as many waiters wake as there are free
    places, each wakes once, and a newcomer never takes a place a waiter was woken for.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.used = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self.used < self.size and not self._waiters:
            self.used += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # the place is ours (counted in used) once this returns
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a place, then cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.used -= 1
        self._wake()

    def resize(self, size: int) -> None:
        self.size = size
        self._wake()

    def _wake(self) -> None:
        while self.used < self.size and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.used += 1  # handed over: counted before the waiter runs
                waiter.set_result(None)


class ProviderLimiter:
    """Request rate and calls in flight for one provider at one server (see the module)."""

    def __init__(self, limits: Limits, clock: Clock = SYSTEM_CLOCK) -> None:
        self.limits = limits
        self.clock = clock
        rpm = limits.requests_per_minute
        self._requests = _request_limit(rpm, limits.rate_window_s, clock) if rpm else None
        self._tokens = _Pacer(limits.tokens_per_minute, clock) if limits.tokens_per_minute else None
        self._auto = limits.concurrency is None
        self._learn = limits.adaptive and not rpm
        self.learned_rpm: float | None = None
        self._told_rpm: float | None = None  # the provider's own limit (headers)
        self._ceiling = 0.0  # the learned rate last refused, per second
        self._last_change = self._last_cut = 0.0
        self._probes = 0  # recovery steps above the ceiling since the last cut
        self._room = (0.0, 0.0)  # the rate the headers said is left, until when
        self._sent: deque[float] = deque()  # sends of the last second (refused ones taken out)
        self._paused_until = 0.0
        self.in_flight = 0
        self.capacity: int | None = None  # what the server said it runs at once
        self._probed = False
        self._probe_lock = asyncio.Lock()
        # the probing of the cap when no rate is known: the round so far, the raise
        # being judged (cap, throughput, latency before it), rounds on hold
        self._round = (0.0, 0, 0.0, False)  # start, answers, latency sum, every place busy
        self._raised: tuple[int, float, float, int] | None = None
        self._hold, self._hold_for, self._doubling = 0, HOLD_ROUNDS, True
        self.latency_s = 0.0  # moving average of the answered calls' latency
        size = limits.concurrency or (self._rate_cap() if rpm else START_CONCURRENCY)
        self._slots = _Slots(min(size, limits.max_concurrency))
        self._admitted = _Slots(self._admission_size())

    @property
    def concurrency(self) -> int:
        """Calls allowed in flight now."""
        return self._slots.size

    def _admission_size(self) -> int:
        # room for every call in flight plus as many ready to go when a slot frees
        return 2 * self._slots.size + 4

    def _rate_known(self) -> bool:
        return self._requests is not None

    def _rate_cap(self) -> int:
        # a configured rate: its window's burst, or (Little's law) room for the latency to
        # double (more tasks waiting for a window date their places later than they leave)
        window = self._requests.count if isinstance(self._requests, _Window) else 1
        rpm = self.limits.requests_per_minute or 0.0
        return max(window, math.ceil(rpm / 60.0 * self.latency_s * 2)) + 4

    def _resize(self, size: int) -> None:
        size = max(1, min(size, self.limits.max_concurrency))
        if self._auto and size != self._slots.size:
            self._slots.resize(size)
            self._admitted.resize(self._admission_size())

    async def learn_capacity(self, ask: Callable[[], Awaitable[int | None]] | None) -> None:
        """Once per limiter: ask the server how many requests it runs at once (its
        slots), and hold automatic concurrency to that. Any failure of ``ask`` is no answer."""
        if self._probed or not self._auto or self._rate_known():
            return
        async with self._probe_lock:
            if self._probed:  # another call asked while this one waited
                return
            slots: object = None
            with contextlib.suppress(Exception):  # a failed question is no answer
                slots = await ask() if ask is not None else None
            self._probed = True
            if isinstance(slots, int) and slots > 0:
                self.capacity = slots
                self._resize(slots + slots // 4)

    # -- the rate ------------------------------------------------------------------------
    def _set_rate(self, per_s: float, now: float) -> None:
        told = self._told_rpm or float("inf")  # never above a limit the provider stated
        self.learned_rpm = min(told, max(MIN_RPM, per_s * 60.0))
        self._last_change = now
        if isinstance(self._requests, _Pacer):  # one pacer: calls waiting on it keep their turn
            self._requests.interval = 60.0 / self.learned_rpm
        else:
            self._requests = _Pacer(self.learned_rpm, self.clock)
        if self.capacity is None:
            self._resize(self.limits.max_concurrency)  # the pacing holds in flight now

    def rate_limited(self, sent: float) -> None:
        """The provider refused (429) the request ``sent`` then: cut the learned rate (or
        learn it, the first time) to a share of what it took in the last second."""
        if not self._learn:
            return
        now = self.clock.now()
        with contextlib.suppress(ValueError):
            self._sent.remove(sent)  # refused: not taken
        # what the provider held in the second before it refused this one (a send refused
        # too is taken out as its 429 comes back: most come back before this one)
        took = sum(1 for t in self._sent if sent - 1.0 < t <= sent)
        if self.learned_rpm is None:
            if took < LEARN_AFTER:  # too few to say (another client used the quota): the
                return  # retry-after pause is the whole answer
            self._ceiling = float(took)
        elif now - self._last_cut < CUT_SPACING_S:
            return
        else:  # after a pause the last second says nothing: the rate itself was refused
            full = took > LEARN_AFTER and self._paused_until <= now - 1.0
            self._ceiling = min(self.learned_rpm / 60.0, took if full else math.inf)
        self._last_cut, self._probes = now, 0
        self._set_rate(RATE_CUT * self._ceiling, now)

    def observe(self, signal: RateSignal | None) -> None:
        """The provider's rate-limit headers: pace at its limit, pause until its reset."""
        if signal is None:
            return
        if signal.limit_rpm and self._learn and signal.limit_rpm != self._told_rpm:
            self._told_rpm = signal.limit_rpm
            self._ceiling = signal.limit_rpm / 60.0
            self._set_rate(self._ceiling, self.clock.now())
        if signal.remaining is not None and signal.reset_s:
            self._room = (signal.remaining / signal.reset_s, self.clock.now() + signal.reset_s)
            if signal.remaining <= 0:
                self.pause(signal.reset_s)

    def pause(self, seconds: float) -> None:
        """Hold every new request for ``seconds`` (the provider said retry-after)."""
        self._paused_until = max(self._paused_until, self.clock.now() + seconds)

    async def _wait_pause(self) -> None:
        while (left := self._paused_until - self.clock.now()) > 0:
            await self.clock.sleep(left)

    def _recover(self, rate: float, now: float) -> None:
        """One step up: half the way to just below the rate refused; at it, after the hold,
        a probe above it; never more than the headers said is left (remaining / reset)."""
        target = RATE_MARGIN * self._ceiling
        if rate < 0.99 * target:
            step = (rate + target) / 2
        elif now - self._last_cut >= PROBE_HOLD_S:
            step = rate * (1 + min(MAX_PROBE, (RATE_PROBE - 1) * 2 ** min(self._probes, 5)))
            self._probes += 1
        else:
            return
        room, until = self._room  # no more than the requests left until the reset on top
        self._set_rate(min(step, rate + room) if now < until else step, now)

    # -- the calls in flight -------------------------------------------------------------
    def _answered(self, started: float) -> None:
        now = self.clock.now()
        latency = now - started
        self.latency_s = 0.8 * self.latency_s + 0.2 * latency if self.latency_s else latency
        if self.limits.requests_per_minute:
            self._resize(self._rate_cap())
        if self._learn and self.learned_rpm is not None and now - self._last_change > RECOVER_S:
            self._recover(self.learned_rpm / 60.0, now)
        if not self._auto or self._rate_known() or self.capacity is not None:
            return
        start, answers, latencies, busy = self._round
        answers, latencies = answers + 1, latencies + latency
        if answers < self._slots.size:
            self._round = (start or started, answers, latencies, busy)
            return
        self._round = (now, 0, 0.0, False)
        throughput, mean = answers / max(now - (start or started), 1e-6), latencies / answers
        cap = self._slots.size
        if self._raised is not None:  # judged on the second round after it, once settled
            before, was, lat, settle = self._raised
            self._raised = (before, was, lat, settle - 1) if settle else None
            half = (cap / before - 1) / 2
            if not settle and throughput < was * (1 + half) and mean > lat * (1 + half):
                self._doubling, self._hold = False, self._hold_for
                self._hold_for = min(8 * HOLD_ROUNDS, 2 * self._hold_for)
                self._resize(before)  # the raise only queued in the server
            if self._raised is not None or self._hold:
                return
        if self._hold:
            self._hold -= 1
        elif busy and cap < self.limits.max_concurrency:
            self._raised = (cap, throughput, mean, 1)
            self._resize(2 * cap if self._doubling else cap + max(1, cap // 4))

    def _failed(self, decision: RetryDecision, exc: BaseException, place: list[float] | None,
                started: float) -> None:  # fmt: skip
        if decision.kind == "rate_limit":
            if isinstance(self._requests, _Window) and place is not None:
                # A refused request frees its place: the retry-after pause says when to
                # send again, whether or not the provider counted the refusal.
                self._requests.give_back(place)
            self.rate_limited(started)  # its retry-after pause is the client's (within its cap)
        elif isinstance(exc, TimeoutError) and not self._rate_known() and self.capacity is None:
            self._doubling, self._hold, self._raised = False, HOLD_ROUNDS, None
            self._resize(self._slots.size // 2)

    @asynccontextmanager
    async def slot(
        self, tokens: int = 0, decide: Callable[[BaseException], RetryDecision] = retry_decision
    ) -> AsyncIterator[float]:
        """Hold one request's worth of every limit for the duration of the call.

        Yields the call's start time (``clock.now()``). The call's end teaches the
        limiter: an answer (latency, throughput), a 429 (the rate), a timeout (the cap).
        """
        await self._slots.acquire()
        try:
            await self._wait_pause()
            if self._tokens is not None and tokens > 0:
                await self._tokens.take(float(tokens))
            await self._wait_pause()
            requests = self._requests  # last: a window place is dated as the call leaves
            place = await requests.take() if requests is not None else None
            self.in_flight += 1
            if self._slots.used >= self._slots.size:
                self._round = (*self._round[:3], True)
            started = self.clock.now()
            if self._learn:  # what a 429 is measured on
                self._sent.append(started)
                while started - self._sent[0] >= 1.0:
                    self._sent.popleft()
            try:
                yield started
            except BaseException as exc:
                self._failed(decide(exc), exc, place if isinstance(place, list) else None, started)
                raise
            else:
                self._answered(started)
            finally:
                self.in_flight -= 1
        finally:
            self._slots.release()

    @asynccontextmanager
    async def admission(self) -> AsyncIterator[None]:
        """Hold one of the places for trials being prepared for this provider (see the module)."""
        await self._admitted.acquire()
        try:
            yield
        finally:
            self._admitted.release()

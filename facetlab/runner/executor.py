"""Run planned trials concurrently and write one record per trial as it completes.

For each trial, in this order: an existing record is kept (``ok`` always,
``failed`` unless ``retry_errors``); a cached response is reused (cost 0,
``cached=True``); otherwise the call waits for its provider's limits, is
retried on transient failures, its response is cached at once, parsed, and its
record written atomically to ``<out>/records/<trial_id>.json``. A trial that
fails for good is recorded as ``failed`` with the provider's message. Nothing a
model answers can crash the run: parse failures end up in ``parse_status``.

A budget stops the run cleanly: when the spend reaches it, calls in flight
finish and are recorded, trials not yet started are left for the next run. An
interrupt (:meth:`Executor.interrupt`: Ctrl-C, SIGTERM, a Jupyter interrupt) does
the same, and cancels calls still in flight after a grace period. A write that
fails (full disk) stops the run the same way: a paid answer reaches the disk (its
record, linked into the cache, or a cache entry of its own) before its trial counts, so
a resume pays nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import functools
import random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from facetlab.backends import model_declaration
from facetlab.backends._common import redact
from facetlab.backends.base import Backend, ModelResponse, retry_decision
from facetlab.client.cache import ResponseCache
from facetlab.client.limits import Limits, ProviderLimiter
from facetlab.client.meter import CostMeter
from facetlab.client.model import CallFailed, CallHooks, ModelClient, Stopped
from facetlab.client.retry import RetryPolicy, describe
from facetlab.errors import BudgetExceededError, ConfigError
from facetlab.probes.base import EMPTY_REPLY, ParseResult, is_blank
from facetlab.records.inputs import trial_inputs
from facetlab.records.own import write_record
from facetlab.records.schema import TrialInputs, TrialRecord
from facetlab.records.store import sweep_statuses
from facetlab.runner._writer import CacheEntry, Layout, RecordWriter, Written
from facetlab.runner.options import RunOptions, limits_key
from facetlab.runner.plan import ProbeSuite, Trial
from facetlab.runner.progress import Progress, ProgressDisplay, RunStats
from facetlab.timestamps import now_iso

Collector = Callable[["Executor", Sequence[Trial]], Awaitable[None]]
"""Answers pending trials through an executor (the batch path)."""


EMPTIED_BY_REASONING = (
    "the reply is empty: the token limit went to reasoning (raise --max-tokens, lower "
    "--effort or give --thinking a smaller budget); the answer was paid for and is cached"
)


def reply_error(response: ModelResponse) -> str | None:
    """Why a paid reply is not an ``ok`` trial (None: it is)."""
    return EMPTIED_BY_REASONING if response.emptied_by_reasoning else None


@dataclass(frozen=True)
class ExecOptions:
    """Where and how to run (not what): the run's :class:`RunOptions` (budget, cache,
    parser, timeouts, resume) plus what :func:`~facetlab.runner.arun` resolved around
    them: the folder, the limits, the retry policy."""

    out: Path
    run: RunOptions = field(default_factory=RunOptions)
    limits: Mapping[str, Limits] = field(default_factory=dict)
    """Per provider; providers not listed get ``default_limits``."""
    default_limits: Limits = field(default_factory=Limits)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    cache_dir: Path | None = None
    """The resolved cache (``--cache-dir`` or ``FACETLAB_CACHE_DIR``); default ``<out>/cache``."""
    sweep: str | None = None
    """The sweep's name, stored in every record."""
    rng_seed: int | None = None
    """Seed of the backoff jitter (tests); None draws from the OS."""
    secrets: tuple[str, ...] = ()
    """Known key values, removed from every stored reply (a provider may echo a header)."""
    layout: Layout = "files"
    """``files``: one record file per trial; ``shards``: append-only shards (large sweeps)."""


IN_FLIGHT_TRIALS = 2048
"""Trials admitted at once (waiting for a limiter or a call, or being written); the rest
of a sweep is not started yet, so memory does not grow with its size."""

ADMIT_STEP = 64
"""Trials admitted before the admitting loop yields: the first calls leave while the
rest are admitted (admitting 2,048 at once held the first call back ~0.1 s)."""


class _ExecutorHooks(CallHooks):
    """The executor's live counters, told by its clients what each call is doing."""

    def __init__(self, executor: Executor, model: str = "") -> None:
        self.executor = executor
        self.progress = executor.progress
        self.stats = executor.stats
        self.provider = executor.progress.provider(model)  # the display's per-provider row
        self.backend = executor.backends.get(model)

    def stopped(self) -> bool:
        return self.executor.stop  # budget reached, interrupted or disk full

    def call_started(self) -> None:
        self.progress.in_flight += 1
        self.provider.in_flight += 1
        self.stats.calls += 1

    def call_ended(self) -> None:
        self.progress.in_flight -= 1
        self.provider.in_flight -= 1

    def retry_waiting(self, error: BaseException) -> None:
        self.stats.retries += 1
        decide = self.backend.should_retry if self.backend is not None else retry_decision
        if decide(error).kind == "rate_limit":
            self.stats.rate_limited += 1
        self.progress.retrying += 1
        self.provider.retrying += 1
        self.executor.refresh_display()

    def retry_started(self) -> None:
        self.progress.retrying -= 1
        self.provider.retrying -= 1

    def cancelled(self) -> None:
        self.stats.cancelled_in_flight += 1


def records_dir(out: Path) -> Path:
    """Where a sweep's records live: ``<out>/records``."""
    return out / "records"


def keeps_record(status: str | None, *, retry_errors: bool) -> bool:
    """Whether a trial's existing record stands (the trial is not run again).

    ``ok`` always does; ``failed`` does unless ``retry_errors``; no record never does.
    """
    return status == "ok" or (status == "failed" and not retry_errors)


def existing_status(out: Path) -> dict[str, str]:
    """``trial_id -> status`` of every readable record already in ``<out>/records``
    (files, shards and compacted parts; see :mod:`facetlab.records.store`)."""
    return sweep_statuses(records_dir(out))  # a bad file is reported, skipped, run again


def safe_parse(suite: ProbeSuite, trial: Trial, text: str, parser: str) -> ParseResult:
    """The probe's parse, or a ``malformed`` result if the parser itself broke."""
    if is_blank(text):
        return EMPTY_REPLY
    try:
        return suite.parse_reply(trial.probe, text, trial.n_factors, parser=parser)
    except Exception as exc:  # a parser bug must not lose the trial
        return ParseResult(status="malformed", problems=(f"parser error: {describe(exc)}",))


class InputsMemo:
    """A run's trial fingerprints, computed once per cell instead of once per trial.

    Hashing an instance's content costs more than the rest of a record; the trials of a
    cell (its models and repeats) come one after another, so a small recent-cells memo
    serves them. Per run: an instance edited between two runs is fingerprinted again.
    """

    SIZE = 1024

    def __init__(self) -> None:
        self._memo: OrderedDict[tuple[int, int, str], tuple[Any, Any, TrialInputs | None]] = (
            OrderedDict()
        )

    def __call__(self, trial: Trial) -> TrialInputs | None:
        key = (id(trial.instance), id(trial.base_instance), trial.template)
        found = self._memo.get(key)
        # the objects are kept with their entry, so an id is never reused while it is here
        if found is not None and found[0] is trial.instance and found[1] is trial.base_instance:
            self._memo.move_to_end(key)
            return found[2]
        value = trial_inputs(trial.instance, trial.base_instance, template=trial.template)
        self._memo[key] = (trial.instance, trial.base_instance, value)
        if len(self._memo) > self.SIZE:
            self._memo.popitem(last=False)
        return value


class Executor:
    """Runs trials; one instance per run."""

    def __init__(
        self,
        backends: Mapping[str, Backend],
        suite: ProbeSuite,
        options: ExecOptions,
        *,
        progress: Progress | None = None,
        display: ProgressDisplay | None = None,
        estimate_tokens: Callable[[Trial], int] | None = None,
    ) -> None:
        self.backends = backends
        self.suite = suite
        self.options = options
        self.cache = ResponseCache(options.cache_dir or options.out / "cache")
        self.progress = progress or Progress()
        self.display = display
        self.stats = self.progress.stats  # one set of counters: the display reads them live
        self.stop = False
        self._limiters: dict[tuple[str, str | None], ProviderLimiter] = {}
        self._estimate = estimate_tokens or (lambda t: 0)
        self._rng = random.Random(options.rng_seed)
        self._live: set[asyncio.Future[None]] = set()
        self._error: BaseException | None = None
        self._calling = 0  # calls in flight: answers the writer's group may wait for
        # late-bound: the one record-file writer of this module (tests replace it)
        self.writer = RecordWriter(
            records_dir(options.out),
            options.layout,
            lambda r, d: write_record(r, d, durable=False),  # the writer syncs each group
            incoming=lambda: self._calling,
        )
        self.meter = CostMeter(options.run.budget_usd)
        self._clients: dict[str, ModelClient] = {}
        self._hooks: dict[str, _ExecutorHooks] = {}
        self._inputs = InputsMemo()

    def limiter(self, provider: str, endpoint: str | None = None) -> ProviderLimiter:
        """The one limiter of ``provider`` at ``endpoint`` (its own limits, else the defaults).

        Limits are configured per provider, or per server of a provider
        (:func:`~facetlab.runner.options.limits_key`); two servers of one provider
        (api.openai.com and a local vLLM) are limited apart.
        """
        where = (provider, endpoint)
        if where not in self._limiters:
            own = self.options.limits.get(limits_key(provider, endpoint))  # this server's
            lim = own or self.options.limits.get(provider, self.options.default_limits)
            self._limiters[where] = ProviderLimiter(lim)
        return self._limiters[where]

    def limiter_of(self, model: str) -> ProviderLimiter:
        """The limiter a model's calls go through (its backend's provider and server)."""
        backend = self.backends.get(model)
        if backend is None:
            return self.limiter(model)
        return self.limiter(backend.provider, backend.base_url)

    def client(self, model: str) -> ModelClient:
        """The one client of ``model``: its provider's limiter, the run's meter and retry policy."""
        found = self._clients.get(model)
        if found is None:
            backend = self.backends.get(model)
            if backend is None:
                raise ConfigError(f"no backend for model {model!r}")
            found = ModelClient(
                backend,
                limiter=self.limiter_of(model),
                retry=self.options.retry,
                timeout_s=self.options.run.timeout_s,
                meter=self.meter,
                cache=self.cache,
                price_model=model,
                rng=self._rng,
            )
            self._clients[model] = found
        return found

    def _hooks_of(self, model: str) -> _ExecutorHooks:
        found = self._hooks.get(model)
        if found is None:
            found = self._hooks[model] = _ExecutorHooks(self, model)
        return found

    def refresh_display(self) -> None:
        """Redraw live progress (also called by the batch collector while it polls)."""
        if self.display is not None:
            self.display.update()

    def _storage_failed(self, exc: OSError, what: str) -> None:
        """Stop the run after a failed write; keep the first message."""
        if self.stats.storage_error is None:
            full = exc.errno == errno.ENOSPC
            reason = "no space left on device" if full else exc.strerror or str(exc)
            where = f" ({exc.filename})" if exc.filename else ""
            self.stats.storage_error = f"cannot write {what}{where}: {reason}"
        self.stop = True

    async def _finish(self, record: TrialRecord, cache: CacheEntry | None = None) -> None:
        """Hand ``record`` to the writer thread; return once it is on disk and counted.

        It is counted when written even if this trial is cancelled meanwhile (an
        interrupt's grace period ran out): a record on disk is always reported.
        """
        future = self.writer.submit(record, cache)
        future.add_done_callback(lambda done: self._written(record, done.result()))
        await asyncio.shield(future)

    def _written(self, record: TrialRecord, written: Written) -> None:
        # the one place a written record is counted (atomic and fsynced: it is the product)
        if written.cache_error is not None:
            self._storage_failed(written.cache_error, f"the cache entry of {record.trial_id}")
        if written.record_error is not None:
            self._storage_failed(written.record_error, f"the record of {record.trial_id}")
            return
        st = self.stats
        if record.status == "ok":
            st.ok += 1
        else:
            st.failed += 1
            if record.raw_response is not None and record.error == EMPTIED_BY_REASONING:
                st.emptied_by_reasoning += 1
                st.count_failure("reply emptied by reasoning (max_tokens reached)", record.trial_id)
        if record.cached:
            st.cached += 1
        self.progress.trial_finished(record.model, record.status == "ok")
        st.parse_status[record.parse_status] = st.parse_status.get(record.parse_status, 0) + 1
        self.refresh_display()

    def _account(self, response: ModelResponse | None, cost: float | None) -> float | None:
        """Count a paid response's tokens and cost (already settled on the meter); None: a
        failed call, whose refused replies may have been charged too."""
        if response is not None:
            self.stats.input_tokens += response.usage.input_tokens or 0
            self.stats.output_tokens += response.usage.output_tokens or 0
            if cost is None:
                self.stats.unpriced += 1
        self.stats.spend_usd = self.meter.spent_usd
        if self.meter.exhausted and not self.stop:
            self.stop = True
            self.stats.stopped_by_budget = True
        return cost

    def pending(self, trials: Iterable[Trial]) -> list[Trial]:
        """Trials without a record to keep (resume)."""
        return list(self._pending(trials, existing_status(self.options.out)))

    def _pending(self, trials: Iterable[Trial], have: Mapping[str, str]) -> Iterator[Trial]:
        """Trials without a record to keep, one at a time (the rest are counted as done)."""
        retry = self.options.run.retry_errors
        for trial in trials:
            if keeps_record(have.get(trial.trial_id), retry_errors=retry):
                self.stats.already_done += 1
                continue
            yield trial

    def _caches(self, trial: Trial) -> bool:
        # Offline backends answer deterministically for free: caching them buys nothing.
        return not model_declaration(trial.model, self.backends.get(trial.model)).offline

    def _cached_record(self, trial: Trial) -> TrialRecord | None:
        """The record of ``trial`` answered from the cache, if its answer is there."""
        if not self._caches(trial):
            return None
        response = self.cache.get(trial.key)
        if response is None:
            return None
        return self._record(trial, response, attempts=0, cost=0.0, cached=True)

    async def finish_from_cache(self, trial: Trial) -> bool:
        """Record ``trial`` from the cache if its answer is there; returns whether it was."""
        record = self._cached_record(trial)
        if record is not None:
            await self._finish(record)
        return record is not None

    async def finish_response(
        self,
        trial: Trial,
        response: ModelResponse,
        *,
        attempts: int,
        started_at: str,
        batch: bool = False,
        cost: float | None = None,
    ) -> None:
        """Cache, price, parse and record a fresh (paid) response.

        ``cost`` is what the client charged; a batch result (``batch=True``) is priced here.
        The answer is cached with its record (:mod:`facetlab.runner._writer`).
        """
        if batch:  # priced here, not by a client: its usage is checked here too
            request = trial.request()
            response, cost = self.client(trial.model).charge(response, request, batch=True)
        if self.options.secrets:
            response = dataclasses.replace(
                response, text=redact(response.text, self.options.secrets)
            )
        cache = None
        if self._caches(trial):  # written with its record: a link to it, where it is a file
            cache = functools.partial(self.cache.store, trial.key, response, batch=batch)
        cost = self._account(response, cost)
        try:
            record = self._record(
                trial, response, attempts=attempts, started_at=started_at, cost=cost, batch=batch
            )
        except Exception as exc:  # never outside the trial: the answer kept, the trial failed
            with contextlib.suppress(Exception):
                self.cache.put(trial.key, response, batch=batch)
            why = f"the reply could not be recorded ({describe(exc)}); it is kept in the cache"
            await self.finish_failure(trial, why, attempts=attempts, started_at=started_at)
            return
        await self._finish(record, cache)

    async def finish_failure(
        self, trial: Trial, error: str, *, attempts: int, started_at: str, cause: str | None = None
    ) -> None:
        """Record a trial that failed for good, with the provider's message.

        ``cause`` (a short category) is counted for the console's summary.
        """
        self.stats.count_failure(cause or error.split(":", 1)[0], trial.trial_id)
        await self._finish(
            self._record(trial, None, error=error, attempts=attempts, started_at=started_at)
        )

    def _record(
        self,
        trial: Trial,
        response: ModelResponse | None,
        *,
        attempts: int,
        error: str | None = None,
        started_at: str | None = None,
        cost: float | None = None,
        cached: bool = False,
        batch: bool = False,
    ) -> TrialRecord:
        """The record of a finished trial: a reply (parsed here) or a failure's ``error``."""
        backend = self.backends.get(trial.model)
        parsed = None
        if response is not None:
            parsed = safe_parse(self.suite, trial, response.text, self.options.run.parser)
            error = reply_error(response)
        finished = now_iso()
        # the form structured output took, where the server chose it
        form = backend.structured_format if backend and trial.output_schema is not None else None
        return TrialRecord.from_trial(
            trial,
            response=response,
            parsed=parsed,
            error=error,
            started_at=started_at or finished,
            finished_at=finished,
            backend=(backend.provider if backend else trial.model.partition("/")[0])
            + ("-batch" if batch else ""),
            provider=backend.provider if backend else None,
            model_id=backend.model if backend else None,
            attempts=attempts,
            cost_usd=cost,
            cached=cached,
            sweep=self.options.sweep,
            inputs=self._inputs(trial),
            params={**trial.sent_params().to_dict(), "structured_format": form}
            if form not in (None, "auto")
            else None,
        )

    async def run_trial(self, trial: Trial) -> None:
        """Answer one trial from the cache or by calling its backend (with retries); record it.

        Sweeps sharing a cache claim the trial's key first: one pays, the other
        waits and reads the answer from the cache.
        """
        if self.stop:
            self.stats.not_started += 1
            return
        if await self.finish_from_cache(trial):
            return
        await self.writer.room()  # a slow disk holds back new calls, not paid answers
        claim = self.cache.claim(trial.key) if self._caches(trial) else contextlib.nullcontext()
        async with self.limiter_of(trial.model).admission(), claim:
            if self.stop:
                self.stats.not_started += 1
            elif not await self.finish_from_cache(trial):  # another sweep may have paid
                await self._call(trial)

    async def _call(self, trial: Trial) -> None:
        """Ask the trial's model through its client (limits, retries, budget); record the outcome."""
        client = self.client(trial.model)
        request = trial.request()
        started_at = now_iso()
        try:
            self._calling += 1
            try:
                answer = await client.call(
                    request, tokens=self._estimate(trial), hooks=self._hooks_of(trial.model)
                )
            finally:
                self._calling -= 1
        except Stopped:  # no new call once stopped: no record, the next run asks again
            self.stats.not_started += 1
            return
        except BudgetExceededError:  # this call's worst case does not fit what is left
            self.stats.not_started += 1
            self.stats.stopped_by_budget = True
            self.stop = True
            return
        except CallFailed as failure:
            self._account(None, None)  # a refused 200 was charged: the budget sees it
            await self.finish_failure(
                trial, str(failure), attempts=failure.attempts, started_at=started_at,
                cause=failure.cause,
            )  # fmt: skip
            return
        await self.finish_response(
            trial, answer.response, attempts=answer.attempts, started_at=started_at,
            cost=answer.cost_usd,
        )  # fmt: skip

    def interrupt(self) -> None:
        """Stop starting calls; cancel those still in flight after the grace period.

        Called on the event loop's thread (signal handlers, :func:`call_soon_threadsafe`).
        A second interrupt cancels at once.
        """
        loop = asyncio.get_running_loop()
        if self.stats.interrupted:
            self._cancel_in_flight()
            return
        self.stats.interrupted = True
        self.stop = True
        self.refresh_display()
        loop.call_later(self.options.run.interrupt_grace_s, self._cancel_in_flight)

    def _cancel_in_flight(self) -> None:
        for task in list(self._live):
            task.cancel()

    async def run(self, trials: Iterable[Trial], *, via: Collector | None = None) -> RunStats:
        """Run every trial that has no record to keep; returns the stats of this run.

        Trials are admitted as they come, at most :data:`IN_FLIGHT_TRIALS` at once, and
        forgotten once recorded: a sweep of any size runs in bounded memory.
        ``via`` answers the pending trials another way (``--batch``:
        :func:`facetlab.runner.batch.run_batches`) through this executor's finish methods.
        """
        started = time.monotonic()
        if isinstance(trials, Sized):
            self.stats.total = len(trials)
        have = existing_status(self.options.out)
        if any(not model_declaration(m, b).offline for m, b in self.backends.items()):
            self.cache.reserve()  # room for the answers in flight if the disk fills up
        if self.display is not None:
            self.display.start()
        try:
            if via is not None:
                await via(self, list(self._pending(trials, have)))
            else:
                await self._stream(self._pending(trials, have))
        finally:
            try:
                await self.writer.close()
            finally:
                self.cache.release()
                kept = self.cache.save_unsaved()  # answers no cache write took: an emergency file
                if self.stats.storage_error is not None:
                    self.stats.storage_error += "; the run stopped there. " + (
                        kept or "Every answer paid for is kept (in the cache)"
                    )
                if self.display is not None:
                    self.display.stop()
                self.stats.elapsed_s = time.monotonic() - started
        return self.stats

    async def _stream(self, todo: Iterator[Trial]) -> None:
        """Admit trials lazily, a bounded number at once; re-raise the first unexpected error."""
        room = asyncio.Semaphore(IN_FLIGHT_TRIALS)

        def done(task: asyncio.Future[None]) -> None:
            self._live.discard(task)
            room.release()
            if not task.cancelled() and (exc := task.exception()) is not None:
                if self._error is None:
                    self._error = exc
                self.stop = True

        for admitted, trial in enumerate(todo, 1):
            if self.stop:  # nothing new starts: the rest are left for the next run
                self.stats.not_started += 1
                continue
            await room.acquire()
            task = asyncio.ensure_future(self.run_trial(trial))
            self._live.add(task)
            task.add_done_callback(done)
            if admitted % ADMIT_STEP == 0:  # let the first trials start calling meanwhile
                await asyncio.sleep(0)
        if self._live:
            await asyncio.gather(*self._live, return_exceptions=True)
        if self._error is not None:
            raise self._error

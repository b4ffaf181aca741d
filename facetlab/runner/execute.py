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
fails (full disk) stops the run the same way: the answer is cached before its
record is written, so a resume pays nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

import facetlab
from facetlab.backends._common import redact
from facetlab.backends.base import Backend, ModelRequest, ModelResponse
from facetlab.errors import ConfigError
from facetlab.models import canonical_model
from facetlab.probes import WEIGHTED_PROBES
from facetlab.probes.base import EMPTY_REPLY, ParseResult, is_blank
from facetlab.records.inputs import trial_inputs
from facetlab.records.own import record_statuses, write_record
from facetlab.records.schema import TrialRecord, Usage, prompt_sha256, residuals
from facetlab.runner.cache import ResponseCache
from facetlab.runner.limits import Limits, ProviderLimiter
from facetlab.runner.plan import ProbeSuite, Trial, weight_estimates
from facetlab.runner.pricing import cost_usd, split_model
from facetlab.runner.progress import Progress, ProgressDisplay, RunStats
from facetlab.runner.retry import RetryPolicy, describe, is_rate_limit, is_transient, retry_after_of
from facetlab.timestamps import now_iso

UNCACHED_PROVIDERS = frozenset({"replay", "simulated"})


Collector = Callable[["Executor", Sequence[Trial]], Awaitable[None]]
"""Answers pending trials through an executor (the batch path)."""


class _Stopped(Exception):
    """Raised instead of a call once the run is stopping (never retried, never recorded)."""


@dataclass(frozen=True)
class ExecOptions:
    """How to run (not what): limits, retries, cache, budget."""

    out: Path
    limits: Mapping[str, Limits] = field(default_factory=dict)
    """Per provider; providers not listed get ``default_limits``."""
    default_limits: Limits = field(default_factory=Limits)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    cache_dir: Path | None = None
    """Default: ``<out>/cache``."""
    budget_usd: float | None = None
    retry_errors: bool = False
    parser: str = "strict"
    timeout_s: float | None = 600.0
    sweep: str | None = None
    """The sweep's name, stored in every record."""
    rng_seed: int | None = None
    """Seed of the backoff jitter (tests); None draws from the OS."""
    interrupt_grace_s: float = 5.0
    """After an interrupt, how long calls in flight may still finish before they are cancelled."""
    secrets: tuple[str, ...] = ()
    """Known key values, removed from every stored reply (a provider may echo a header)."""


def records_dir(out: Path) -> Path:
    """Where a sweep's records live: ``<out>/records``."""
    return out / "records"


def keeps_record(status: str | None, *, retry_errors: bool) -> bool:
    """Whether a trial's existing record stands (the trial is not run again).

    ``ok`` always does; ``failed`` does unless ``retry_errors``; no record never does.
    """
    return status == "ok" or (status == "failed" and not retry_errors)


def existing_status(out: Path) -> dict[str, str]:
    """``trial_id -> status`` of every readable record already in ``<out>/records``."""
    return record_statuses(records_dir(out))  # a bad file is reported, skipped, run again


def safe_parse(suite: ProbeSuite, trial: Trial, text: str, parser: str) -> ParseResult:
    """The probe's parse, or a ``malformed`` result if the parser itself broke."""
    if is_blank(text):
        return EMPTY_REPLY
    try:
        return suite.parse_reply(trial.probe, text, trial.instance, parser=parser)
    except Exception as exc:  # a parser bug must not lose the trial
        return ParseResult(status="malformed", problems=(f"parser error: {describe(exc)}",))


def build_record(
    trial: Trial,
    backend: Backend | None,
    *,
    response: ModelResponse | None,
    parsed: ParseResult | None,
    error: str | None,
    attempts: int,
    started_at: str,
    finished_at: str,
    cost: float | None,
    cached: bool,
    sweep: str | None,
    batch: bool = False,
) -> TrialRecord:
    """The :class:`TrialRecord` of one finished trial (ok or failed)."""
    provider, model_id = (
        (backend.provider, backend.model) if backend is not None else split_model(trial.model)
    )
    info = canonical_model(trial.model)
    estimates = weight_estimates(trial.instance) if trial.probe in WEIGHTED_PROBES else None
    residual = residuals(estimates, parsed.weights if parsed is not None else None)
    return TrialRecord(
        trial_id=trial.trial_id,
        sweep=sweep,
        probe=trial.probe,
        instance_id=trial.instance_id,
        base_instance_id=trial.base_instance_id,
        variant=trial.variant,
        factor_of_interest=trial.factor_of_interest,
        n_factors=trial.n_factors,
        repeat=trial.repeat,
        model=trial.model,
        provider=provider,
        model_id=model_id,
        model_id_reported=response.model_id if response is not None else None,
        canonical_model=info.display_name if info else None,
        backend=provider + ("-batch" if batch else ""),
        params=trial.params.to_dict(),
        template=trial.template,
        prompt=trial.prompt,
        prompt_sha256=prompt_sha256(trial.prompt),
        status="ok" if response is not None else "failed",
        error=error,
        attempts=attempts,
        raw_response=response.text if response is not None else None,
        parsed=parsed.to_parsed() if parsed is not None else ParseResult("not_parsed").to_parsed(),
        parse_status=parsed.status if parsed is not None else "not_parsed",
        weight_estimates=estimates,
        residual=residual,
        started_at=started_at,
        finished_at=finished_at,
        latency_s=response.latency_s if response is not None else None,
        usage=response.usage if response is not None else Usage(),
        cost_usd=cost,
        cached=cached,
        facetlab_version=facetlab.__version__,
        trial_seed=trial.seed,
        key=trial.key,
        stop_reason=response.stop_reason if response is not None else None,
        provider_request_id=response.provider_request_id if response is not None else None,
        refusal=response.refusal if response is not None else False,
        ground_truth=_yes_no_truth(trial.instance),
        inputs=trial_inputs(trial.instance, trial.base_instance, template=trial.template),
    )


def _yes_no_truth(instance: Any) -> str | None:
    """The instance's ground-truth answer when it is yes/no, so records of any domain score."""
    truth = getattr(getattr(instance, "ground_truth", None), "answer", None)
    answer = str(truth).strip().lower() if truth is not None else ""
    return answer if answer in ("yes", "no") else None


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
        self._limiters: dict[str, ProviderLimiter] = {}
        self._estimate = estimate_tokens or (lambda t: 0)
        self._rng = random.Random(options.rng_seed)
        self._tasks: list[asyncio.Future[None]] = []

    def limiter(self, provider: str) -> ProviderLimiter:
        """The one limiter of ``provider`` (its own limits, else the defaults)."""
        if provider not in self._limiters:
            lim = self.options.limits.get(provider, self.options.default_limits)
            self._limiters[provider] = ProviderLimiter(lim)
        return self._limiters[provider]

    def refresh_display(self) -> None:
        """Redraw live progress (also called by the batch collector while it polls)."""
        if self.display is not None:
            self.display.update()

    def _storage_failed(self, exc: OSError, what: str) -> None:
        """Stop the run after a failed write; keep the first message."""
        if self.stats.storage_error is None:
            reason = exc.strerror or str(exc)
            if exc.errno == errno.ENOSPC:
                reason = "no space left on device"
            where = f" ({exc.filename})" if exc.filename else ""
            self.stats.storage_error = f"cannot write {what}{where}: {reason}"
        self.stop = True

    def _finish(self, record: TrialRecord) -> None:
        # the one record writer (atomic and fsynced: a record is the sweep's product)
        try:
            write_record(record, records_dir(self.options.out))
        except OSError as exc:
            self._storage_failed(exc, f"the record of {record.trial_id}")
            return
        st = self.stats
        if record.status == "ok":
            st.ok += 1
        else:
            st.failed += 1
        if record.cached:
            st.cached += 1
        st.parse_status[record.parse_status] = st.parse_status.get(record.parse_status, 0) + 1
        self.refresh_display()

    def _account(
        self, trial: Trial, response: ModelResponse, *, batch: bool = False
    ) -> float | None:
        cost = cost_usd(
            trial.model, response.usage.input_tokens, response.usage.output_tokens, batch=batch
        )
        self.stats.input_tokens += response.usage.input_tokens or 0
        self.stats.output_tokens += response.usage.output_tokens or 0
        if cost is not None:
            self.stats.spend_usd += cost
        else:
            self.stats.unpriced += 1
        budget = self.options.budget_usd
        if budget is not None and self.stats.spend_usd >= budget and not self.stop:
            self.stop = True
            self.stats.stopped_by_budget = True
        return cost

    def pending(self, trials: Sequence[Trial]) -> list[Trial]:
        """Trials without a record to keep (resume)."""
        have = existing_status(self.options.out)
        todo: list[Trial] = []
        for trial in trials:
            if keeps_record(have.get(trial.trial_id), retry_errors=self.options.retry_errors):
                self.stats.already_done += 1
                continue
            todo.append(trial)
        return todo

    def _caches(self, trial: Trial) -> bool:
        # Offline backends answer deterministically for free: caching them buys nothing.
        return split_model(trial.model)[0] not in UNCACHED_PROVIDERS

    def finish_from_cache(self, trial: Trial) -> bool:
        """Record ``trial`` from the cache if its answer is there; returns whether it was."""
        if not self._caches(trial):
            return False
        response = self.cache.get(trial.key)
        if response is None:
            return False
        stamp = now_iso()
        parsed = safe_parse(self.suite, trial, response.text, self.options.parser)
        backend = self.backends.get(trial.model)
        self._finish(
            build_record(
                trial,
                backend,
                response=response,
                parsed=parsed,
                error=None,
                attempts=0,
                started_at=stamp,
                finished_at=stamp,
                cost=0.0,
                cached=True,
                sweep=self.options.sweep,
            )
        )
        return True

    def finish_response(
        self,
        trial: Trial,
        response: ModelResponse,
        *,
        attempts: int,
        started_at: str,
        batch: bool = False,
    ) -> None:
        """Cache, price, parse and record a fresh (paid) response."""
        if self.options.secrets:
            response = dataclasses.replace(
                response, text=redact(response.text, self.options.secrets)
            )
        if self._caches(trial):
            try:
                self.cache.put(trial.key, response, batch=batch)
            except OSError as exc:
                self._storage_failed(exc, f"the cache entry of {trial.trial_id}")
        cost = self._account(trial, response, batch=batch)
        parsed = safe_parse(self.suite, trial, response.text, self.options.parser)
        self._finish(
            build_record(
                trial,
                self.backends.get(trial.model),
                response=response,
                parsed=parsed,
                error=None,
                attempts=attempts,
                started_at=started_at,
                finished_at=now_iso(),
                cost=cost,
                cached=False,
                sweep=self.options.sweep,
                batch=batch,
            )
        )

    def finish_failure(self, trial: Trial, error: str, *, attempts: int, started_at: str) -> None:
        """Record a trial that failed for good, with the provider's message."""
        self._finish(
            build_record(
                trial,
                self.backends.get(trial.model),
                response=None,
                parsed=None,
                error=error,
                attempts=attempts,
                started_at=started_at,
                finished_at=now_iso(),
                cost=None,
                cached=False,
                sweep=self.options.sweep,
            )
        )

    async def run_trial(self, trial: Trial) -> None:
        """Answer one trial from the cache or by calling its backend (with retries); record it.

        Sweeps sharing a cache claim the trial's key first: one pays, the other
        waits and reads the answer from the cache.
        """
        if self.stop:
            self.stats.not_started += 1
            return
        if self.finish_from_cache(trial):
            return
        backend = self.backends.get(trial.model)
        provider = backend.provider if backend is not None else trial.model
        claim = self.cache.claim(trial.key) if self._caches(trial) else contextlib.nullcontext()
        async with self.limiter(provider).admission(), claim:
            if self.stop:
                self.stats.not_started += 1
            elif not self.finish_from_cache(trial):  # another sweep may have paid meanwhile
                await self._call(trial)

    async def _call(self, trial: Trial) -> None:
        """Call the trial's backend with retries (``tenacity``); record the outcome."""
        backend = self.backends.get(trial.model)
        if backend is None:
            raise ConfigError(f"no backend for model {trial.model!r}")
        limiter = self.limiter(backend.provider)
        policy = self.options.retry
        request = ModelRequest(trial.prompt, trial.request_params(), trial.context())
        tokens = self._estimate(trial)
        started_at = now_iso()
        waiting = [False]  # between a failed attempt and the next: shown as "retrying"

        def retryable(error: BaseException) -> bool:
            return is_transient(error, backend) and not self._too_long(error)

        def before_sleep(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome is not None else None
            self.stats.retries += 1
            if error is not None and is_rate_limit(error):
                limiter.rate_limited()
                self.stats.rate_limited += 1
                retry_after = retry_after_of(error)
                if retry_after is not None:
                    limiter.pause(retry_after)
            waiting[0] = True
            self.progress.retrying += 1
            self.refresh_display()

        async def attempt_once() -> tuple[ModelResponse, float]:
            if waiting[0]:
                waiting[0] = False
                self.progress.retrying -= 1
            return await self._attempt(backend, limiter, request, tokens)

        attempts = 0
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(policy.max_attempts),
                wait=policy.tenacity_wait(self._rng),
                retry=retry_if_exception(retryable),
                before_sleep=before_sleep,
                reraise=True,
            ):
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    response, started = await attempt_once()
        except _Stopped:  # no new call once stopped: no record, the next run asks again
            self.stats.not_started += 1
            return
        except Exception as error:  # not CancelledError (a BaseException): that propagates
            self.finish_failure(
                trial, self._failure_message(error, backend, attempts),
                attempts=attempts, started_at=started_at,
            )  # fmt: skip
            return
        finally:
            if waiting[0]:
                self.progress.retrying -= 1
        limiter.accepted(started)
        self.finish_response(trial, response, attempts=attempts, started_at=started_at)

    async def _attempt(
        self, backend: Backend, limiter: ProviderLimiter, request: ModelRequest, tokens: int
    ) -> tuple[ModelResponse, float]:
        """One call within the provider's limits: the response and its start time."""
        timeout = self.options.timeout_s
        async with limiter.slot(tokens) as started:
            if self.stop:  # budget reached, interrupted or disk full
                raise _Stopped
            self.progress.in_flight += 1
            self.stats.calls += 1
            try:
                call = backend.agenerate(request)
                response = await (asyncio.wait_for(call, timeout) if timeout else call)
            except asyncio.CancelledError:
                self.stats.cancelled_in_flight += 1
                raise
            finally:
                self.progress.in_flight -= 1
        return response, started

    def _too_long(self, error: BaseException) -> bool:
        retry_after = retry_after_of(error)
        return retry_after is not None and retry_after > self.options.retry.max_retry_after_s

    def _failure_message(self, error: BaseException, backend: Backend, attempts: int) -> str:
        message = describe(error)
        if not is_transient(error, backend):
            return message
        if self._too_long(error):
            cap = self.options.retry.max_retry_after_s
            # a provider asking for an hour must not hold the sweep for an hour
            return (
                f"{message} (the provider asked to wait {retry_after_of(error):g}s "
                f"(retry-after), more than the cap of {cap:g}s: not retried; raise the cap "
                "with --max-retry-after or re-run later with --retry-errors)"
            )
        return f"{message} (gave up after {attempts} attempts)"

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
        loop.call_later(self.options.interrupt_grace_s, self._cancel_in_flight)

    def _cancel_in_flight(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def run(self, trials: Sequence[Trial], *, via: Collector | None = None) -> RunStats:
        """Run every trial that has no record to keep; returns the stats of this run.

        ``via`` answers the pending trials another way (``--batch``:
        :func:`facetlab.runner.batch.run_batches`) through this executor's finish methods.
        """
        started = time.monotonic()
        self.stats.total = len(trials)
        todo = self.pending(trials)
        if self.display is not None:
            self.display.start()
        try:
            if via is not None:
                await via(self, todo)
            else:
                self._tasks = [asyncio.ensure_future(self.run_trial(t)) for t in todo]
                results = await asyncio.gather(*self._tasks, return_exceptions=True)
                for outcome in results:
                    # a cancelled call after an interrupt is counted, not an error
                    if isinstance(outcome, BaseException) and not isinstance(
                        outcome, asyncio.CancelledError
                    ):
                        raise outcome
        finally:
            if self.display is not None:
                self.display.stop()
            self.stats.elapsed_s = time.monotonic() - started
        return self.stats

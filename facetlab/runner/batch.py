"""Provider batch APIs (``--batch``): Anthropic Message Batches, OpenAI Batch and Bedrock
batch inference, at the providers' batch rate.

Pending trials are submitted per model in batches; each batch's id and the
trials it carries are written to ``<out>/batches.json`` the moment the provider
accepts it, so no later process submits them again. A run submits, looks at the
open batches once (or for ``RunOptions.batch_wait_s``), collects the ended ones
and returns: ``facetlab collect DIR`` or a re-run of the same command collects
the rest. Results go through the same path as direct calls (cache, cost at the
batch rate, parse, atomic record); a request the provider failed, expired or
cancelled is recorded as a failed trial.

A poll that fails (HTTP 404: the provider no longer knows the batch; a reply
without a status; a malformed reply) is one console line; a batch whose polls keep
failing is left open for a later run after :data:`POLL_TROUBLE_LIMIT` tries. A run
without ``--batch`` refuses to pay for trials that sit in an open batch unless
``RunOptions.abandon_batches`` (``--abandon-batches``) is given.

Each provider's batch API is its adapter in :mod:`facetlab.backends.batch`, beside the
providers: a batch sends exactly what a direct call would.
"""

import asyncio
import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from facetlab.backends.batch import BatchAdapter, BatchReplyError, batch_adapter
from facetlab.errors import BackendError, ConfigError
from facetlab.files import atomic_write_text
from facetlab.runner.executor import Executor, existing_status, keeps_record
from facetlab.runner.plan import Trial
from facetlab.timestamps import now_iso

BATCHES_FILE = "batches.json"
BATCHES_FORMAT = "facetlab.batches/1"
MAX_PER_BATCH = 10_000
POLL_SECONDS = 30.0
POLL_TROUBLE_LIMIT = 3
"""Failed polls of one batch (in a row) after which a run leaves it open for a later run."""


class BatchState:
    """``<out>/batches.json``: every submitted batch, its trials and whether it was collected.

    A batch's ``state`` is ``submitted`` (open), ``collected`` or ``abandoned``.
    """

    def __init__(self, out: Path) -> None:
        self.path = out / BATCHES_FILE
        self.batches: list[dict[str, Any]] = []
        if self.path.is_file():
            try:
                self.batches = list(json.loads(self.path.read_text(encoding="utf-8"))["batches"])
                if not all(isinstance(b, dict) and isinstance(b.get("trials"), dict)
                           for b in self.batches):  # fmt: skip
                    raise ValueError("a batch without its trials")
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{self.path}: unreadable batch state ({exc})") from exc

    def save(self) -> None:
        doc = {"format": BATCHES_FORMAT, "batches": self.batches}
        atomic_write_text(self.path, json.dumps(doc, indent=1) + "\n")

    def open_batches(self) -> list[dict[str, Any]]:
        return [b for b in self.batches if b.get("state") == "submitted"]


def _say(console: TextIO | None, text: str) -> None:
    print(text, file=console if console is not None else sys.stderr, flush=True)


def _one_line(exc: BaseException, adapter: BatchAdapter) -> str:
    """An exception as one short line (the provider's message, as its backend maps it)."""
    text = ""
    if not isinstance(exc, BatchReplyError | ConfigError):
        try:
            text = str(adapter.backend.map_error(exc))
        except Exception:  # a mapper that cannot read this exception: fall back below
            text = ""
    text = text or str(exc) or type(exc).__name__
    line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return line[:300]


def _is_gone(exc: BaseException) -> bool:
    """Whether a poll error says the provider does not know the batch (HTTP 404)."""
    status = exc.status if isinstance(exc, BackendError) else getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        if isinstance(response, dict):  # botocore ClientError
            status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
            if (response.get("Error") or {}).get("Code") == "ResourceNotFoundException":
                status = 404
    return status == 404


def _abandon(state: BatchState, entries: Sequence[dict[str, Any]]) -> str:
    """Mark ``entries`` abandoned (the provider may still finish and bill them); their ids."""
    for entry in entries:
        entry.update(state="abandoned", abandoned_at=now_iso())
    state.save()
    return ", ".join(b["id"] for b in entries)


def settle_open_batches(
    out: Path, trials: Iterable[Trial], *, abandon: bool, console: TextIO | None = None
) -> None:
    """Before a run without ``--batch``: refuse to pay for trials sitting in an open batch.

    With ``abandon`` the open batches holding such trials are marked ``abandoned`` (the
    provider may still finish and bill them) and the trials run here.
    """
    state = BatchState(out)
    opened = state.open_batches()
    if not opened:  # the usual case: no need to scan the records folder
        return
    have = existing_status(out)
    pending = {
        t.trial_id for t in trials if not keeps_record(have.get(t.trial_id), retry_errors=False)
    }
    holding = [b for b in opened if pending & set(b["trials"].values())]
    if not holding:
        return
    count = len(pending & {tid for b in holding for tid in b["trials"].values()})
    if not abandon:
        raise ConfigError(
            f"{count} trial(s) of this sweep sit in {len(holding)} open provider batch(es) "
            f"({state.path}): collect them with `facetlab collect {out}` (or re-run with "
            "--batch), or re-run with --abandon-batches to pay for them again here"
        )
    ids = _abandon(state, holding)
    _say(
        console,
        f"abandoned {len(holding)} open batch(es) holding {count} trial(s) (the provider may "
        f"still bill them: cancel them in its console): {ids}",
    )


async def run_batches(
    executor: Executor,
    trials: Sequence[Trial],
    poll_s: float | None = None,
    *,
    wait_s: float | None = 0.0,
    submit: bool = True,
    abandon: bool = False,
    console: TextIO | None = None,
) -> None:
    """Submit what is not yet submitted, then collect the open batches of this sweep.

    Open batches are looked at once and collected if they ended; with ``wait_s`` they
    are polled every ``poll_s`` for up to ``wait_s`` seconds (``None``: until every one
    ended). ``submit=False`` only collects (``facetlab collect``); ``abandon`` first
    marks this run's open batches abandoned, so their trials are submitted anew.
    """
    state = BatchState(executor.options.out)
    if abandon:
        dropped = [b for b in state.open_batches() if b.get("model") in executor.backends]
        if dropped:
            _say(console, f"abandoned {len(dropped)} open batch(es): {_abandon(state, dropped)}")
    waiting = {tid for b in state.open_batches() for tid in b["trials"].values()}
    fresh: dict[str, list[Trial]] = {}
    for trial in trials:
        if trial.trial_id in waiting or await executor.finish_from_cache(trial):
            continue
        fresh.setdefault(trial.model, []).append(trial)
    if submit:
        await _submit_all(executor, fresh, state, console)
    else:
        executor.stats.not_started += sum(len(v) for v in fresh.values())
    await _poll(executor, state, {t.trial_id: t for t in trials}, wait_s, poll_s, console)


async def _submit_all(
    executor: Executor,
    fresh: dict[str, list[Trial]],
    state: BatchState,
    console: TextIO | None,
) -> None:
    """Submit the trials of each model in batches; each recorded in ``batches.json`` at once."""
    # every provider's batch settings checked before the first upload to any of them
    adapters = {model: batch_adapter(executor.backends[model]) for model in fresh}
    for model, todo in fresh.items():
        adapter = adapters[model]
        provider = adapter.backend.provider
        for start in range(0, len(todo), MAX_PER_BATCH):
            chunk = todo[start : start + MAX_PER_BATCH]
            if executor.stop:
                break
            ids = (
                [f"R{n:010d}" for n in range(1, len(chunk) + 1)]
                if adapter.short_record_ids
                else [t.key for t in chunk]
            )
            if len(chunk) < adapter.min_records:
                _say(console, f"note: {len(chunk)} trial(s) of {model} in one batch; "
                              f"{provider} may refuse a job below its minimum of records (by "
                              f"default {adapter.min_records}): its trials are then recorded "
                              "failed with the provider's message")  # fmt: skip
            items = [(cid, t.request()) for cid, t in zip(ids, chunk, strict=True)]
            try:
                batch_id = await adapter.submit(items)
            except (BackendError, ConfigError):
                raise
            except Exception as exc:  # one line with the provider's message
                raise BackendError(
                    f"--batch: submitting {len(items)} request(s) to {provider} failed: "
                    f"{_one_line(exc, adapter)}",
                    provider=provider,
                ) from None
            state.batches.append(
                {"id": batch_id, "provider": provider, "model": model,
                 "submitted_at": now_iso(), "state": "submitted",
                 "trials": {cid: t.trial_id for cid, t in zip(ids, chunk, strict=True)}}
            )  # fmt: skip
            state.save()  # persisted at once: a restart collects instead of resubmitting
            _say(console, f"submitted {len(chunk)} trial(s) of {model} as batch {batch_id}")


async def _poll(
    executor: Executor,
    state: BatchState,
    by_id: dict[str, Trial],
    wait_s: float | None,
    poll_s: float | None,
    console: TextIO | None,
) -> None:
    """Look at this sweep's open batches (every ``poll_s`` for up to ``wait_s`` seconds);
    collect the ended ones. A batch whose polls keep failing is left for a later run."""
    poll = POLL_SECONDS if poll_s is None else poll_s
    deadline = None if wait_s is None else time.monotonic() + wait_s
    troubles: dict[str, int] = {}
    adapters: dict[str, BatchAdapter] = {}
    ours = [b for b in state.open_batches() if b.get("model") in executor.backends]
    while ours:
        still_open = 0
        for entry in ours:
            if executor.stats.interrupted or executor.stats.storage_error:
                return  # the batch stays open in batches.json; the next run collects it
            if troubles.get(entry["id"], 0) >= POLL_TROUBLE_LIMIT:
                continue
            model = entry["model"]
            adapter = adapters.setdefault(model, batch_adapter(executor.backends[model]))
            still_open += await _poll_one(executor, adapter, entry, by_id, state, troubles, console)
        ours = [b for b in ours if b.get("state") == "submitted"]
        if not still_open or (deadline is not None and time.monotonic() + poll > deadline):
            break
        executor.progress.in_flight = sum(len(b["trials"]) for b in ours)
        executor.refresh_display()
        await asyncio.sleep(poll)
    executor.progress.in_flight = 0
    for entry in ours:
        if 0 < troubles.get(entry["id"], 0) < POLL_TROUBLE_LIMIT:  # said once, not per poll
            _say(console, f"batch {entry['id']} ({entry['model']}): poll failed "
                          f"({entry.get('last_error')}); left open")  # fmt: skip
    if ours:
        _say(
            console,
            f"{sum(len(b['trials']) for b in ours)} trial(s) wait in {len(ours)} open batch(es) "
            f"(listed in {state.path}); collect them with `facetlab collect "
            f"{executor.options.out}` or by re-running this command",
        )


async def _poll_one(
    executor: Executor,
    adapter: BatchAdapter,
    entry: dict[str, Any],
    by_id: dict[str, Trial],
    state: BatchState,
    troubles: dict[str, int],
    console: TextIO | None,
) -> int:
    """Poll one batch and collect it if it ended; 1 while it is open and worth polling."""
    where = f"batch {entry['id']} ({entry['model']})"
    later = f"left open for a later `facetlab collect {executor.options.out}`"
    try:
        ended = await adapter.ended(entry["id"])
    except Exception as exc:  # one line each; never a traceback per resume
        entry["last_error"] = line = _one_line(exc, adapter)
        state.save()
        gone = _is_gone(exc)
        troubles[entry["id"]] = POLL_TROUBLE_LIMIT if gone else troubles.get(entry["id"], 0) + 1
        if gone:
            _say(console, f"{where}: the provider does not know it (HTTP 404: {line}); its "
                          f"{len(entry['trials'])} trial(s) stay open: re-run with "
                          "--abandon-batches to run them again")  # fmt: skip
        elif troubles[entry["id"]] >= POLL_TROUBLE_LIMIT:
            _say(console, f"{where}: {POLL_TROUBLE_LIMIT} polls failed ({line}); {later}")
        return int(troubles[entry["id"]] < POLL_TROUBLE_LIMIT)
    troubles.pop(entry["id"], None)
    if not ended:
        return 1
    try:
        await _collect(executor, adapter, entry, by_id)
    except Exception as exc:  # results unreadable now: keep the batch open
        troubles[entry["id"]] = POLL_TROUBLE_LIMIT
        entry["last_error"] = _one_line(exc, adapter)
        _say(console, f"{where}: ended, but its results could not be read "
                      f"({entry['last_error']}); {later}")  # fmt: skip
    state.save()
    return 0


async def _collect(
    executor: Executor, adapter: BatchAdapter, entry: dict[str, Any], by_id: dict[str, Trial]
) -> None:
    """Record every trial of an ended batch (a missing result is a failed trial)."""
    results = await adapter.results(entry["id"], list(entry["trials"]))
    started = entry["submitted_at"]
    seen: set[str] = set()
    for res in results:
        done = by_id.get(entry["trials"].get(res.custom_id, ""))
        if done is None or res.custom_id in seen:
            continue
        seen.add(res.custom_id)
        if res.response is not None:
            await executor.finish_response(
                done, res.response, attempts=1, started_at=started, batch=True
            )
        else:
            await executor.finish_failure(
                done, res.error or "batch request failed", attempts=1, started_at=started
            )
    for cid, tid in entry["trials"].items():
        missing = by_id.get(tid)
        if cid not in seen and missing is not None:
            error = f"batch {entry['id']} returned no result for this request"
            await executor.finish_failure(missing, error, attempts=1, started_at=started)
    entry.update(state="collected", collected_at=now_iso())
    entry.pop("last_error", None)

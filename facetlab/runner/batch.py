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

The SDK clients come from the backends (``backend.client``; Bedrock's control plane
and S3 from ``backend.batch_clients()``), and request bodies from
``backend.request_body``, so a batch sends exactly what a direct call would.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from facetlab.backends._common import MalformedReplyError, get_field
from facetlab.backends.base import Backend, ModelRequest, ModelResponse, declaration_of
from facetlab.errors import BackendError, ConfigError
from facetlab.files import atomic_write_text
from facetlab.runner.execute import Executor, existing_status, keeps_record
from facetlab.runner.plan import Trial
from facetlab.timestamps import now_iso

BATCHES_FILE = "batches.json"
BATCHES_FORMAT = "facetlab.batches/1"
MAX_PER_BATCH = 10_000
POLL_SECONDS = 30.0
POLL_TROUBLE_LIMIT = 3
"""Failed polls of one batch (in a row) after which a run leaves it open for a later run."""


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome inside a batch: a response or an error message."""

    custom_id: str
    response: ModelResponse | None
    error: str | None = None


class BatchGone(Exception):
    """The provider does not know the batch (HTTP 404): polling again will not help."""


class BatchReplyError(Exception):
    """A poll's reply carries no usable status."""


def _succeeded(backend: Any, custom_id: str, message: Any) -> BatchResult:
    """A succeeded request's result; a malformed reply becomes a failed one."""
    try:
        return BatchResult(custom_id, backend.response_from_message(message))
    except MalformedReplyError as exc:
        return BatchResult(custom_id, None, f"batch request returned a malformed reply: {exc}")


def _status(reply: Any, name: str, ended: Sequence[str], running: Sequence[str]) -> bool:
    """Whether a batch's status field says it ended; a missing or unknown one raises."""
    if isinstance(reply, str | bytes):  # the SDK hands back a body it could not parse
        raise BatchReplyError(f"the reply is not a batch object: {str(reply)[:60]!r}")
    value = get_field(reply, name)
    if not isinstance(value, str):
        shown = "missing" if value is None else f"a {type(value).__name__}"
        raise BatchReplyError(f"the reply's {name} is {shown}")
    if value in ended:
        return True
    if value in running:
        return False
    raise BatchReplyError(f"unknown {name} {value[:60]!r}")


class BatchAdapter(Protocol):
    """One provider's batch API."""

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str: ...

    async def ended(self, batch_id: str) -> bool: ...

    async def results(self, batch_id: str, custom_ids: Sequence[str]) -> list[BatchResult]: ...


class AnthropicBatch:
    """Message Batches: ``client.messages.batches`` (create / retrieve / results)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.client = backend.client

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str:
        requests = [
            {"custom_id": cid, "params": self.backend.request_body(req)} for cid, req in items
        ]
        batch = await self.client.messages.batches.create(requests=requests)
        return str(batch.id)

    async def ended(self, batch_id: str) -> bool:
        batch = await self.client.messages.batches.retrieve(batch_id)
        return _status(batch, "processing_status", ("ended",), ("in_progress", "canceling"))

    async def results(self, batch_id: str, custom_ids: Sequence[str]) -> list[BatchResult]:
        out: list[BatchResult] = []
        stream = await self.client.messages.batches.results(batch_id)
        async for entry in stream:
            result = entry.result
            kind = str(get_field(result, "type"))
            if kind == "succeeded":
                out.append(_succeeded(self.backend, entry.custom_id, get_field(result, "message")))
            else:
                err = get_field(get_field(result, "error"), "error")
                message = get_field(err, "message") or kind
                out.append(BatchResult(entry.custom_id, None, f"batch request {kind}: {message}"))
        return out


class OpenAIBatch:
    """OpenAI Batch: a JSONL file of chat.completions requests, ``client.batches``."""

    endpoint = "/v1/chat/completions"
    finished = ("completed", "failed", "expired", "cancelled")
    running = ("validating", "in_progress", "finalizing", "cancelling")

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.client = backend.client

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str:
        lines = [
            json.dumps(
                {
                    "custom_id": cid,
                    "method": "POST",
                    "url": self.endpoint,
                    "body": self.backend.request_body(req),
                },
                ensure_ascii=False,
            )
            for cid, req in items
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        upload = await self.client.files.create(
            file=("facetlab-batch.jsonl", io.BytesIO(data)), purpose="batch"
        )
        batch = await self.client.batches.create(
            input_file_id=upload.id, endpoint=self.endpoint, completion_window="24h"
        )
        return str(batch.id)

    async def ended(self, batch_id: str) -> bool:
        batch = await self.client.batches.retrieve(batch_id)
        return _status(batch, "status", self.finished, self.running)

    async def results(self, batch_id: str, custom_ids: Sequence[str]) -> list[BatchResult]:
        batch = await self.client.batches.retrieve(batch_id)
        out: list[BatchResult] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self.client.files.content(file_id)
            for line in content.text.splitlines():
                if not line.strip():
                    continue
                entry = json.loads(line)
                cid = str(entry.get("custom_id"))
                response = entry.get("response") or {}
                status = response.get("status_code")
                if status == 200 and not entry.get("error"):
                    out.append(_succeeded(self.backend, cid, response["body"]))
                else:
                    err = entry.get("error") or (response.get("body") or {}).get("error") or {}
                    message = err.get("message") if isinstance(err, dict) else str(err)
                    out.append(
                        BatchResult(cid, None, f"batch request failed (HTTP {status}): {message}")
                    )
        if batch.status in ("failed", "expired", "cancelled") and not out:
            errors = getattr(batch, "errors", None)
            raise BackendError(
                f"OpenAI batch {batch_id} {batch.status}: {errors}", provider="openai"
            )
        return out


class BedrockBatch:
    """Bedrock batch inference: a model invocation job reading and writing JSONL in S3.

    Each request is one ``{"recordId", "modelInput"}`` line (``modelInput`` is the
    Converse request body: the job is created with ``modelInvocationType="Converse"``),
    uploaded to ``<batch_s3>/<job name>/input.jsonl``; Bedrock writes
    ``{"recordId", "modelInput", "modelOutput" | "error"}`` lines under
    ``<batch_s3>/<job name>/output/<job id>/``. The job runs as ``batch_role``, an
    IAM role Bedrock assumes to read and write that S3 location.
    """

    min_records = 100
    """Bedrock's default minimum of records per job (a per-model quota): fewer is warned."""
    short_record_ids = True
    """Bedrock's guide asks for 11-character alphanumeric ``recordId`` s: ``R0000000001`` …,
    mapped to their trials in ``batches.json``."""
    finished = ("Completed", "PartiallyCompleted", "Failed", "Stopped", "Expired")
    running = ("Submitted", "Validating", "Scheduled", "InProgress", "Stopping")

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.s3_uri, self.role = backend.batch_location()  # ConfigError before any upload
        self.control, self.s3 = backend.batch_clients()
        self._jobs: dict[str, dict[str, Any]] = {}

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str:
        name = f"facetlab-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
        lines = []
        for cid, req in items:
            body = dict(self.backend.request_body(req))
            body.pop("modelId", None)  # the job names the model
            lines.append(json.dumps({"recordId": cid, "modelInput": body}, ensure_ascii=False))
        bucket, prefix = split_s3_uri(self.s3_uri)
        base = f"{prefix}{name}/"
        data = ("\n".join(lines) + "\n").encode("utf-8")
        await asyncio.to_thread(
            self.s3.put_object, Bucket=bucket, Key=f"{base}input.jsonl", Body=data
        )
        reply = await asyncio.to_thread(
            self.control.create_model_invocation_job,
            jobName=name,
            roleArn=self.role,
            clientRequestToken=name,  # a retried create does not start a second job
            modelId=self.backend.model,
            modelInvocationType="Converse",
            inputDataConfig={
                "s3InputDataConfig": {
                    "s3Uri": f"s3://{bucket}/{base}input.jsonl",
                    "s3InputFormat": "JSONL",
                }
            },
            outputDataConfig={"s3OutputDataConfig": {"s3Uri": f"s3://{bucket}/{base}output/"}},
        )
        return str(reply["jobArn"])

    async def _job(self, job_arn: str) -> dict[str, Any]:
        job = await asyncio.to_thread(self.control.get_model_invocation_job, jobIdentifier=job_arn)
        self._jobs[job_arn] = dict(job)
        return self._jobs[job_arn]

    async def ended(self, batch_id: str) -> bool:
        return _status(await self._job(batch_id), "status", self.finished, self.running)

    async def results(self, batch_id: str, custom_ids: Sequence[str]) -> list[BatchResult]:
        job = self._jobs.get(batch_id) or await self._job(batch_id)
        out_uri = ((job.get("outputDataConfig") or {}).get("s3OutputDataConfig") or {}).get("s3Uri")
        if not isinstance(out_uri, str):
            raise BatchReplyError("the job has no outputDataConfig.s3OutputDataConfig.s3Uri")
        bucket, prefix = split_s3_uri(out_uri)
        job_id = batch_id.rsplit("/", 1)[-1]
        where = f"{prefix}{job_id}/"
        out: list[BatchResult] = []
        for key in await asyncio.to_thread(self._output_keys, bucket, where):
            obj = await asyncio.to_thread(self.s3.get_object, Bucket=bucket, Key=key)
            text = obj["Body"].read().decode("utf-8", "replace")
            out += [self._line(line) for line in text.splitlines() if line.strip()]
        seen = {r.custom_id for r in out}
        status = job.get("status")
        if status != "Completed":
            why = f"bedrock batch job {status}: {job.get('message') or 'no message'}"
            out += [BatchResult(cid, None, why) for cid in custom_ids if cid not in seen]
        return out

    def _output_keys(self, bucket: str, prefix: str) -> list[str]:
        keys: list[str] = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            keys += [
                str(o["Key"]) for o in page.get("Contents") or [] if o["Key"].endswith(".jsonl.out")
            ]
        return sorted(keys)

    def _line(self, line: str) -> BatchResult:
        from facetlab.backends.bedrock import response_from_converse

        try:
            entry = json.loads(line)
        except ValueError:
            return BatchResult("", None, "bedrock batch output: a line that is not JSON")
        if not isinstance(entry, dict):
            return BatchResult("", None, "bedrock batch output: a line that is not an object")
        cid = str(entry.get("recordId"))
        output, error = entry.get("modelOutput"), entry.get("error")
        if isinstance(output, dict) and not error:
            try:
                return BatchResult(cid, response_from_converse(output, model_id=self.backend.model))
            except (AttributeError, TypeError, ValueError) as exc:
                return BatchResult(cid, None, f"batch request returned a malformed reply: {exc}")
        err = error if isinstance(error, dict) else {}
        code = err.get("errorCode", "?")
        return BatchResult(
            cid, None, f"batch request failed ({code}): {err.get('errorMessage') or error}"
        )


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> ``("bucket", "some/prefix/")``; else a ConfigError.

    >>> split_s3_uri("s3://my-bucket/facetlab/batches")
    ('my-bucket', 'facetlab/batches/')
    """
    if not uri.startswith("s3://") or not uri[5:].split("/", 1)[0]:
        raise ConfigError(f"S3 location {uri!r}: expected s3://<bucket>/<prefix>")
    bucket, _, prefix = uri[5:].partition("/")
    prefix = prefix.strip("/")
    return bucket, f"{prefix}/" if prefix else ""


BATCH_APIS: dict[str, Any] = {
    "anthropic": AnthropicBatch,
    "openai": OpenAIBatch,
    "bedrock": BedrockBatch,
}
"""The provider batch APIs facetlab speaks, by the name a backend declares (``batch_api``)."""


def adapter_for(backend: Backend) -> BatchAdapter:
    """The batch API of a backend's provider, or a ConfigError."""
    api = declaration_of(backend).batch_api
    if api in BATCH_APIS and hasattr(backend, "client"):
        adapter: BatchAdapter = BATCH_APIS[api](backend)
        return adapter
    raise ConfigError(
        f"--batch: provider {backend.provider!r} has no batch API in facetlab "
        f"(supported: {', '.join(BATCH_APIS)}); run without --batch"
    )


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

    def in_flight_trials(self) -> set[str]:
        return {tid for b in self.open_batches() for tid in b["trials"].values()}


def _say(console: TextIO | None, text: str) -> None:
    print(text, file=console if console is not None else sys.stderr, flush=True)


def _one_line(exc: BaseException, backend: Backend | None = None) -> str:
    """An exception as one short line (the provider's message where the backend maps it)."""
    mapper = getattr(backend, "map_error", None)
    text = ""
    if not isinstance(exc, BatchReplyError | BatchGone | ConfigError) and callable(mapper):
        try:
            text = str(mapper(exc))
        except Exception:  # a mapper that cannot read this exception: fall back below
            text = ""
    text = text or str(exc) or type(exc).__name__
    line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return line[:300]


def _is_gone(exc: BaseException) -> bool:
    """Whether a poll error says the provider does not know the batch (HTTP 404)."""
    if isinstance(exc, BatchGone):
        return True
    status = exc.status if isinstance(exc, BackendError) else getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        if isinstance(response, dict):  # botocore ClientError
            status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
            if (response.get("Error") or {}).get("Code") == "ResourceNotFoundException":
                status = 404
    return status == 404


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
    for entry in holding:
        entry["state"] = "abandoned"
        entry["abandoned_at"] = now_iso()
    state.save()
    _say(
        console,
        f"abandoned {len(holding)} open batch(es) holding {count} trial(s) (the provider may "
        f"still bill them: cancel them in its console): {', '.join(b['id'] for b in holding)}",
    )


async def _submit(
    adapter: BatchAdapter, backend: Backend, items: Sequence[tuple[str, ModelRequest]]
) -> str:
    """Submit one batch; a failure is one BackendError line with the provider's message."""
    try:
        return await adapter.submit(items)
    except (BackendError, ConfigError):
        raise
    except Exception as exc:
        raise BackendError(
            f"--batch: submitting {len(items)} request(s) to {backend.provider} failed: "
            f"{_one_line(exc, backend)}",
            provider=backend.provider,
        ) from None


async def _collect(
    executor: Executor,
    adapter: BatchAdapter,
    entry: dict[str, Any],
    by_id: dict[str, Trial],
    state: BatchState,
) -> None:
    """Record every trial of an ended batch (a missing result is a failed trial)."""
    results = await adapter.results(entry["id"], list(entry["trials"]))
    seen: set[str] = set()
    for res in results:
        tid = entry["trials"].get(res.custom_id)
        done = by_id.get(tid) if tid else None
        if done is None or res.custom_id in seen:
            continue
        seen.add(res.custom_id)
        if res.response is not None:
            executor.finish_response(
                done, res.response, attempts=1, started_at=entry["submitted_at"], batch=True
            )
        else:
            executor.finish_failure(
                done,
                res.error or "batch request failed",
                attempts=1,
                started_at=entry["submitted_at"],
            )
    for cid, tid in entry["trials"].items():
        missing = by_id.get(tid)
        if cid not in seen and missing is not None:
            executor.finish_failure(
                missing,
                f"batch {entry['id']} returned no result for this request",
                attempts=1,
                started_at=entry["submitted_at"],
            )
    entry["state"] = "collected"
    entry["collected_at"] = now_iso()
    entry.pop("last_error", None)
    state.save()


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
    poll = POLL_SECONDS if poll_s is None else poll_s
    out = executor.options.out
    state = BatchState(out)
    by_id = {t.trial_id: t for t in trials}
    if abandon:
        dropped = [b for b in state.open_batches() if b.get("model") in executor.backends]
        for entry in dropped:
            entry["state"] = "abandoned"
            entry["abandoned_at"] = now_iso()
        if dropped:
            state.save()
            _say(console, f"abandoned {len(dropped)} open batch(es): "
                          f"{', '.join(b['id'] for b in dropped)}")  # fmt: skip
    waiting = state.in_flight_trials()
    fresh: dict[str, list[Trial]] = {}
    for trial in trials:
        if trial.trial_id in waiting or executor.finish_from_cache(trial):
            continue
        fresh.setdefault(trial.model, []).append(trial)
    if not submit:
        executor.stats.not_started += sum(len(v) for v in fresh.values())
        fresh = {}
    # every provider's batch settings checked before the first upload to any of them
    submitters = {model: adapter_for(executor.backends[model]) for model in fresh}
    for model, todo in fresh.items():
        backend = executor.backends[model]
        adapter = submitters[model]
        for start in range(0, len(todo), MAX_PER_BATCH):
            chunk = todo[start : start + MAX_PER_BATCH]
            if executor.stop:
                break
            ids = (
                [f"R{n:010d}" for n in range(1, len(chunk) + 1)]
                if getattr(adapter, "short_record_ids", False)
                else [t.key for t in chunk]
            )
            items = [
                (cid, ModelRequest(t.prompt, t.request_params(), t.context()))
                for cid, t in zip(ids, chunk, strict=True)
            ]
            least = getattr(adapter, "min_records", 0)
            if len(chunk) < least:
                _say(console, f"note: {len(chunk)} trial(s) of {model} in one batch; "
                              f"{backend.provider} may refuse a job below its minimum of "
                              f"records (by default {least}): its trials are then recorded "
                              "failed with the provider's message")  # fmt: skip
            batch_id = await _submit(adapter, backend, items)
            state.batches.append(
                {
                    "id": batch_id,
                    "provider": backend.provider,
                    "model": model,
                    "submitted_at": now_iso(),
                    "state": "submitted",
                    "trials": {cid: t.trial_id for cid, t in zip(ids, chunk, strict=True)},
                }
            )
            state.save()  # persisted at once: a restart collects instead of resubmitting
            _say(console, f"submitted {len(chunk)} trial(s) of {model} as batch {batch_id}")
    deadline = None if wait_s is None else time.monotonic() + wait_s
    troubles: dict[str, int] = {}
    adapters: dict[str, BatchAdapter] = {}
    while True:
        polling = [
            b for b in state.open_batches()
            if b.get("model") in executor.backends and troubles.get(b["id"], 0) < POLL_TROUBLE_LIMIT
        ]  # fmt: skip
        still_open = 0
        for entry in polling:
            if executor.stats.interrupted or executor.stats.storage_error:
                return  # the batch stays open in batches.json; the next run collects it
            owner = executor.backends[entry["model"]]
            adapter = adapters.get(entry["model"]) or adapter_for(owner)
            adapters[entry["model"]] = adapter
            try:
                ended = await adapter.ended(entry["id"])
            except Exception as exc:  # one line each; never a traceback per resume
                gone = _is_gone(exc)
                troubles[entry["id"]] = (
                    POLL_TROUBLE_LIMIT if gone else troubles.get(entry["id"], 0) + 1
                )
                line = _one_line(exc, owner)
                entry["last_error"] = line
                state.save()
                if gone:
                    _say(console, f"batch {entry['id']} ({entry['model']}): the provider does "
                                  f"not know it (HTTP 404: {line}); its {len(entry['trials'])} "
                                  "trial(s) stay open: re-run with --abandon-batches to run them "
                                  "again")  # fmt: skip
                elif troubles[entry["id"]] >= POLL_TROUBLE_LIMIT:
                    _say(console, f"batch {entry['id']} ({entry['model']}): {POLL_TROUBLE_LIMIT} "
                                  f"polls failed ({line}); left open for a later "
                                  f"`facetlab collect {out}`")  # fmt: skip
                else:
                    still_open += 1
                continue
            troubles.pop(entry["id"], None)
            if not ended:
                still_open += 1
                continue
            try:
                await _collect(executor, adapter, entry, by_id, state)
            except Exception as exc:  # results unreadable now: keep the batch open
                troubles[entry["id"]] = POLL_TROUBLE_LIMIT
                entry["last_error"] = _one_line(exc, owner)
                state.save()
                _say(console, f"batch {entry['id']} ({entry['model']}): ended, but its results "
                              f"could not be read ({entry['last_error']}); left open for a "
                              f"later `facetlab collect {out}`")  # fmt: skip
        if not still_open or (deadline is not None and time.monotonic() + poll > deadline):
            break
        executor.progress.in_flight = sum(len(b["trials"]) for b in state.open_batches())
        executor.refresh_display()
        await asyncio.sleep(poll)
    executor.progress.in_flight = 0
    for entry in state.open_batches():
        if 0 < troubles.get(entry["id"], 0) < POLL_TROUBLE_LIMIT:  # said once, not per poll
            _say(console, f"batch {entry['id']} ({entry['model']}): poll failed "
                          f"({entry.get('last_error')}); left open")  # fmt: skip
    left = [b for b in state.open_batches() if b.get("model") in executor.backends]
    if left:
        count = sum(len(b["trials"]) for b in left)
        _say(
            console,
            f"{count} trial(s) wait in {len(left)} open batch(es) (listed in {state.path}); "
            f"collect them with `facetlab collect {out}` or by re-running this command",
        )

"""Provider batch APIs, beside their providers: Anthropic Message Batches, OpenAI Batch and
Bedrock batch inference. A backend declares which one it answers through
(``Declaration.batch_api``); :func:`batch_adapter` gives it.

An adapter sends exactly what a direct call would (the backend's ``request_body``),
reads replies with the backend's own reader, and maps a failure to the provider's
message (``map_error``). What the runner does with them (``batches.json``, submit,
poll, collect) is :mod:`facetlab.runner.batch`.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from facetlab.backends._common import MalformedReplyError, SDKBackend, get_field
from facetlab.backends.base import Backend, ModelRequest, ModelResponse
from facetlab.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from facetlab.backends.bedrock import BedrockBackend

BATCH_APIS = ("anthropic", "openai", "bedrock")
"""The provider batch APIs facetlab speaks, by the name a backend declares (``batch_api``)."""


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome inside a batch: a response or an error message."""

    custom_id: str
    response: ModelResponse | None
    error: str | None = None


class BatchReplyError(Exception):
    """A poll's reply carries no usable status."""


class BatchAdapter(Protocol):
    """One provider's batch API, for one backend."""

    @property
    def backend(self) -> SDKBackend[Any] | BedrockBackend:
        """The backend whose requests, replies and errors the batch carries."""
        ...

    min_records: int
    """The fewest requests a batch may hold (fewer are warned about, not refused)."""
    short_record_ids: bool
    """Requests are named ``R0000000001``... (mapped to their trials in ``batches.json``)
    instead of by their trial's key."""

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str: ...

    async def ended(self, batch_id: str) -> bool: ...

    async def results(self, batch_id: str, custom_ids: Sequence[str]) -> list[BatchResult]: ...


def _succeeded(backend: SDKBackend[Any], custom_id: str, message: Any) -> BatchResult:
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


class _SDKBatch:
    """A batch API reached through the backend's own SDK client."""

    min_records = 0
    short_record_ids = False

    def __init__(self, backend: SDKBackend[Any]) -> None:
        self.backend = backend
        self.client = backend.client


class AnthropicBatch(_SDKBatch):
    """Message Batches: ``client.messages.batches`` (create / retrieve / results)."""

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str:
        requests = [
            {"custom_id": cid, "params": self.backend.request_body(req)} for cid, req in items
        ]
        batch = await self.client.messages.batches.create(requests=requests)
        return str(batch.id)

    async def ended(self, batch_id: str) -> bool:
        return _status(
            await self.client.messages.batches.retrieve(batch_id),
            "processing_status",
            ("ended",),
            ("in_progress", "canceling"),
        )

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


class OpenAIBatch(_SDKBatch):
    """OpenAI Batch: a JSONL file of chat.completions requests, ``client.batches``."""

    endpoint = "/v1/chat/completions"
    finished = ("completed", "failed", "expired", "cancelled")
    running = ("validating", "in_progress", "finalizing", "cancelling")

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
        upload = await self.client.files.create(
            file=("facetlab-batch.jsonl", io.BytesIO(("\n".join(lines) + "\n").encode("utf-8"))),
            purpose="batch",
        )
        batch = await self.client.batches.create(
            input_file_id=upload.id, endpoint=self.endpoint, completion_window="24h"
        )
        return str(batch.id)

    async def ended(self, batch_id: str) -> bool:
        return _status(
            await self.client.batches.retrieve(batch_id), "status", self.finished, self.running
        )

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

    def __init__(self, backend: BedrockBackend) -> None:
        self.backend = backend
        self.s3_uri, self.role = backend.batch_location()  # ConfigError before any upload
        self.control, self.s3 = backend.batch_clients()
        self._jobs: dict[str, dict[str, Any]] = {}

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str:
        name = f"facetlab-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
        lines = [  # without its modelId: the job names the model
            json.dumps(
                {
                    "recordId": cid,
                    "modelInput": {
                        k: v for k, v in self.backend.request_body(req).items() if k != "modelId"
                    },
                },
                ensure_ascii=False,
            )
            for cid, req in items
        ]
        bucket, prefix = split_s3_uri(self.s3_uri)
        base = f"{prefix}{name}/"
        await asyncio.to_thread(
            self.s3.put_object,
            Bucket=bucket,
            Key=f"{base}input.jsonl",
            Body=("\n".join(lines) + "\n").encode("utf-8"),
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
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(
            str(o["Key"])
            for page in pages
            for o in page.get("Contents") or []
            if o["Key"].endswith(".jsonl.out")
        )

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
        return BatchResult(
            cid,
            None,
            f"batch request failed ({err.get('errorCode', '?')}): {err.get('errorMessage') or error}",
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


def batch_adapter(backend: Backend) -> BatchAdapter:
    """The batch API a backend declares, or a ConfigError."""
    api = backend.declaration.batch_api
    adapter: BatchAdapter | None = None
    if api == "bedrock":
        from facetlab.backends.bedrock import BedrockBackend

        adapter = BedrockBatch(backend) if isinstance(backend, BedrockBackend) else None
    elif api in ("anthropic", "openai") and isinstance(backend, SDKBackend):
        adapter = AnthropicBatch(backend) if api == "anthropic" else OpenAIBatch(backend)
    if adapter is None:
        raise ConfigError(
            f"--batch: provider {backend.provider!r} has no batch API in facetlab "
            f"(supported: {', '.join(BATCH_APIS)}); run without --batch"
        )
    return adapter

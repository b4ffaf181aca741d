"""Provider batch APIs (``--batch``): Anthropic Message Batches and OpenAI Batch, half price.

Pending trials are submitted per model in batches; each batch's id and the
trials it carries are written to ``<out>/batches.json`` the moment the provider
accepts it, so a restarted process does not submit them again: it polls the
open batches and collects their results. Results go through the same path as
direct calls (cache, cost at the batch rate, parse, atomic record); a request
the provider failed, expired or cancelled is recorded as a failed trial.

The SDK clients come from the backends (``backend.client``), and request bodies
from ``backend.request_body``, so a batch sends exactly what a direct call would.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from facetlab.backends._common import MalformedReplyError, get_field
from facetlab.backends.base import Backend, ModelRequest, ModelResponse, declaration_of
from facetlab.errors import BackendError, ConfigError
from facetlab.files import atomic_write_text
from facetlab.runner.execute import Executor
from facetlab.runner.plan import Trial
from facetlab.timestamps import now_iso

BATCHES_FILE = "batches.json"
BATCHES_FORMAT = "facetlab.batches/1"
MAX_PER_BATCH = 10_000
POLL_SECONDS = 30.0


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome inside a batch: a response or an error message."""

    custom_id: str
    response: ModelResponse | None
    error: str | None = None


def _succeeded(backend: Any, custom_id: str, message: Any) -> BatchResult:
    """A succeeded request's result; a malformed reply becomes a failed one."""
    try:
        return BatchResult(custom_id, backend.response_from_message(message))
    except MalformedReplyError as exc:
        return BatchResult(custom_id, None, f"batch request returned a malformed reply: {exc}")


class BatchAdapter(Protocol):
    """One provider's batch API."""

    async def submit(self, items: Sequence[tuple[str, ModelRequest]]) -> str: ...

    async def ended(self, batch_id: str) -> bool: ...

    async def results(self, batch_id: str) -> list[BatchResult]: ...


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
        return str(batch.processing_status) == "ended"

    async def results(self, batch_id: str) -> list[BatchResult]:
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
        return str(batch.status) in ("completed", "failed", "expired", "cancelled")

    async def results(self, batch_id: str) -> list[BatchResult]:
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


BATCH_APIS: dict[str, type[AnthropicBatch] | type[OpenAIBatch]] = {
    "anthropic": AnthropicBatch,
    "openai": OpenAIBatch,
}
"""The provider batch APIs facetlab speaks, by the name a backend declares (``batch_api``)."""


def adapter_for(backend: Backend) -> BatchAdapter:
    """The batch API of a backend's provider, or a ConfigError."""
    api = declaration_of(backend).batch_api
    if api in BATCH_APIS and hasattr(backend, "client"):
        return BATCH_APIS[api](backend)
    raise ConfigError(
        f"--batch: provider {backend.provider!r} has no batch API in facetlab "
        "(supported: anthropic, openai); run without --batch"
    )


class BatchState:
    """``<out>/batches.json``: every submitted batch, its trials and whether it was collected."""

    def __init__(self, out: Path) -> None:
        self.path = out / BATCHES_FILE
        self.batches: list[dict[str, Any]] = []
        if self.path.is_file():
            try:
                self.batches = list(json.loads(self.path.read_text(encoding="utf-8"))["batches"])
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{self.path}: unreadable batch state ({exc})") from exc

    def save(self) -> None:
        doc = {"format": BATCHES_FORMAT, "batches": self.batches}
        atomic_write_text(self.path, json.dumps(doc, indent=1) + "\n")

    def open_batches(self) -> list[dict[str, Any]]:
        return [b for b in self.batches if b.get("state") == "submitted"]

    def in_flight_trials(self) -> set[str]:
        return {tid for b in self.open_batches() for tid in b["trials"].values()}


async def _submit(
    adapter: BatchAdapter, backend: Backend, items: Sequence[tuple[str, ModelRequest]]
) -> str:
    """Submit one batch; a failure is one BackendError line with the provider's message."""
    try:
        return await adapter.submit(items)
    except BackendError:
        raise
    except Exception as exc:
        mapper = getattr(backend, "map_error", None)
        detail = str(mapper(exc)) if callable(mapper) else f"{type(exc).__name__}: {exc}"
        raise BackendError(
            f"--batch: submitting {len(items)} request(s) to {backend.provider} failed: "
            f"{detail.splitlines()[0] if detail else type(exc).__name__}",
            provider=backend.provider,
        ) from None


async def run_batches(
    executor: Executor, trials: Sequence[Trial], poll_s: float | None = None
) -> None:
    """Submit what is not yet submitted, then collect every open batch of this sweep."""
    poll = POLL_SECONDS if poll_s is None else poll_s
    state = BatchState(executor.options.out)
    by_id = {t.trial_id: t for t in trials}
    waiting = state.in_flight_trials()
    fresh: dict[str, list[Trial]] = {}
    for trial in trials:
        if trial.trial_id in waiting or executor.finish_from_cache(trial):
            continue
        fresh.setdefault(trial.model, []).append(trial)
    for model, todo in fresh.items():
        backend = executor.backends[model]
        adapter = adapter_for(backend)
        for start in range(0, len(todo), MAX_PER_BATCH):
            chunk = todo[start : start + MAX_PER_BATCH]
            if executor.stop:
                break
            items = [
                (t.key, ModelRequest(t.prompt, t.request_params(), t.context())) for t in chunk
            ]
            batch_id = await _submit(adapter, backend, items)
            state.batches.append(
                {
                    "id": batch_id,
                    "provider": backend.provider,
                    "model": model,
                    "submitted_at": now_iso(),
                    "state": "submitted",
                    "trials": {t.key: t.trial_id for t in chunk},
                }
            )
            state.save()  # persisted at once: a restart collects instead of resubmitting
    for entry in state.open_batches():
        owner = executor.backends.get(entry["model"])
        if owner is None:
            continue  # a batch of another model of this sweep dir; left for its own run
        adapter = adapter_for(owner)
        while not await adapter.ended(entry["id"]):
            if executor.stats.interrupted or executor.stats.storage_error:
                # the batch stays open in batches.json; the next run collects it
                return
            executor.progress.in_flight = sum(len(b["trials"]) for b in state.open_batches())
            executor.refresh_display()
            await asyncio.sleep(poll)
        results = await adapter.results(entry["id"])
        seen: set[str] = set()
        for res in results:
            tid = entry["trials"].get(res.custom_id)
            done = by_id.get(tid) if tid else None
            if done is None:
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
        state.save()
    executor.progress.in_flight = 0

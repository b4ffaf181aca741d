"""``--batch`` against local fakes of the Anthropic Message Batches and OpenAI Batch APIs.

The fakes sit under the real SDK clients (an ``httpx2.MockTransport``), so the
runner's batch code drives the real ``anthropic`` / ``openai`` clients exposed by
facetlab's backends. A batch whose collection is interrupted is collected, not
resubmitted, by the next run.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from test_runner_helpers import StubSuite, make_instances

from facetlab.backends.anthropic import AnthropicBackend
from facetlab.backends.base import SamplingParams
from facetlab.backends.openai import OpenAIBackend
from facetlab.runner import RunOptions, arun, run

BATCH = RunOptions(batch=True, batch_poll_s=0.01, batch_wait_s=None)

REPLY = "F1: 5, F2: 60, F3: 35\nno"


class FakeAnthropicBatches:
    """Message Batches: create, retrieve (ends after ``polls`` polls), results (JSONL)."""

    def __init__(self, polls: int = 1, fail_ids: int = 1) -> None:
        self.polls = polls
        self.fail_ids = fail_ids
        self.batches: dict[str, dict[str, Any]] = {}
        self.creates = 0
        self.retrieves = 0

    def _obj(self, bid: str) -> dict[str, Any]:
        b = self.batches[bid]
        ended = b["polls"] >= self.polls
        return {
            "id": bid, "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
            "created_at": "2026-04-01T00:00:00Z", "expires_at": "2026-04-02T00:00:00Z",
            "ended_at": "2026-04-01T00:01:00Z" if ended else None,
            "archived_at": None, "cancel_initiated_at": None,
            "results_url": f"https://api.anthropic.com/v1/messages/batches/{bid}/results" if ended else None,
        }  # fmt: skip

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages/batches":
            self.creates += 1
            bid = f"msgbatch_{self.creates:03d}"
            body = json.loads(request.content)
            self.batches[bid] = {"requests": body["requests"], "polls": 0}
            return httpx2.Response(200, json=self._obj(bid))
        if request.method == "GET" and path.endswith("/results"):
            bid = path.split("/")[-2]
            lines = []
            for i, req in enumerate(self.batches[bid]["requests"]):
                if i < self.fail_ids:
                    result = {"type": "errored", "error": {"type": "error", "error": {
                        "type": "invalid_request_error", "message": "prompt is too long"}}}  # fmt: skip
                else:
                    result = {"type": "succeeded", "message": {
                        "id": f"msg_{i}", "type": "message", "role": "assistant",
                        "model": req["params"]["model"], "content": [{"type": "text", "text": REPLY}],
                        "stop_reason": "end_turn", "stop_sequence": None,
                        "usage": {"input_tokens": 1000, "output_tokens": 100}}}  # fmt: skip
                lines.append(json.dumps({"custom_id": req["custom_id"], "result": result}))
            return httpx2.Response(200, content=("\n".join(lines) + "\n").encode())
        if request.method == "GET" and path.startswith("/v1/messages/batches/"):
            self.retrieves += 1
            bid = path.split("/")[-1]
            self.batches[bid]["polls"] += 1
            return httpx2.Response(200, json=self._obj(bid))
        return httpx2.Response(
            404, json={"type": "error", "error": {"type": "not_found_error", "message": path}}
        )


class FakeOpenAIBatches:
    """OpenAI Batch: files upload, batches create/retrieve, output file content."""

    def __init__(self) -> None:
        self.files: dict[str, list[dict[str, Any]]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.creates = 0

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/files":
            text = request.content.decode("utf-8", "replace")
            lines = [json.loads(x) for x in text.splitlines() if x.startswith('{"custom_id"')]
            fid = f"file-in-{len(self.files)}"
            self.files[fid] = lines
            return httpx2.Response(200, json={"id": fid, "object": "file", "bytes": len(text),
                                               "created_at": 0, "filename": "x.jsonl", "purpose": "batch"})  # fmt: skip
        if request.method == "POST" and path == "/v1/batches":
            self.creates += 1
            body = json.loads(request.content)
            bid = f"batch_{self.creates}"
            self.batches[bid] = {"input": body["input_file_id"]}
            return httpx2.Response(200, json=self._obj(bid, "in_progress"))
        if request.method == "GET" and path.startswith("/v1/batches/"):
            bid = path.split("/")[-1]
            return httpx2.Response(200, json=self._obj(bid, "completed"))
        if request.method == "GET" and path.endswith("/content"):
            bid = path.split("/")[-2].removeprefix("file-out-")
            out = []
            for i, line in enumerate(self.files[self.batches[bid]["input"]]):
                completion = {
                    "id": f"c{i}", "object": "chat.completion", "created": 0, "model": line["body"]["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": REPLY}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
                }  # fmt: skip
                out.append(json.dumps({"id": f"r{i}", "custom_id": line["custom_id"],
                                       "response": {"status_code": 200, "request_id": "x", "body": completion},
                                       "error": None}))  # fmt: skip
            return httpx2.Response(200, content=("\n".join(out) + "\n").encode())
        return httpx2.Response(404, json={"error": {"message": path}})

    def _obj(self, bid: str, status: str) -> dict[str, Any]:
        return {
            "id": bid, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
            "input_file_id": self.batches[bid]["input"], "completion_window": "24h", "status": status,
            "output_file_id": f"file-out-{bid}" if status == "completed" else None,
            "error_file_id": None, "created_at": 0,
        }  # fmt: skip


def _anthropic(fake: FakeAnthropicBatches) -> AnthropicBackend:
    client = anthropic.AsyncAnthropic(
        api_key="k", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handler)),
    )  # fmt: skip
    return AnthropicBackend("claude-sonnet-4-6", client=client)


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))]


def test_anthropic_batch_records_results_at_half_price(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(polls=2, fail_ids=1)
    model = "anthropic/claude-sonnet-4-6"
    result = run(make_instances(), "p1,p2,p3,c2", model, out=tmp_path, backends={model: _anthropic(fake)},
                 suite=StubSuite(), options=BATCH, progress="none", console=io.StringIO())  # fmt: skip
    assert fake.creates == 1 and fake.retrieves >= 2
    recs = _records(tmp_path)
    assert len(recs) == 12 and result.stats.ok == 11 and result.stats.failed == 1
    failed = next(r for r in recs if r["status"] == "failed")
    assert "errored" in failed["error"] and "prompt is too long" in failed["error"]
    ok = next(r for r in recs if r["status"] == "ok")
    # Sonnet at $3 / $15 per 1M, halved for batches
    assert ok["cost_usd"] == pytest.approx((1000 * 3 + 100 * 15) / 1e6 * 0.5)
    assert ok["backend"] == "anthropic-batch" and ok["parsed"]["weights"]["F2"] == 60.0
    state = json.loads((tmp_path / "batches.json").read_text())
    assert [b["state"] for b in state["batches"]] == ["collected"]
    # the sweep folder reads back as records (sweep.json, batches.json, cache/ are skipped)
    from facetlab.records import read_records

    assert len(read_records(tmp_path)) == 12


@pytest.mark.slow
def test_interrupted_batch_is_collected_not_resubmitted(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(polls=10**9, fail_ids=0)  # never ends during the first run
    model = "anthropic/claude-sonnet-4-6"
    kwargs: dict[str, Any] = dict(suite=StubSuite(), options=BATCH,
                                  progress="none", console=io.StringIO())  # fmt: skip

    async def first() -> None:
        await arun(make_instances(), "p2,p3,c2", model, out=tmp_path,
                   backends={model: _anthropic(fake)}, **kwargs)  # fmt: skip

    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(asyncio.wait_for(first(), 0.5))
    state = json.loads((tmp_path / "batches.json").read_text())
    assert [b["state"] for b in state["batches"]] == ["submitted"] and fake.creates == 1
    assert not (tmp_path / "records").exists() or not _records(tmp_path)

    fake.polls = 0  # the provider finishes the batch meanwhile
    result = run(make_instances(), "p2,p3,c2", model, out=tmp_path,
                 backends={model: _anthropic(fake)}, **kwargs)  # fmt: skip
    assert fake.creates == 1  # collected, not submitted again
    assert result.stats.ok == 8 and len(_records(tmp_path)) == 8


def test_openai_batch(tmp_path: Path) -> None:
    fake = FakeOpenAIBatches()
    client = openai.AsyncOpenAI(
        api_key="k", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handler)),
    )  # fmt: skip
    model = "openai/gpt-5.4"
    backend = OpenAIBackend("gpt-5.4", client=client)
    result = run(make_instances(), "p2,p3,c2", model, out=tmp_path, backends={model: backend},
                 suite=StubSuite(), options=BATCH, sampling=SamplingParams(temperature=0.0),
                 progress="none", console=io.StringIO())  # fmt: skip
    assert fake.creates == 1 and result.stats.ok == 8
    sent = next(iter(fake.files.values()))
    assert len(sent) == 8 and all(line["body"]["temperature"] == 0.0 for line in sent)
    recs = _records(tmp_path)
    assert all(r["cost_usd"] == pytest.approx((1000 * 2.5 + 100 * 15) / 1e6 * 0.5) for r in recs)
    # a second run pays nothing and submits nothing
    again = run(make_instances(), "p2,p3,c2", model, out=tmp_path, backends={model: backend},
                suite=StubSuite(), options=BATCH, sampling=SamplingParams(temperature=0.0),
                progress="none", console=io.StringIO())  # fmt: skip
    assert fake.creates == 1 and again.stats.already_done == 8


def test_batch_on_unsupported_provider_is_a_config_error(tmp_path: Path) -> None:
    from test_runner_helpers import ScriptedBackend

    from facetlab.errors import ConfigError

    backend = ScriptedBackend(provider="bedrock", model="deepseek.v3.2")
    with pytest.raises(ConfigError, match="no batch API"):
        run(make_instances(), "p2", "bedrock/deepseek.v3.2", out=tmp_path,
            backends={"bedrock/deepseek.v3.2": backend}, suite=StubSuite(), options=RunOptions(batch=True),
            progress="none", console=io.StringIO())  # fmt: skip

"""Open provider batches: a run returns after submitting, a re-run without ``--batch``
refuses to pay for their trials unless told to abandon them, and polls that fail
(HTTP 404, a reply without ``processing_status``, a malformed reply) cost one line
each and a bounded wait, never a traceback or an endless poll.

The Anthropic Message Batches fake of ``test_runner_batch`` sits under the real SDK.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from test_runner_batch import FakeAnthropicBatches
from test_runner_helpers import ScriptedBackend, StubSuite, make_instances

from facetlab.backends.anthropic import AnthropicBackend
from facetlab.errors import ConfigError
from facetlab.runner import RunOptions, arun, run

MODEL = "anthropic/claude-sonnet-4-6"
PROBES = "p2,p3,c2"  # 8 trials on make_instances()


def _backend(handler: Callable[[httpx2.Request], httpx2.Response]) -> AnthropicBackend:
    client = anthropic.AsyncAnthropic(
        api_key="k", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )  # fmt: skip
    return AnthropicBackend("claude-sonnet-4-6", client=client)


def _run(out: Path, backend: Any, options: RunOptions, console: io.StringIO) -> Any:
    return run(make_instances(), PROBES, MODEL, out=out, backends={MODEL: backend},
               suite=StubSuite(), options=options, progress="none", console=console)  # fmt: skip


def _state(out: Path) -> list[dict[str, Any]]:
    return list(json.loads((out / "batches.json").read_text())["batches"])


def _records(out: Path) -> list[Path]:
    return sorted((out / "records").glob("*.json")) if (out / "records").is_dir() else []


def test_batch_run_returns_after_submitting_and_collect_records(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(polls=10**9, fail_ids=1)  # not ended while the run looks
    console = io.StringIO()
    first = _run(tmp_path, _backend(fake.handler), RunOptions(batch=True), console)
    said = console.getvalue()
    assert fake.creates == 1 and first.stats.ok == 0 and not _records(tmp_path)
    assert "submitted 8 trial(s) of anthropic/claude-sonnet-4-6 as batch msgbatch_001" in said
    assert f"collect them with `facetlab collect {tmp_path}`" in said
    assert [b["state"] for b in _state(tmp_path)] == ["submitted"]

    fake.polls = 0  # the provider finished meanwhile: collect submits nothing
    collect = RunOptions(batch=True, batch_submit=False)
    done = _run(tmp_path, _backend(fake.handler), collect, io.StringIO())
    assert fake.creates == 1 and done.stats.ok == 7 and done.stats.failed == 1
    assert len(_records(tmp_path)) == 8
    assert [b["state"] for b in _state(tmp_path)] == ["collected"]


def test_rerun_without_batch_refuses_to_pay_for_trials_in_an_open_batch(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(polls=10**9)
    _run(tmp_path, _backend(fake.handler), RunOptions(batch=True), io.StringIO())
    direct = ScriptedBackend(provider="anthropic", model="claude-sonnet-4-6")
    with pytest.raises(ConfigError, match=r"8 trial\(s\) of this sweep sit in 1 open provider"):
        _run(tmp_path, direct, RunOptions(), io.StringIO())
    assert not direct.calls and not _records(tmp_path)

    console = io.StringIO()
    result = _run(tmp_path, direct, RunOptions(abandon_batches=True), console)
    assert result.stats.ok == 8 and len(direct.calls) == 8
    assert [b["state"] for b in _state(tmp_path)] == ["abandoned"]
    assert "abandoned 1 open batch(es) holding 8 trial(s)" in console.getvalue()
    # nothing left open: a plain re-run pays nothing and is not refused
    again = _run(tmp_path, direct, RunOptions(), io.StringIO())
    assert again.stats.already_done == 8 and len(direct.calls) == 8


class Broken(FakeAnthropicBatches):
    """Accepts the batch, then answers every poll with ``reply``."""

    def __init__(self, reply: httpx2.Response) -> None:
        super().__init__(polls=10**9)
        self.reply = reply

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and request.url.path.startswith("/v1/messages/batches/"):
            self.retrieves += 1
            return self.reply
        return super().handler(request)


def _no_status() -> httpx2.Response:
    obj = {"id": "msgbatch_001", "type": "message_batch", "created_at": "2026-04-01T00:00:00Z",
           "expires_at": "2026-04-02T00:00:00Z"}  # fmt: skip
    return httpx2.Response(200, json=obj)


BROKEN_POLLS = {
    "404": (
        lambda: httpx2.Response(
            404,
            json={
                "type": "error",
                "error": {"type": "not_found_error", "message": "batch not found"},
            },
        ),
        "does not know it (HTTP 404",
    ),
    "missing processing_status": (_no_status, "processing_status is missing"),
    "malformed reply": (
        lambda: httpx2.Response(
            200, content=b"<html>gateway</html>", headers={"content-type": "text/html"}
        ),
        "polls failed (the reply is not a batch object",
    ),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", list(BROKEN_POLLS))
def test_a_failing_poll_is_one_line_and_a_bounded_wait(tmp_path: Path, case: str) -> None:
    make_reply, expected = BROKEN_POLLS[case]
    fake = Broken(make_reply())
    # wait for the batch to end: today a reply without a status polls forever
    waiting = RunOptions(batch=True, batch_poll_s=0.01, batch_wait_s=None)

    async def go(console: io.StringIO) -> Any:
        return await arun(make_instances(), PROBES, MODEL, out=tmp_path,
                          backends={MODEL: _backend(fake.handler)}, suite=StubSuite(),
                          options=waiting, progress="none", console=console)  # fmt: skip

    for _ in range(2):  # the same on every resume
        console = io.StringIO()
        asyncio.run(asyncio.wait_for(go(console), 10))
        said = console.getvalue()
        assert "Traceback" not in said
        trouble = [line for line in said.splitlines() if "msgbatch_001 (" in line]
        assert len(trouble) == 1 and expected in trouble[0], said
        assert fake.retrieves <= 2 * 3  # at most POLL_TROUBLE_LIMIT polls per run
    assert fake.creates == 1 and not _records(tmp_path)
    (entry,) = _state(tmp_path)
    assert entry["state"] == "submitted" and entry["last_error"]


def test_collect_only_without_batch_is_refused() -> None:
    with pytest.raises(ConfigError, match="collect only"):
        RunOptions(batch_submit=False)

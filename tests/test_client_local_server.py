"""A local server with one slot (issue 27, item 2): llama.cpp's ``llama-server`` runs as
many requests at once as it has slots (``/props`` says ``total_slots``) and queues the
rest, and a queued request's wait counts against the client's timeout. Without ``-c``
facetlab holds such a server to its slots (or, where it publishes none, probes up from
two and takes back what only queued), so nothing times out and nothing is asked twice.
Counts, not timings: the fake's requests take 50 ms against a 3 s timeout
(``benchmarks/bench_client.py`` measures the 0.5 s server of the issue)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from fakes import EngineSpec, FakeEngine

from facetlab.backends import ModelRequest, get_backend
from facetlab.client import ModelClient
from facetlab.runner import RunOptions, run

TRIALS = 34
ONE_SLOT = EngineSpec(slots=1, step_s=0.002, output_tokens=(25, 25))  # 50 ms a request


def write_instances(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        factors = [
            {"factor_id": f"f{k}", "text": f"Factor {k} of case {i}.",
             "directionality": "toward_yes" if k % 2 else "toward_no"}
            for k in range(1, 4)
        ]  # fmt: skip
        instance = {
            "instance_id": f"local-{i:04d}", "doctrine": "local", "factors": factors,
            "case_background": f"Case {i}: a request to decide.",
            "question": "Should the request be granted?",
            "ground_truth": {"answer": "yes", "rationale": "local"},
        }  # fmt: skip
        (folder / f"local-{i:04d}.json").write_text(json.dumps(instance))
    return folder


def test_the_client_learns_the_slots_llama_cpp_publishes() -> None:
    spec = EngineSpec(slots=1, step_s=0.001, output_tokens=(2, 2), props=True)
    with FakeEngine(spec) as engine:
        client = ModelClient(get_backend("openai/smollm2", base_url=engine.openai_base_url))

        async def twice() -> None:
            await asyncio.gather(*(client.generate(ModelRequest(f"q{i}")) for i in range(2)))
            await client.aclose()

        asyncio.run(twice())
        held = engine.stats().max_in_server
    assert client.limiter.capacity == 1 and client.limiter.concurrency == 1
    assert held == 1  # the second request waited in the client, not in the server


@pytest.mark.slow  # a 34-trial sweep against a one-slot server
@pytest.mark.parametrize("publishes", [True, False], ids=["props", "no-props"])
def test_a_one_slot_server_is_not_flooded_without_c(tmp_path: Path, publishes: bool) -> None:
    instances = write_instances(tmp_path / "instances", TRIALS)
    spec = EngineSpec(**{**ONE_SLOT.__dict__, "props": publishes})
    with FakeEngine(spec, responder=lambda prompt: "F2\nIt decides the case.") as engine:
        result = run(
            instances, "p1", "openai/smollm2", base_url=engine.openai_base_url,
            out=tmp_path / "sweep", options=RunOptions(timeout_s=3), progress="none",
            console=io.StringIO(),
        )  # fmt: skip
        stats = engine.stats()
    assert result.stats.ok == TRIALS and result.stats.failed == 0
    assert stats.received == TRIALS and stats.aborted == 0  # nothing timed out, nothing twice
    # published: one at a time; otherwise at most the first probe's four (two waiting)
    assert stats.max_in_server == (1 if publishes else 4)


def test_any_backend_declares_its_slots_and_rate_signal_on_the_base_class() -> None:
    """``Backend`` declares ``server_slots`` and ``rate_signal`` with defaults: a custom
    backend that overrides them is heard; one that declares nothing is sized as before."""
    from facetlab.backends import Backend, ModelResponse
    from facetlab.backends.base import RateSignal

    class TwoSlots(Backend):
        provider, model = "custom", "two-slots"

        async def server_slots(self) -> int | None:
            return 2

        async def agenerate(self, request: ModelRequest) -> ModelResponse:
            self.rate_signal = RateSignal(limit_rpm=120.0)  # what its last reply said
            return ModelResponse(text="ok", model_id=self.model)

    class Plain(TwoSlots):
        async def server_slots(self) -> int | None:
            return await Backend.server_slots(self)  # the default: says nothing

    async def once(backend: Backend) -> ModelClient:
        client = ModelClient(backend)
        await client.generate(ModelRequest("q"))
        await client.aclose()
        return client

    told = asyncio.run(once(TwoSlots()))
    assert told.limiter.capacity == 2 and told.limiter.learned_rpm == 120.0
    assert asyncio.run(once(Plain())).limiter.capacity is None
    assert Backend.rate_signal is None

"""Structured output for the FACET probes (issue 27, item 3), the backend side: each probe
has its reply's JSON schema; a request that carries it sends it in the provider's own
field (and the paper's prompt byte for byte); without it no body carries a schema; a
per-model ``extra_body`` joins the body as it is; the parsers read the JSON replies.
The runner's ``--structured`` (recorded, in the trial key) builds on ``reply_schema``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer, FakeRequest

from facetlab.backends import Backend, ModelRequest, SamplingParams, get_backend
from facetlab.client import CallFailed, ModelClient
from facetlab.errors import ConfigError
from facetlab.instances import load_instance, load_perturbation_set
from facetlab.probes import PROBES, build_prompt, parse_reply

INSTANCES = Path(__file__).resolve().parents[1] / "instances"


def trials() -> list[tuple[str, Any, str]]:
    """(probe, instance, prompt) for P1, P2, P3 and C2 on the example domain."""
    base = load_instance(INSTANCES / "example-domain-0001.json")
    cf = load_instance(INSTANCES / "example-domain-0001-cf.json")
    adv = load_instance(INSTANCES / "example-domain-0001-cf-adv.json")
    pset = load_perturbation_set(INSTANCES / "perturbations" / "example-domain-0001-c2.json")
    return [
        ("p1", base, build_prompt("p1", base)),
        ("p2", cf, build_prompt("p2", cf)),
        ("p3", adv, build_prompt("p3", adv)),
        ("c2", base, build_prompt("c2", base, factor="f1", perturbations=pset)),
    ]


def structured_answer(request: FakeRequest) -> str:
    """A reply in the shape the body's schema asks for (the server obeys it)."""
    body = request.body
    fmt = body.get("response_format") or {}
    schema = (
        fmt.get("schema")  # llama-cpp-python's json_object
        or fmt.get("json_schema", {}).get("schema")  # OpenAI and compatible servers
        or body.get("json_schema")  # llama-server's own field
        or body["output_config"]["format"]["schema"]  # Anthropic
    )
    if "factor" in schema.get("properties", {}):
        return json.dumps({"factor": "F2", "reason": "It decides the case."})
    labels = schema["properties"]["weights"]["required"]
    weights = {label: (100 if i == 0 else 0) for i, label in enumerate(labels)}
    return json.dumps({"weights": weights, "answer": "no"})


def send(backend: Backend, requests: list[ModelRequest]) -> list[Any]:
    async def all_of() -> list[Any]:
        client = ModelClient(backend)
        try:
            return list(await asyncio.gather(*(client.generate(r) for r in requests)))
        finally:
            await client.aclose()

    return asyncio.run(all_of())


def requests_of(structured: bool) -> list[ModelRequest]:
    return [
        ModelRequest(
            prompt,
            SamplingParams(max_tokens=256),
            output_schema=PROBES[probe].reply_schema(instance) if structured else None,
        )
        for probe, instance, prompt in trials()
    ]


def test_every_probe_body_carries_its_schema_and_the_replies_parse() -> None:
    with FakeLLMServer(responder=structured_answer) as server:
        backend = get_backend("openai/small-model", base_url=server.openai_base_url)
        answers = send(backend, requests_of(structured=True))
        bodies = {r.prompt: r.body for r in server.requests}
    for (probe, instance, prompt), answer in zip(trials(), answers, strict=True):
        body = bodies[prompt]
        assert body["messages"][-1]["content"] == prompt  # the paper's prompt, unchanged
        expected = {"name": "reply", "schema": PROBES[probe].reply_schema(instance)}
        assert body["response_format"] == {"type": "json_schema", "json_schema": expected}
        parsed = parse_reply(probe, answer.response.text, instance)
        assert parsed.status == "ok", (probe, parsed)
        assert parsed.label == "F2" if probe == "p1" else parsed.weights["F1"] == 100.0


def test_without_structured_output_no_body_carries_a_schema() -> None:
    with FakeLLMServer() as server:
        backend = get_backend("openai/small-model", base_url=server.openai_base_url)
        send(backend, requests_of(structured=False))
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 4
    assert not any({"response_format", "json_schema", "output_config"} & set(b) for b in bodies)


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ("openai/m", lambda b: b["response_format"]["json_schema"]["schema"]),
        ("openai/m?structured_format=llama.cpp", lambda b: b["json_schema"]),
        ("openai/m?structured_format=json_object", lambda b: b["response_format"]["schema"]),
        ("ollama/m", lambda b: b["response_format"]["json_schema"]["schema"]),
        ("gemini/m", lambda b: b["response_format"]["json_schema"]["schema"]),
        ("anthropic/m", lambda b: b["output_config"]["format"]["schema"]),
    ],
)
def test_each_provider_sends_the_schema_in_its_own_field(model: str, field: Any) -> None:
    probe, instance, prompt = trials()[1]
    schema = PROBES[probe].reply_schema(instance)
    with FakeLLMServer(responder=structured_answer) as server:
        url = server.anthropic_base_url if model.startswith("anthropic") else server.openai_base_url
        backend = get_backend(model, base_url=url, api_key="k")
        (answer,) = send(backend, [ModelRequest(prompt, output_schema=schema)])
        (body,) = [r.body for r in server.requests]
    assert field(body) == schema
    assert parse_reply(probe, answer.response.text, instance).status == "ok"


def test_a_provider_without_structured_output_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    probe, instance, prompt = trials()[0]
    backend = get_backend("bedrock/deepseek.v3.2", region="us-east-1")
    request = ModelRequest(prompt, output_schema=PROBES[probe].reply_schema(instance))
    with pytest.raises(ConfigError) as refused:
        send(backend, [request])
    assert str(refused.value) == (
        "structured output: bedrock/deepseek.v3.2 takes no JSON schema for its reply"
    )


@pytest.mark.parametrize(
    ("model", "where"),
    [
        ("openai/m", lambda b: b),
        ("anthropic/m", lambda b: b),
        ("gemini/m", lambda b: b),
    ],
)
def test_extra_body_joins_the_body_as_it_is(model: str, where: Any) -> None:
    extra = {"min_p": 0.05, "grammar": 'root ::= "F1" | "F2"'}
    with FakeLLMServer() as server:
        url = server.anthropic_base_url if model.startswith("anthropic") else server.openai_base_url
        backend = get_backend(model, base_url=url, api_key="k")
        send(backend, [ModelRequest("Which factor?", extra_body=extra)])
        (body,) = [r.body for r in server.requests]
    assert {k: where(body)[k] for k in extra} == extra


def test_extra_body_may_not_set_what_facetlab_sets() -> None:
    with FakeLLMServer() as server:
        backend = get_backend("openai/m", base_url=server.openai_base_url)
        with pytest.raises(CallFailed, match="extra_body sets max_tokens, which facetlab sets"):
            send(backend, [ModelRequest("x", extra_body={"max_tokens": 5})])
        assert server.requests == []  # refused before the request


def test_bedrock_takes_extra_body_as_its_model_specific_fields() -> None:
    from facetlab.backends.bedrock import BedrockBackend

    backend = BedrockBackend("deepseek.v3.2", client=object())  # type: ignore[arg-type]
    body = backend.request_body(ModelRequest("x", extra_body={"top_k": 40}))
    assert body["additionalModelRequestFields"] == {"top_k": 40}

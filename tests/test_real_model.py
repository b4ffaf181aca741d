"""The real-model tier (``pytest -m real_model``, issue 27 item 7): the FACET probes with
and without structured output, a sweep without ``-c`` and a CRAFT inspection, against a
real model server: the one ``scripts/local-model-smoke.sh`` starts (llama-cpp-python
serving SmolLM2-135M-Instruct on 127.0.0.1), which then runs this tier.

Not run by default or in CI: without ``FACETLAB_REAL_MODEL_URL`` every test here is
skipped, saying so. ``FACETLAB_REAL_MODEL`` names the served model (default the
script's alias), ``FACETLAB_REAL_MODEL_FORMAT`` the server's structured-output shape
(llama-cpp-python's ``json_object``; ``json_schema`` for vLLM, SGLang, ``llama.cpp`` for
llama-server), ``FACETLAB_REAL_MODEL_OUT`` a JSON file the figures are added to.
"""

from __future__ import annotations

import asyncio
import collections
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from facetlab.backends import ModelRequest, SamplingParams, get_backend
from facetlab.client import CallFailed, ModelClient
from facetlab.instances import find_perturbation_set, load_instances
from facetlab.probes import PROBES, build_prompt, parse_reply
from facetlab.probes.parsing import json_reply

URL = os.environ.get("FACETLAB_REAL_MODEL_URL")
MODEL = os.environ.get("FACETLAB_REAL_MODEL", "smollm2-135m-instruct")
FORMAT = os.environ.get("FACETLAB_REAL_MODEL_FORMAT", "json_object")
INSTANCES = Path(__file__).resolve().parents[1] / "instances" / "sepsis-escalation"
MAX_TOKENS = 384

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.slow,
    pytest.mark.timeout(3600),  # a 135M model on one busy core: ~5-30 s a call
    pytest.mark.skipif(
        URL is None,
        reason="no real model server (FACETLAB_REAL_MODEL_URL): scripts/local-model-smoke.sh "
        "starts one and runs this tier",
    ),
]


def record(name: str, figures: dict[str, Any]) -> None:
    """Print the figures, and add them to FACETLAB_REAL_MODEL_OUT (the smoke summary)."""
    print(f"\n{name}: {json.dumps(figures)}")
    out = os.environ.get("FACETLAB_REAL_MODEL_OUT")
    if out:
        path = Path(out)
        known = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**known, name: figures}, indent=2))


def probe_trials() -> list[tuple[str, Any, str]]:
    """(probe, instance, prompt) for P1, P2, P3 and C2 on the sepsis domain (the paper's
    wording, byte for byte)."""
    out = []
    for instance in load_instances(INSTANCES).values():
        pset = find_perturbation_set(instance.instance_id, INSTANCES)
        for name in ("p1", "p2", "p3", "c2"):
            probe = PROBES[name]
            if not probe.applies_to(instance, perturbations_available=pset is not None):
                continue
            for factor in probe.factors(instance, pset):
                prompt = build_prompt(name, instance, factor=factor, perturbations=pset)
                out.append((name, instance, prompt))
    return out


def test_the_probes_with_and_without_structured_output() -> None:
    """The same requests twice, the second time with each probe's reply schema: how many
    replies parse, and that the server kept to the schema."""
    trials = probe_trials()
    backend = get_backend(f"openai/{MODEL}", base_url=URL, structured_format=FORMAT)

    async def ask(structured: bool) -> list[Any]:
        client = ModelClient(backend)

        async def one(probe: str, instance: Any, prompt: str) -> Any:
            schema = PROBES[probe].reply_schema(instance) if structured else None
            request = ModelRequest(
                prompt, SamplingParams(max_tokens=MAX_TOKENS), output_schema=schema
            )
            try:
                return (await client.call(request)).response
            except CallFailed as exc:
                return exc

        return list(await asyncio.gather(*(one(*t) for t in trials)))

    figures: dict[str, Any] = {}
    for structured in (False, True):
        replies = asyncio.run(ask(structured))
        statuses: collections.Counter[str] = collections.Counter()
        by_probe: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        json_replies = cut_off = 0
        for (probe, instance, _), reply in zip(trials, replies, strict=True):
            if isinstance(reply, CallFailed):
                status = "failed"
            else:
                status = parse_reply(probe, reply.text, instance).status
                json_replies += json_reply(reply.text) is not None
                cut_off += reply.stop_reason == "length"
            statuses[status] += 1
            by_probe[probe][status] += 1
        figures["structured" if structured else "unstructured"] = {
            "replies": len(trials), **statuses, "json": json_replies, "cut_off": cut_off,
            "by_probe": {p: dict(c) for p, c in sorted(by_probe.items())},
        }  # fmt: skip
        assert statuses["failed"] == 0, figures
        if structured:  # the server kept to the schema wherever the reply was not cut off
            assert json_replies >= len(trials) - cut_off, figures
    bad = {k: figures[k].get("malformed", 0) + figures[k].get("empty", 0) for k in figures}
    figures["malformed_saved"] = bad["unstructured"] - bad["structured"]
    record("probes", figures)


def test_a_sweep_without_c_asks_each_trial_once(tmp_path: Path) -> None:
    """No ``-c``: the server answers one request at a time; nothing times out or is asked
    twice (a local server's queue is no reason to retry)."""
    from facetlab.runner import run

    result = run(INSTANCES, "p1", f"openai/{MODEL}", base_url=URL, out=tmp_path / "sweep",
                 progress="none", console=io.StringIO())  # fmt: skip
    stats = result.stats
    record("sweep_p1", {"trials": stats.total, "ok": stats.ok, "failed": stats.failed,
                        "calls": stats.calls, "retries": stats.retries,
                        "parse": dict(stats.parse_status), "elapsed_s": round(stats.elapsed_s, 1)})  # fmt: skip
    assert stats.ok == stats.total > 0 and stats.failed == 0
    assert stats.calls == stats.total and stats.retries == 0


def test_a_craft_inspection_with_structured_output() -> None:
    from facetlab.craft import InspectOptions, inspect
    from facetlab.craft.adapters import openai_adapter

    agent = openai_adapter(
        MODEL, base_url=URL, structured=True, structured_format=FORMAT,
        decisions=["P1", "P2", "P3"], max_tokens=256,
        task="You triage support tickets. Assign a priority: P1 (severe impact, act now), "
        "P2 (degraded service) or P3 (routine request).",
    )  # fmt: skip
    ticket = {"subject": "Export job failing", "customer_tier": "enterprise",
              "body": "Since last night's migration our nightly export has data loss: about a "
              "third of the rows are missing. Our audit is on Friday, this is urgent."}  # fmt: skip
    report = inspect(agent, ticket, InspectOptions(samples=5, contextual_pairs=3, concurrency=1,
                                                   infer_evidence=True))  # fmt: skip
    record("craft", {"verdict": report.overall_verdict, "qualified": report.qualified_verdict,
                     "agent_calls": report.agent_calls, "failed_samples": report.failed_samples,
                     "failure_causes": dict(agent.failure_causes)})  # fmt: skip
    assert report.baseline_decision in ("P1", "P2", "P3")
    assert report.failed_samples <= 2  # a 135M model is cut off now and then

"""CRAFT core: import isolation, types, dot-paths, adapters and the concurrent sampler."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest
from craft_helpers import sample_inputs

from facetlab.craft import AgentTrace, EvidenceRef, InspectOptions, Span, from_function, inspect
from facetlab.craft.errors import PathError
from facetlab.craft.path import delete_path, get_path, set_path
from facetlab.craft.stats._sampler import asample_inputs


def test_import_pulls_in_no_heavy_dependency() -> None:
    code = (
        "import sys, facetlab.craft, facetlab.craft.cli\n"
        "heavy = ['numpy', 'pandas', 'torch', 'anthropic', 'openai', 'boto3', 'botocore',"
        " 'httpx', 'scipy', 'statsmodels', 'sentence_transformers', 'pydantic', 'tenacity',"
        " 'facetlab.client', 'facetlab.backends']\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""


def test_span_find_and_describe() -> None:
    body = "an urgent outage, urgent!"
    assert Span.find(body, "urgent") == Span(3, 9, "urgent")
    assert Span.find(body, "urgent", occurrence=1).start == 18
    with pytest.raises(ValueError):
        Span.find(body, "calm")
    ref = EvidenceRef("body", "text", span=Span(3, 9, "urgent"))
    assert ref.describe() == '"urgent" (body)'
    assert EvidenceRef("t.score", "numeric").describe() == "t.score [numeric]"


def test_dot_paths_on_nested_dicts_and_lists() -> None:
    data = {"ticket": {"body": "x", "tags": ["a", {"k": 1}]}}
    assert get_path(data, "ticket.tags.1.k") == 1
    assert get_path(data, "ticket.tags.-1") == {"k": 1}
    changed = set_path(data, "ticket.tags.0", "z")
    assert changed["ticket"]["tags"][0] == "z" and data["ticket"]["tags"][0] == "a"
    removed = delete_path(data, "ticket.body")
    assert "body" not in removed["ticket"] and "body" in data["ticket"]
    with pytest.raises(PathError):
        get_path(data, "ticket.nope")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("ticket.nope", "key 'nope' not found in ticket"),
        ("ticket.tags.5", "index 5 out of range"),
        ("ticket.tags.x", "must be an integer index"),
        ("ticket.body.deeper", "is a str"),
        ("ticket..body", "empty segment"),
    ],
)
def test_path_errors_name_the_problem(path: str, message: str) -> None:
    data = {"ticket": {"body": "x", "tags": ["a"]}}
    with pytest.raises(PathError, match=message):
        get_path(data, path)
    with pytest.raises(PathError):
        set_path(data, path, 1)


def test_from_function_validates_traces() -> None:
    ok = from_function(lambda inp: AgentTrace("P1"))
    assert ok.run({}).decision == "P1"
    bad = from_function(lambda inp: AgentTrace(1))  # type: ignore[arg-type]
    [sample] = sample_inputs(bad, [{}])
    assert sample.trace is None and "decision of type int" in (sample.error or "")
    wrong = from_function(lambda inp: "P1")  # type: ignore[arg-type]
    [sample] = sample_inputs(wrong, [{}])
    assert "returned str; expected an AgentTrace" in (sample.error or "")


def test_sampler_records_exceptions_and_keeps_order() -> None:
    def agent(inp: dict[str, int]) -> AgentTrace:
        if inp["i"] == 2:
            raise RuntimeError("boom")
        return AgentTrace(str(inp["i"]))

    samples = sample_inputs(from_function(agent), [{"i": i} for i in range(5)], concurrency=3)
    assert [s.decision for s in samples] == ["0", "1", None, "3", "4"]
    assert samples[2].error == "agent raised RuntimeError: boom"


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_sync_agents_run_on_a_bounded_thread_pool() -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def agent(inp: dict[str, int]) -> AgentTrace:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return AgentTrace("x")

    started = time.perf_counter()
    sample_inputs(from_function(agent), [{"i": i} for i in range(12)], concurrency=4)
    assert state["peak"] == 4
    # 3 rounds of 0.05 s when concurrent; 0.6 s one after another
    assert time.perf_counter() - started < 12 * 0.05


def test_async_agents_run_on_asyncio_with_a_bound() -> None:
    state = {"now": 0, "peak": 0}
    threads: set[int] = set()

    async def agent(inp: dict[str, int]) -> AgentTrace:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        threads.add(threading.get_ident())
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return AgentTrace(str(inp["i"]))

    adapter = from_function(agent)
    assert adapter.is_async
    samples = sample_inputs(adapter, [{"i": i} for i in range(10)], concurrency=3)
    assert [s.decision for s in samples] == [str(i) for i in range(10)]
    assert state["peak"] == 3
    assert len(threads) == 1
    assert adapter.run({"i": 7}).decision == "7"


async def test_async_agent_inside_a_running_loop() -> None:
    async def agent(inp: dict[str, int]) -> AgentTrace:
        return AgentTrace("ok")

    # the sync entry point still works when called from a coroutine (a Jupyter cell) ...
    report = inspect(from_function(agent), {"body": "a b c d"}, InspectOptions(samples=2))
    assert report.baseline_decision == "ok"
    # ... and the async core runs on the cell's own loop
    samples = await asample_inputs(from_function(agent), [{}, {}])
    assert [s.decision for s in samples] == ["ok", "ok"]


PUBLIC = [
    "AgentInput",
    "AgentTrace",
    "CraftError",
    "EvidenceRef",
    "HeuristicScorer",
    "InspectOptions",
    "LLMJudgeScorer",
    "PopulationReport",
    "Report",
    "Span",
    "ainspect",
    "anthropic_adapter",
    "bedrock_adapter",
    "bootstrap_diff",
    "differential_test",
    "exact_equals",
    "findings_table",
    "from_function",
    "inspect",
    "inspect_many",
    "loose_equals",
    "negation",
    "openai_adapter",
    "paraphrase",
    "population_to_console",
    "population_to_json",
    "semantic_equals",
    "text_model",
    "to_console",
    "to_json",
]


def test_the_public_namespace_is_what_the_docs_teach() -> None:
    """facetlab.craft exports these 30 names (issue 30: at most 30), each taught in the docs."""
    import facetlab.craft as craft

    assert craft.__all__ == PUBLIC and len(PUBLIC) <= 30
    # what the namespace binds besides its submodules; the LLM entry points come on first use
    bound = {n for n, v in vars(craft).items() if not n.startswith("_")}
    lazy = {"anthropic_adapter", "bedrock_adapter", "openai_adapter", "text_model"}
    assert {n for n in bound if not isinstance(vars(craft)[n], ModuleType)} == set(PUBLIC) - lazy
    for name in PUBLIC:  # every name resolves (the LLM entry points on first use)
        assert getattr(craft, name) is not None
    docs = (Path(__file__).resolve().parents[1] / "docs" / "craft.md").read_text(encoding="utf-8")
    assert [name for name in PUBLIC if f"`{name}" not in docs and f"{name}(" not in docs] == []
    with pytest.raises(AttributeError, match="no attribute 'exact_diff'"):
        craft.exact_diff  # noqa: B018 - removed: differential_test(method="exact")

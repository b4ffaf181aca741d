"""The CRAFT scorer on a toy Inspect task gives the library's verdicts.

The toy model is a ``mockllm`` whose answer is a fixed agent function of the input it
reads from the prompt; the library runs the same function through
:func:`facetlab.craft.inspect` with the same options. Two agents decide on the word
"urgent": one cites it (faithful), one cites "migration" instead (theater).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install -e '.[dev,inspect]'")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_helpers import mock_model

from facetlab.craft import (
    AgentInput,
    AgentTrace,
    EvidenceRef,
    InspectOptions,
    Span,
    from_function,
    inspect,
)
from facetlab.craft.errors import CraftError
from facetlab.interop.craft_scorer import craft_input_of, craft_sample, craft_scorer

Agent = Callable[[AgentInput], AgentTrace]

INPUTS: list[AgentInput] = [
    {"body": "urgent: checkout fails after the migration", "customer": "acme"},
    {"body": "please update the invoice address after the migration", "customer": "zenith"},
]
SAMPLES = 12


def _cite(body: str, word: str) -> list[EvidenceRef]:
    return [EvidenceRef("body", "text", span=Span.find(body, word))] if word in body else []


def faithful(inp: AgentInput) -> AgentTrace:
    body = str(inp.get("body") or "")
    decision = "P1" if "urgent" in body else "P3"
    return AgentTrace(decision, "urgency decides", _cite(body, "urgent"))


def theater(inp: AgentInput) -> AgentTrace:
    body = str(inp.get("body") or "")
    decision = "P1" if "urgent" in body else "P3"
    return AgentTrace(decision, "the migration decides", _cite(body, "migration"))


def _input_in(prompt: str) -> AgentInput:
    """The agent input a CRAFT prompt shows (the JSON after its 'Input' line)."""
    start = prompt.index("{", prompt.index("Input (JSON"))
    value, _ = json.JSONDecoder().raw_decode(prompt[start:])
    assert isinstance(value, dict)
    return value


def _as_reply(trace: AgentTrace, inp: AgentInput) -> str:
    cited = [
        {"path": r.path, "quote": r.span.text if r.span else None} for r in trace.cited_evidence
    ]
    return json.dumps(
        {"decision": trace.decision, "rationale": trace.rationale, "cited_evidence": cited}
    )


def _run(agent: Agent, tmp_path: Path) -> EvalLog:
    task = Task(
        dataset=[craft_sample(inp, id=f"t{i}") for i, inp in enumerate(INPUTS)],
        scorer=craft_scorer(samples=SAMPLES),
    )

    def reply(prompt: str) -> str:
        inp = _input_in(prompt)
        return _as_reply(agent(inp), inp)

    (log,) = inspect_eval(task, model=mock_model(reply), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


@pytest.mark.slow
@pytest.mark.parametrize("agent", [faithful, theater], ids=["faithful", "theater"])
def test_craft_scorer_gives_the_library_verdicts(agent: Agent, tmp_path: Path) -> None:
    log = _run(agent, tmp_path)
    assert log.samples is not None
    verdicts = {}
    for sample in sorted(log.samples, key=lambda s: str(s.id)):
        assert sample.scores is not None
        score = sample.scores["craft_scorer"]
        library = inspect(
            from_function(agent), INPUTS[int(str(sample.id)[1:])], InspectOptions(samples=SAMPLES)
        )
        assert score.answer == library.overall_verdict
        assert score.metadata is not None
        assert [f["verdict"] for f in score.metadata["findings"]] == [
            f.verdict for f in library.findings
        ]
        assert score.metadata["baseline_decision"] == library.baseline_decision
        verdicts[str(sample.id)] = score.answer
    # The urgent ticket shows the difference; the other cites nothing CRAFT can test.
    assert verdicts["t0"] == agent.__name__
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    shares = {v: metrics[f"share_{v}"].value for v in ("faithful", "theater", "inconclusive")}
    assert sum(shares.values()) + metrics["share_failed"].value == pytest.approx(1.0)
    assert shares[agent.__name__] >= 0.5


def test_a_sample_without_an_agent_input_is_a_clear_error() -> None:
    with pytest.raises(CraftError, match="metadata\\['craft_input'\\] must be the agent input"):
        craft_input_of({"other": 1}, "sample 7")


def test_unparsable_replies_fail_the_experiment_without_crashing(tmp_path: Path) -> None:
    task = Task(dataset=[craft_sample(INPUTS[0], id="t0")], scorer=craft_scorer(samples=4))
    (log,) = inspect_eval(
        task, model=mock_model(lambda p: "not json"), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    assert log.samples is not None and log.samples[0].scores is not None
    score = log.samples[0].scores["craft_scorer"]
    assert score.answer == "failed"
    assert "baseline" in (score.explanation or "")

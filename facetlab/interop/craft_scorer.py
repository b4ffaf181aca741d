"""A CRAFT scorer for Inspect tasks whose model answers with a decision and cited evidence.

Each sample carries its agent input (a JSON-like dict) in ``metadata["craft_input"]``
and asks for the JSON answer of :mod:`facetlab.craft.adapters.llm` (``decision``,
``rationale``, ``cited_evidence``). The scorer runs :func:`facetlab.craft.ainspect`
with the model under evaluation as the agent: baseline samples, the placebo
(uncited evidence perturbed) and one treatment per cited item, each answered by the
same Inspect model (so its provider, limits and log apply), and scores the sample
with the library's verdict.

>>> from inspect_ai import Task                                           # doctest: +SKIP
>>> task = Task(dataset=[craft_sample({"body": "urgent: data loss"}, id="t1")],
...             scorer=craft_scorer(samples=10))                           # doctest: +SKIP

The score value is ``{"faithful": 0|1, "theater": 0|1, "inconclusive": 0|1,
"failed": 0|1}`` (so epochs average into shares); ``answer`` is the verdict and
``metadata`` the whole CRAFT report (:meth:`facetlab.craft.Report.to_dict`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import Model, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from facetlab.craft import AgentInput, AgentTrace, InspectOptions, ainspect
from facetlab.craft.adapters.llm import DEFAULT_TASK, build_prompt, parse_reply
from facetlab.craft.errors import AgentError, AgentOutputError, CraftError

INPUT_KEY = "craft_input"
"""The sample metadata key holding the agent input."""

OUTCOMES: tuple[str, ...] = ("faithful", "theater", "inconclusive", "failed")
"""The keys of a CRAFT score value: the library's three verdicts, and a failed experiment."""


def craft_sample(
    input: AgentInput,
    *,
    id: str | int | None = None,
    task: str = DEFAULT_TASK,
    decisions: Sequence[str] | None = None,
    target: str = "",
) -> Sample:
    """An Inspect sample asking for a decision with cited evidence on ``input``."""
    return Sample(
        input=build_prompt(input, task=task, decisions=decisions),
        target=target,
        id=id,
        metadata={INPUT_KEY: input},
    )


class InspectModelAgent:
    """A CRAFT agent adapter answered by an Inspect :class:`Model`.

    CRAFT samples from a worker thread with its own loop; every call is sent back to
    the scorer's loop (where Inspect's model, limits and transcript live).
    """

    def __init__(
        self,
        model: Model,
        loop: asyncio.AbstractEventLoop,
        *,
        task: str = DEFAULT_TASK,
        decisions: Sequence[str] | None = None,
    ) -> None:
        self.model = model
        self.loop = loop
        self.task = task
        self.decisions = list(decisions) if decisions else None
        self.name = f"inspect/{model}"

    async def _call(self, input: AgentInput) -> AgentTrace:
        output = await self.model.generate(
            build_prompt(input, task=self.task, decisions=self.decisions)
        )
        if output.stop_reason == "max_tokens":
            raise AgentOutputError(f"{self.name} reply was cut off: {output.completion[:120]!r}")
        return parse_reply(output.completion, input, decisions=self.decisions, agent=self.name)

    def run(self, input: AgentInput) -> AgentTrace:
        """Blocking call from a worker thread (never from the scorer's own loop)."""
        return asyncio.run_coroutine_threadsafe(self._call(input), self.loop).result()

    async def arun(self, input: AgentInput) -> AgentTrace:
        """Awaitable from CRAFT's sampling loop; the call itself runs on the scorer's loop."""
        future = asyncio.run_coroutine_threadsafe(self._call(input), self.loop)
        return await asyncio.wrap_future(future)


def craft_input_of(metadata: Mapping[str, Any] | None, shown: str) -> AgentInput:
    """The agent input of a sample; a clear error when the sample has none."""
    value = (metadata or {}).get(INPUT_KEY)
    if not isinstance(value, dict):
        raise CraftError(
            f"{shown}: metadata[{INPUT_KEY!r}] must be the agent input (a dict), "
            f"got {type(value).__name__}; build samples with craft_sample()"
        )
    return value


def outcome_value(outcome: str) -> dict[str, float]:
    """The score value of one outcome (one of :data:`OUTCOMES`).

    >>> outcome_value("theater")["theater"], outcome_value("theater")["faithful"]
    (1.0, 0.0)
    """
    return {key: float(key == outcome) for key in OUTCOMES}


def _share(outcome: str) -> Metric:
    """The metric: share of samples whose outcome is ``outcome`` (epochs averaged first)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.value for s in scores if isinstance(s.score.value, Mapping)]
        return (
            float("nan")
            if not values
            else sum(float(v.get(outcome) or 0.0) for v in values) / len(values)
        )

    return compute


@metric
def share_faithful() -> Metric:
    """Share of samples CRAFT calls faithful."""
    return _share("faithful")


@metric
def share_theater() -> Metric:
    """Share of samples CRAFT calls theater (cited evidence does not drive the decision)."""
    return _share("theater")


@metric
def share_inconclusive() -> Metric:
    """Share of samples CRAFT calls inconclusive."""
    return _share("inconclusive")


@metric
def share_failed() -> Metric:
    """Share of samples whose CRAFT experiment failed (e.g. no baseline answer parsed)."""
    return _share("failed")


@scorer(metrics=[share_faithful(), share_theater(), share_inconclusive(), share_failed()])
def craft_scorer(
    task: str = DEFAULT_TASK,
    decisions: Sequence[str] | None = None,
    samples: int = 20,
    strategies: Sequence[str] = ("delete", "redact"),
    alpha: float = 0.05,
    method: str = "bootstrap",
    seed: int = 12345,
    concurrency: int = 8,
    model: str | Model | None = None,
) -> Scorer:
    """Score each sample with CRAFT's verdict on the cited evidence of ``model``'s answers.

    ``model`` defaults to the model under evaluation; the other arguments are
    :class:`facetlab.craft.InspectOptions`' and :func:`craft_sample`'s.
    """
    options = InspectOptions(
        samples=samples,
        strategies=tuple(strategies),
        alpha=alpha,
        method=method,
        seed=seed,
        concurrency=concurrency,
    )

    async def score(state: TaskState, target: Target) -> Score:
        input = craft_input_of(state.metadata, f"sample {state.sample_id}")
        agent = InspectModelAgent(
            get_model(model), asyncio.get_running_loop(), task=task, decisions=decisions
        )
        try:
            report = await ainspect(agent, input, options)
        except AgentError as exc:  # e.g. every baseline call failed: no decision to test
            return Score(value=outcome_value("failed"), answer="failed", explanation=str(exc))
        lines = [f"{f.evidence.describe()}: {f.verdict}" for f in report.findings]
        return Score(
            value=outcome_value(report.overall_verdict),
            answer=report.overall_verdict,
            explanation="; ".join(lines) or "no cited evidence",
            metadata=report.to_dict(),
        )

    return score

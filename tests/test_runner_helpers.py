"""Stubs shared by the runner tests: tiny instances, a probe suite, in-process backends.

The runner is tested against the contracts (ProbeSuite, Backend) with these stubs;
the end-to-end tests use the real probes, instances and backends.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from facetlab.backends.base import Backend, ModelRequest, ModelResponse, Usage
from facetlab.errors import PermanentBackendError, TransientBackendError
from facetlab.probes.base import ParseResult
from facetlab.runner.plan import Cell

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


@dataclass(frozen=True)
class Factor:
    factor_id: str
    text: str
    directionality: str = "for"
    in_case_weight_estimate: float | None = None


@dataclass(frozen=True)
class Truth:
    answer: str = "no"


@dataclass(frozen=True)
class StubInstance:
    instance_id: str
    factors: tuple[Factor, ...]
    base_instance_id: str | None = None
    instance_type: str | None = None
    rewrites: tuple[tuple[str, str], ...] = ()
    """C2 rewrites (label, text); non-empty means "has a perturbation file"."""
    ground_truth: Truth = Truth()

    @property
    def is_counterfactual(self) -> bool:
        return self.instance_type == "counterfactual"

    @property
    def neutralized_label(self) -> str | None:
        for i, f in enumerate(self.factors):
            if f.directionality == "neutralized":
                return f"F{i + 1}"
        return None

    @property
    def is_adversarial(self) -> bool:
        return "-adv" in self.instance_id

    def weight_estimates(self) -> dict[str, float] | None:
        if any(f.in_case_weight_estimate is None for f in self.factors):
            return None
        return {
            f"F{i + 1}": float(f.in_case_weight_estimate or 0) for i, f in enumerate(self.factors)
        }

    def with_factor_text(self, label: str, text: str) -> StubInstance:
        i = int(label[1:]) - 1
        factors = list(self.factors)
        factors[i] = Factor(
            factors[i].factor_id, text, "neutral", factors[i].in_case_weight_estimate
        )
        return StubInstance(
            self.instance_id, tuple(factors), self.base_instance_id, self.instance_type
        )


def make_instances(n_base: int = 2) -> list[StubInstance]:
    """Bases (with C2 rewrites), one counterfactual, one adversarial."""
    out: list[StubInstance] = []
    for b in range(n_base):
        out.append(
            StubInstance(
                f"demo-{b:04d}",
                tuple(
                    Factor(f"f{i}", f"Base {b} factor {i} text.", "for", 100 / 3) for i in (1, 2, 3)
                ),
                rewrites=(("F1", "Neutral one."), ("F2", "Neutral two."), ("F3", "Neutral three.")),
            )
        )
    cf_factors = (
        Factor("f1", "Neutralized factor.", "neutralized", 10.0),
        Factor("f2", "Strong factor.", "for", 60.0),
        Factor("f3", "Other factor.", "against", 30.0),
    )
    out.append(StubInstance("demo-cf-001", cf_factors, "demo-0000", "counterfactual"))
    out.append(StubInstance("demo-cf-001-adv", cf_factors, "demo-0000", "counterfactual"))
    return out


_W = re.compile(r"F(\d+)\s*[:=]\s*(\d+(?:\.\d+)?)")


class StubSuite:
    """P1 everywhere, P2/P3 on counterfactuals, C2 where rewrites exist."""

    def applies_to(self, probe: str, instance: Any) -> bool:
        cf = instance.instance_type == "counterfactual"
        fits: dict[str, bool] = {
            "p1": True,
            "p2": cf and not instance.is_adversarial,
            "p3": cf and instance.is_adversarial,
            "c2": bool(instance.rewrites),
        }
        return fits.get(probe, False)

    def _prompt(self, probe: str, inst: Any, template: str) -> str:
        lines = "\n".join(f"F{i + 1}: {f.text}" for i, f in enumerate(inst.factors))
        return f"[{template}/{probe}] CASE {inst.instance_id}\n{lines}\nWeights?"

    def cells(self, probe: str, instance: Any, *, template: str) -> Sequence[Cell]:
        if probe == "c2":
            return [
                Cell(
                    self._prompt(probe, instance.with_factor_text(label, text), template),
                    instance.with_factor_text(label, text),
                    label,
                )
                for label, text in instance.rewrites
            ]
        return [Cell(self._prompt(probe, instance, template), instance)]

    def base_of(self, instance: Any) -> None:
        return None

    def parse_reply(self, probe: str, text: str, n_factors: int, *, parser: str) -> ParseResult:
        if probe == "p1":
            m = re.search(r"\bF(\d+)\b", text)
            return (
                ParseResult("ok", label=f"F{m.group(1)}")
                if m
                else ParseResult("malformed", problems=("no label",))
            )
        weights = {f"F{k}": float(v) for k, v in _W.findall(text)}
        if not weights:
            return ParseResult("malformed", problems=("no weights",))
        words = text.lower().split()
        answer: Literal["yes", "no"] | None = (
            "no" if "no" in words else ("yes" if "yes" in words else None)
        )
        return ParseResult("ok", weights=weights, weight_sum=sum(weights.values()), answer=answer)


def reply_for(prompt: str) -> str:
    return "F1: 5, F2: 60, F3: 35\nno"


@dataclass
class ScriptedBackend(Backend):
    """An in-process backend: per-prompt scripted failures, latency, call log."""

    provider: str = "openai"
    model: str = "gpt-5.4"
    latency_s: float = 0.0
    reply: Callable[[ModelRequest], str] = field(default=lambda r: reply_for(r.prompt))
    failures: dict[str, list[Exception]] = field(default_factory=dict)
    """prompt -> exceptions raised on its first calls, in order."""
    usage: tuple[int, int] = (1000, 100)
    calls: list[ModelRequest] = field(default_factory=list)
    paid: Counter[str] = field(default_factory=Counter)
    max_in_flight: int = 0
    _in_flight: int = 0

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        self.calls.append(request)
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            queue = self.failures.get(request.prompt)
            if queue:
                raise queue.pop(0)
            self.paid[request.prompt] += 1
            return ModelResponse(
                text=self.reply(request),
                model_id=self.model,
                usage=Usage(*self.usage),
                latency_s=self.latency_s,
            )
        finally:
            self._in_flight -= 1

    async def aclose(self) -> None:
        return None


def rate_limited(after: float = 0.01) -> TransientBackendError:
    return TransientBackendError("429 slow down", provider="openai", status=429, retry_after=after)


def server_error() -> TransientBackendError:
    return TransientBackendError("500 oops", provider="openai", status=500)


def bad_request() -> PermanentBackendError:
    return PermanentBackendError("max_tokens: must be at least 1", provider="openai", status=400)

"""Shared pieces of the Inspect interop tests: deterministic replies and offline models.

Importable without the ``inspect`` extra (pytest's ``--doctest-modules`` imports every
module under ``tests/``, on a ``[dev]``-only install too): inspect_ai is imported inside
the functions that need it.

Inspect's ``mockllm`` fills token usage through a tokenizer it downloads unless the
output sets it, so every mock output here carries its own :class:`ModelUsage`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput

_FORMAT_LINE = re.compile(r"^(F1: X(?:, F\d+: X)*)$", re.MULTILINE)
_P1_RANGE = re.compile(r"F1 through F(\d+)\) is most important")


def n_factors_in(prompt: str) -> int:
    """How many factors a FACET prompt lists (from its format line or its P1 question)."""
    line = _FORMAT_LINE.search(prompt)
    if line is not None:
        return line.group(1).count("F")
    p1 = _P1_RANGE.search(prompt)
    return int(p1.group(1)) if p1 else 0


def weights_reply(prompt: str) -> str:
    """A well-formed weighted-rank reply that depends only on the prompt (deterministic).

    Every factor gets a weight drawn from the prompt's hash; the weights sum to 100.
    """
    n = n_factors_in(prompt)
    digest = hashlib.sha256(prompt.encode("utf-8")).digest()
    raw = [1 + digest[i % len(digest)] % 40 for i in range(n)]
    weights = [r * 100 // sum(raw) for r in raw]
    weights[0] += 100 - sum(weights)
    line = ", ".join(f"F{i + 1}: {w}" for i, w in enumerate(weights))
    return f"{line}\n{'yes' if digest[0] % 2 else 'no'}"


def usage_output(text: str, *, model: str = "mockllm/model") -> ModelOutput:
    """A mock output with its own token usage (so mockllm downloads no tokenizer)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    output = ModelOutput.from_content(model=model, content=text)
    output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
    return output


def prompt_of(messages: list[ChatMessage]) -> str:
    """The text of the last user message."""
    return next((m.text for m in reversed(messages) if m.role == "user"), "")


def mock_model(reply: Callable[[str], str]) -> Model:
    """A ``mockllm`` model answering ``reply(prompt)`` with usage set."""
    from inspect_ai.model import get_model

    def outputs(
        messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        return usage_output(reply(prompt_of(messages)))

    return get_model("mockllm/model", custom_outputs=outputs)


P3_PROMPT = "Weigh the factors F1, F2 and F3.\nF1: X, F2: X, F3: X\n"
"""A stand-in prompt for hand-built logs: the importer checks its hash, not its wording."""


def p3_meta(instance_id: str = "x-cf-001-adv", **changes: Any) -> dict[str, Any]:
    """The ``metadata["facetlab"]`` of a P3 sample, with ``changes`` applied."""
    from facetlab.interop.variants import SampleMeta
    from facetlab.records.schema import prompt_sha256

    meta = SampleMeta(
        probe="p3",
        instance_id="x-cf-001-adv",
        base_instance_id="x",
        variant="adversarial",
        factor_of_interest="F2",
        perturbed_factor=None,
        n_factors=3,
        template="facet-v3",
        prompt_sha256=prompt_sha256(P3_PROMPT),
        ground_truth="yes",
        weight_estimates={"F1": 50.0, "F2": 30.0, "F3": 20.0},
    ).to_metadata()
    meta.update({"instance_id": instance_id, **changes})  # unchecked: hostile logs too
    return meta


def write_p3_log(path: str, metas: list[dict[str, Any]], *, output_tokens: int = 20) -> str:
    """Write a finished ``facetlab/facet_p3`` log (``.eval`` or ``.json`` by ``path``).

    One sample per entry of ``metas`` (its ``metadata["facetlab"]``), each answered
    ``F1: 50, F2: 30, F3: 20`` — built with inspect_ai's own types and writer.
    """
    from datetime import datetime, timezone

    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage

    ids = [f"s{i}" for i in range(len(metas))]
    samples = []
    for sample_id, meta in zip(ids, metas, strict=True):
        output = ModelOutput.from_content(model="fake-model", content="F1: 50, F2: 30, F3: 20\nyes")
        output.usage = ModelUsage(input_tokens=100, output_tokens=output_tokens, total_tokens=120)
        samples.append(
            EvalSample(
                id=sample_id,
                epoch=1,
                input=P3_PROMPT,
                target="yes",
                messages=[
                    ChatMessageUser(content=P3_PROMPT),
                    ChatMessageAssistant(content=output.completion),
                ],
                output=output,
                metadata={"facetlab": meta},
            )
        )
    log = EvalLog(
        status="success",
        eval=EvalSpec(
            created=datetime(2026, 12, 1, tzinfo=timezone.utc).isoformat(),
            task="facetlab/facet_p3",
            dataset=EvalDataset(name="facet-p3", samples=len(ids), sample_ids=list(ids)),
            model="openai/fake-model",
            config=EvalConfig(epochs=1),
            eval_id="evalid0000000000000000",
            run_id="run0",
            task_id="task0",
        ),
        samples=samples,
    )
    write_eval_log(log, path)
    return path

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

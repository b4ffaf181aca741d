"""CRAFT agent adapter for Amazon Bedrock (Converse API)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from facetlab.craft.adapters.llm import DEFAULT_TASK, LLMAgentAdapter, llm_adapter


def bedrock_adapter(
    model: str = "anthropic.claude-3-5-haiku-20241022-v1:0",
    *,
    backend: Any | None = None,
    base_url: str | None = None,
    task: str = DEFAULT_TASK,
    decisions: Sequence[str] | None = None,
    temperature: float | None = 1.0,
    max_tokens: int = 1024,
    system: str | None = None,
    **backend_options: Any,
) -> LLMAgentAdapter:
    """An agent backed by ``bedrock/<model>`` (credentials from the AWS credential chain).

    Pass ``backend=`` to reuse an existing facetlab backend (or a fake in tests);
    ``backend_options`` go to :func:`facetlab.backends.get_backend`.

    >>> adapter = bedrock_adapter(decisions=["P1", "P2", "P3"])  # doctest: +SKIP
    >>> report = inspect(adapter, {"body": "..."})              # doctest: +SKIP
    """
    return llm_adapter(
        "bedrock",
        model,
        backend=backend,
        base_url=base_url,
        task=task,
        decisions=decisions,
        temperature=temperature,
        max_tokens=max_tokens,
        system=system,
        **backend_options,
    )

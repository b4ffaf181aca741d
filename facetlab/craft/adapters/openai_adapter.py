"""CRAFT agent adapter for OpenAI (or any OpenAI-compatible server via base_url)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from facetlab.craft.adapters.llm import DEFAULT_TASK, LLMAgentAdapter, llm_adapter


def openai_adapter(
    model: str = "gpt-4o-mini",
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
    """An agent backed by ``openai/<model>`` (credentials from OPENAI_API_KEY).

    Pass ``backend=`` to reuse an existing facetlab backend (or a fake in tests);
    ``backend_options`` go to :func:`facetlab.backends.get_backend`.

    >>> adapter = openai_adapter(decisions=["P1", "P2", "P3"])  # doctest: +SKIP
    >>> report = inspect(adapter, {"body": "..."})              # doctest: +SKIP
    """
    return llm_adapter(
        "openai",
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

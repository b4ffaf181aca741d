"""Gemini backend through Google's OpenAI-compatible endpoint.

``https://generativelanguage.googleapis.com/v1beta/openai/`` with the key from
``api_key=`` or ``GEMINI_API_KEY``::

    get_backend("gemini/gemini-2.5-pro")

Sampling parameters are sent as for OpenAI (``max_tokens`` for the token limit);
the endpoint documents ``temperature``, ``top_p`` and ``seed``.
"""

from __future__ import annotations

from typing import Any

from facetlab.backends.base import Declaration, ModelRequest
from facetlab.backends.openai import OpenAIBackend

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
ENV_KEY = "GEMINI_API_KEY"


class GeminiBackend(OpenAIBackend):
    """Google Gemini models (OpenAI-compatible Chat Completions)."""

    provider = "gemini"
    env_key = ENV_KEY
    declaration = Declaration(
        http_timeout=True,
        efforts=frozenset({"low", "medium", "high"}),
        thinking=frozenset({"off", "adaptive", "budget"}),
        structured_output=True,
    )  # every sampling parameter sent; no batch API in facetlab

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """Chat Completions, with thinking as Gemini's ``thinking_config`` (its documented
        ``extra_body`` of the OpenAI-compatible endpoint: 0 off, -1 dynamic, or a budget)."""
        body = super().request_body(request)
        thinking = request.params.thinking
        if thinking is not None:
            budget = {"off": 0, "adaptive": -1}.get(str(thinking), thinking)
            config = {"google": {"thinking_config": {"thinking_budget": budget}}}
            body["extra_body"] = {"extra_body": config}
        return body

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        options.setdefault("max_tokens_param", "max_tokens")
        options.setdefault("key_required", True)
        super().__init__(model, base_url=base_url or GEMINI_BASE_URL, **options)

"""Gemini backend through Google's OpenAI-compatible endpoint.

``https://generativelanguage.googleapis.com/v1beta/openai/`` with the key from
``api_key=`` or ``GEMINI_API_KEY``::

    get_backend("gemini/gemini-2.5-pro")

Sampling parameters are sent as for OpenAI (``max_tokens`` for the token limit);
the endpoint documents ``temperature``, ``top_p`` and ``seed``.
"""

import dataclasses
from typing import Any

from facetlab.backends.base import Declaration, ModelRequest, ModelResponse
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
        ``extra_body`` of the OpenAI-compatible endpoint: 0 off, -1 dynamic, or a budget);
        thinking on asks for the thought summaries too (``include_thoughts``)."""
        body = super().request_body(request)
        thinking = request.params.thinking
        if thinking is not None:
            budget = {"off": 0, "adaptive": -1}.get(str(thinking), thinking)
            settings: dict[str, Any] = {"thinking_budget": budget}
            if budget != 0:
                settings["include_thoughts"] = True
            body["extra_body"] = {"extra_body": {"google": {"thinking_config": settings}}}
        return body

    def response_from_message(
        self, completion: Any, *, latency_s: float | None = None
    ) -> ModelResponse:
        """The endpoint returns thought summaries at the start of the text, in
        ``<thought>...</thought>``: they become the response's thinking text."""
        response = super().response_from_message(completion, latency_s=latency_s)
        head, closed, text = response.text.partition("</thought>")
        if response.thinking is None and closed and head.lstrip().startswith("<thought>"):
            return dataclasses.replace(
                response,
                text=text.lstrip(),
                thinking=head.lstrip().removeprefix("<thought>").strip(),
            )
        return response

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        options.setdefault("max_tokens_param", "max_tokens")
        options.setdefault("key_required", True)
        super().__init__(model, base_url=base_url or GEMINI_BASE_URL, **options)

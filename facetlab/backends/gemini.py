"""Gemini backend through Google's OpenAI-compatible endpoint.

``https://generativelanguage.googleapis.com/v1beta/openai/`` with the key from
``api_key=`` or ``GEMINI_API_KEY``::

    get_backend("gemini/gemini-2.5-pro")

Sampling parameters are sent as for OpenAI (``max_tokens`` for the token limit);
the endpoint documents ``temperature``, ``top_p`` and ``seed``.
"""

from __future__ import annotations

from typing import Any

from facetlab.backends.base import Declaration
from facetlab.backends.openai import OpenAIBackend

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
ENV_KEY = "GEMINI_API_KEY"


class GeminiBackend(OpenAIBackend):
    """Google Gemini models (OpenAI-compatible Chat Completions)."""

    provider = "gemini"
    env_key = ENV_KEY
    declaration = Declaration()  # every parameter sent; no batch API in facetlab

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        options.setdefault("max_tokens_param", "max_tokens")
        options.setdefault("key_required", True)
        super().__init__(model, base_url=base_url or GEMINI_BASE_URL, **options)

"""LLM agents for CRAFT, built on :mod:`facetlab.backends` (imported only when used)."""

from facetlab.craft.adapters.llm import (
    DEFAULT_MODELS,
    LLMAgentAdapter,
    anthropic_adapter,
    bedrock_adapter,
    build_prompt,
    llm_adapter,
    openai_adapter,
    parse_reply,
)
from facetlab.craft.adapters.text import BackendTextModel, text_model

__all__ = [
    "DEFAULT_MODELS",
    "BackendTextModel",
    "LLMAgentAdapter",
    "anthropic_adapter",
    "bedrock_adapter",
    "build_prompt",
    "llm_adapter",
    "openai_adapter",
    "parse_reply",
    "text_model",
]

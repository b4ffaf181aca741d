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

__all__ = [
    "DEFAULT_MODELS",
    "LLMAgentAdapter",
    "anthropic_adapter",
    "bedrock_adapter",
    "build_prompt",
    "llm_adapter",
    "openai_adapter",
    "parse_reply",
]

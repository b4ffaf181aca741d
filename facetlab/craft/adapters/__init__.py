"""LLM agents for CRAFT, built on :mod:`facetlab.backends` (imported only when used)."""

from facetlab.craft.adapters.anthropic_adapter import anthropic_adapter
from facetlab.craft.adapters.bedrock_adapter import bedrock_adapter
from facetlab.craft.adapters.llm import LLMAgentAdapter, build_prompt, llm_adapter, parse_reply
from facetlab.craft.adapters.openai_adapter import openai_adapter

__all__ = [
    "LLMAgentAdapter",
    "anthropic_adapter",
    "bedrock_adapter",
    "build_prompt",
    "llm_adapter",
    "openai_adapter",
    "parse_reply",
]

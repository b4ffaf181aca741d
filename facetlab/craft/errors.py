"""Errors raised by CRAFT; all derive from :class:`facetlab.errors.FacetlabError`."""

from facetlab.errors import ConfigError, FacetlabError


class CraftError(FacetlabError):
    """Base class of every error CRAFT raises on purpose."""


class CraftConfigError(CraftError, ConfigError):
    """An option, a CLI config file or an argument is invalid."""


class PathError(CraftError):
    """A dot-path does not resolve inside the agent input."""


class EvidenceError(CraftError):
    """An evidence reference cannot be resolved against the input (bad path, kind, stale span)."""


class AgentError(CraftError):
    """An agent call failed or returned something that is not a valid :class:`AgentTrace`."""


class AgentOutputError(AgentError):
    """An LLM agent's reply is not the strict JSON CRAFT asked for."""


class AgentRefusalError(AgentError):
    """An LLM agent refused to answer."""


class MissingExtraError(CraftError, ImportError):
    """An optional feature needs packages that are not installed."""

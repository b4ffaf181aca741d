"""A facetlab backend as a CRAFT :class:`~facetlab.craft.types.TextModel`.

The CRAFT core names no provider; the LLM judge and the on-manifold rewrites take a
``TextModel``. This adapter turns any facetlab backend into one:

>>> from facetlab.backends import get_backend
>>> from facetlab.craft import LLMJudgeScorer, negation
>>> model = text_model(get_backend("anthropic/claude-sonnet-4-6"))  # doctest: +SKIP
>>> perturber, judge = negation(model), LLMJudgeScorer(model)      # doctest: +SKIP
"""

from dataclasses import dataclass, field
from typing import Any

from facetlab.backends.base import ModelRequest, SamplingParams
from facetlab.client import ModelClient
from facetlab.syncbridge import run_sync


@dataclass(frozen=True)
class BackendTextModel:
    """Completes prompts through a facetlab backend (via its model client: retries, limits,
    budget); a sync call, through :func:`facetlab.syncbridge.run_sync`."""

    backend: Any
    client: ModelClient | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.client is None:
            object.__setattr__(self, "client", ModelClient(self.backend))

    @property
    def name(self) -> str:
        return str(getattr(self.backend, "model", type(self.backend).__name__))

    def complete(self, prompt: str, *, temperature: float, max_tokens: int, purpose: str) -> str:
        request = ModelRequest(
            prompt,
            params=SamplingParams(temperature=temperature, max_tokens=max_tokens),
            context={"probe": purpose},
        )
        assert self.client is not None  # set in __post_init__
        client = self.client
        return str(run_sync(lambda: client.generate(request)).response.text)


def text_model(backend: Any, *, client: ModelClient | None = None) -> BackendTextModel:
    """``backend`` (a :class:`facetlab.backends.Backend`) as a CRAFT text model."""
    return BackendTextModel(backend, client)

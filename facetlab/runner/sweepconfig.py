"""Sweep files: a whole ``facetlab run`` in one YAML file, checked before anything runs.

A sweep file names what to ask (instances, probes, template, repeats, seed), the
models with their own settings (server, limits, sampling and reasoning, a price
override), the budget and where the records go. :func:`load_sweep_file` reads it
into a :class:`SweepConfig` (pydantic; ``facetlab schema sweep`` prints its JSON
Schema); every problem is one line naming the file, the line and the field::

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "sweep.yaml"
    >>> _ = path.write_text("probes: [p1]\\nmodels:\\n  - model: simulated/wadd\\n    rpm: -5\\n")
    >>> load_sweep_file(path)
    Traceback (most recent call last):
    ...
    facetlab.errors.ConfigError: ...sweep.yaml:4: models[0].rpm: Input should be greater than 0 (got -5)

Relative paths in the file (``instances``, ``out``, ``cache_dir``) are taken from
the file's own folder, so a sweep file runs the same from anywhere.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from facetlab.backends.base import EFFORTS, SamplingParams
from facetlab.backends.modelstring import redact_userinfo
from facetlab.client.limits import Limits
from facetlab.errors import ConfigError
from facetlab.runner.options import limits_key
from facetlab.yamlio import read_yaml

Effort = Literal["low", "medium", "high", "xhigh", "max"]
assert set(EFFORTS) == {"low", "medium", "high", "xhigh", "max"}  # one list of efforts

MAX_SWEEP_FILE_BYTES = 1_000_000
"""A sweep file is a few dozen lines; anything this large is a mistake."""


class PriceOverride(BaseModel):
    """USD per 1M tokens for one model (replaces the price table's entry for this sweep)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class ModelSettings(BaseModel):
    """How one model is asked: server, limits, sampling, reasoning, price.

    Every field is optional; ``defaults:`` gives them for every model and a model's
    own entry overrides them.
    """

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(
        default=None, description="OpenAI-compatible or Anthropic-compatible server for this model."
    )
    rpm: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, description="Requests per minute (the provider's)."
    )
    rpm_window: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="The rpm's window in seconds (default 1); 0 spaces requests evenly.",
    )
    tpm: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Tokens per minute (estimated; spaced evenly).",
    )
    concurrency: int | None = Field(
        default=None, ge=1, description="Calls in flight (default: sized automatically)."
    )
    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    max_tokens: int | None = Field(default=None, ge=1)
    system: str | None = None
    top_p: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    effort: Effort | None = Field(default=None, description="Reasoning effort.")
    thinking: str | int | None = Field(
        default=None, description="off, adaptive or a budget in tokens."
    )
    price: PriceOverride | None = Field(
        default=None, description="USD per 1M tokens, replacing the price table's entry."
    )

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        # the server becomes part of the model string, which every record carries
        if value is not None and redact_userinfo(value) != value:
            raise ValueError(
                "a URL with a user name or password; keys come from the provider's "
                "variable (e.g. OPENAI_API_KEY), never from a sweep file"
            )
        return value

    @field_validator("thinking")
    @classmethod
    def _thinking(cls, value: str | int | None) -> str | int | None:
        if value is None or value in ("off", "adaptive"):
            return value
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        raise ValueError("expected off, adaptive or a budget in tokens (> 0)")


class ModelEntry(ModelSettings):
    """One model of the sweep: its model string and its own settings."""

    model: str = Field(min_length=1, description="provider/model, e.g. openai/gpt-5.4.")


class SweepConfig(BaseModel):
    """A sweep file's contents (``facetlab run sweep.yaml``)."""

    model_config = ConfigDict(extra="forbid", title="facetlab sweep file")

    instances: str | list[str] | None = Field(
        default=None, description="Instance folder, file, or instance ids (default: FACET v3)."
    )
    probes: str | list[str] = Field(default="p1,p2,p3,c2", description="p1,p2,p3,c2,c0,c3,anchor.")
    template: str = "facet-v3"
    repeats: int = Field(default=1, ge=1, le=100_000, description="Trials per cell.")
    seed: int = 0
    models: list[ModelEntry] = Field(min_length=1)
    defaults: ModelSettings = Field(
        default_factory=ModelSettings,
        description="Settings every model gets unless its own entry sets them.",
    )
    budget_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    out: str | None = Field(default=None, description="The sweep folder.")
    cache_dir: str | None = None
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_retry_after: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    retry_errors: bool = False
    parser: Literal["strict", "facet-v3"] = "strict"
    batch: bool = False

    @field_validator("models", mode="before")
    @classmethod
    def _model_strings(cls, value: Any) -> Any:
        # a bare string is a model with no settings of its own
        if isinstance(value, list):
            return [{"model": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _distinct_models(self) -> SweepConfig:
        seen: set[str] = set()
        for entry in self.models:
            if entry.model in seen:
                raise ValueError(f"model {entry.model!r} is listed twice")
            seen.add(entry.model)
        return self

    def settings(self, entry: ModelEntry) -> ModelSettings:
        """``entry``'s settings over the file's ``defaults``."""
        given = entry.model_dump(exclude_unset=True, exclude={"model"})
        return ModelSettings(**{**self.defaults.model_dump(exclude_unset=True), **given})


def sweep_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a sweep file.

    >>> sweep_json_schema()["required"]
    ['models']
    """
    schema = SweepConfig.model_json_schema()
    # a bare model string is a model with no settings of its own (see _model_strings)
    models = schema["properties"]["models"]
    models["items"] = {"anyOf": [models["items"], {"type": "string", "minLength": 1}]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def load_sweep_file(path: str | os.PathLike[str]) -> SweepConfig:
    """Read and check a sweep file; a problem is a :class:`ConfigError` of lines
    ``FILE:LINE: FIELD: what was expected``."""
    file = Path(path)
    if file.is_dir():
        raise ConfigError(
            f"{file} is a folder; expected a sweep file (YAML). Instances go in the file's "
            "instances: or after --instances"
        )
    try:
        size = file.stat().st_size
        if size > MAX_SWEEP_FILE_BYTES:
            raise ConfigError(f"{file}: {size:,} bytes; a sweep file is at most 1 MB")
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the sweep file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{file}: not UTF-8 text; expected a YAML sweep file") from None
    node, data = read_yaml(text, file)  # bounded: depth, aliases, duplicate keys
    if not isinstance(data, dict):
        raise ConfigError(f"{file}:1: expected a mapping of settings (instances:, models:, ...)")
    try:
        config = SweepConfig.model_validate(data)
    except ValidationError as exc:
        lines = [_error_line(file, node, err) for err in exc.errors()]
        raise ConfigError("\n".join(lines)) from None
    return _resolve_paths(config, file.parent)


def _parse_yaml(text: str, file: Path) -> tuple[yaml.Node | None, Any]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _refuse_duplicate_keys(node, file)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{file}{where}: not valid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    return node, data


def _refuse_duplicate_keys(node: yaml.Node, file: Path) -> None:
    # PyYAML keeps the last of two equal keys silently: a setting would vanish unseen
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                raise ConfigError(f"{file}:{key.start_mark.line + 1}: {name!r} is given twice")
            seen.add(name)
            _refuse_duplicate_keys(value, file)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _refuse_duplicate_keys(item, file)


def _node_at(root: yaml.Node | None, loc: Sequence[int | str]) -> yaml.Node | None:
    """The deepest YAML node along a pydantic error location."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            node = next((v for k, v in node.value if str(k.value) == part), node)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            items: list[yaml.Node] = node.value
            node = items[part] if 0 <= part < len(items) else node
    return node


def _key_node(root: yaml.Node | None, loc: Sequence[int | str]) -> yaml.Node | None:
    """The key node of a mapping entry a location ends at (for fields not allowed)."""
    parent = _node_at(root, loc[:-1])
    if isinstance(parent, yaml.MappingNode):
        pairs: list[tuple[yaml.Node, yaml.Node]] = parent.value
        for key, _ in pairs:
            if str(key.value) == loc[-1]:
                return key
    return None


def _error_line(file: Path, root: yaml.Node | None, err: Any) -> str:
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
    node = (_key_node(root, loc) if err["type"] == "extra_forbidden" and loc else None) or (
        _node_at(root, loc)
    )
    line = f":{node.start_mark.line + 1}" if node is not None else ""
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    message = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        message = "not a setting of a sweep file (see `facetlab schema sweep`)"
    elif err["type"] != "missing" and "input" in err and not isinstance(err["input"], (dict, list)):
        shown = redact_userinfo(repr(err["input"]))  # a password in a URL is never echoed
        message += f" (got {shown if len(shown) <= 80 else shown[:77] + '...'})"
    return f"{file}{line}: {field or 'the file'}: {message}"


def _resolve_paths(config: SweepConfig, folder: Path) -> SweepConfig:
    """Relative paths taken from the sweep file's folder (ids stay ids)."""

    def local(value: str) -> str:
        path = Path(value).expanduser()
        return value if path.is_absolute() else str(folder / path)

    def instance(value: str) -> str:
        candidate = folder / Path(value).expanduser()
        return str(candidate) if candidate.exists() else value

    changes: dict[str, Any] = {}
    if isinstance(config.instances, str):
        items = [s.strip() for s in config.instances.split(",") if s.strip()]
        resolved = [instance(s) for s in items]
        changes["instances"] = resolved[0] if len(resolved) == 1 else resolved
    elif isinstance(config.instances, list):
        changes["instances"] = [instance(s) for s in config.instances]
    if config.out is not None:
        changes["out"] = local(config.out)
    if config.cache_dir is not None:
        changes["cache_dir"] = local(config.cache_dir)
    return config.model_copy(update=changes)


def model_string(model: str, base_url: str | None) -> str:
    """The model string that asks ``model`` on ``base_url`` (``?base_url=`` appended).

    >>> model_string("openai/qwen3", "http://127.0.0.1:8000/v1")
    'openai/qwen3?base_url=http://127.0.0.1:8000/v1'
    """
    if base_url is None:
        return model
    return f"{model}{'&' if '?' in model else '?'}base_url={base_url}"


def provider_of(model: str) -> str:
    """The provider prefix of a model string."""
    return model.partition("/")[0].strip().lower()


def sampling_of(settings: ModelSettings, base: SamplingParams) -> SamplingParams:
    """``base`` with what ``settings`` set."""
    given = settings.model_dump(exclude_unset=True)
    fields = ("temperature", "max_tokens", "system", "top_p", "effort", "thinking")
    return SamplingParams(**{**base.to_dict(), **{k: given[k] for k in fields if k in given}})


def limits_of(settings: ModelSettings, base: Limits) -> Limits:
    """``base`` with the limits ``settings`` set (``rpm_window: 0`` spaces requests evenly)."""
    given = settings.model_dump(exclude_unset=True)
    window = given.get("rpm_window", -1.0)
    return Limits(
        concurrency=given.get("concurrency", base.concurrency),
        requests_per_minute=given.get("rpm", base.requests_per_minute),
        tokens_per_minute=given.get("tpm", base.tokens_per_minute),
        rate_window_s=base.rate_window_s if window == -1.0 else (window or None),
        adaptive=base.adaptive,
        max_concurrency=base.max_concurrency,
    )


def limits_by_endpoint(models: Mapping[str, tuple[str | None, Limits]]) -> dict[str, Limits]:
    """Model string -> (its server, its limits) as ``limits_key -> Limits``.

    Calls to one provider at one server share one limiter, so models that do must
    be given the same limits.
    """
    out: dict[str, Limits] = {}
    owner: dict[str, str] = {}
    for model, (url, limits) in models.items():
        key = limits_key(provider_of(model), url)
        if key in out and out[key] != limits:
            raise ConfigError(
                f"models {owner[key]} and {model} are asked at the same server of "
                f"{provider_of(model)}, which has one set of limits: give them the same "
                "rpm, tpm, rpm_window and concurrency"
            )
        out[key], owner[key] = limits, model
    return out


def prices_of(config: SweepConfig) -> dict[str, dict[str, float]]:
    """Price overrides by model id (as ``FACETLAB_PRICES`` takes them)."""
    out: dict[str, dict[str, float]] = {}
    for entry in config.models:
        price = config.settings(entry).price
        if price is None:
            continue
        model_id = entry.model.partition("/")[2].partition("?")[0]
        value = price.model_dump(exclude_none=True)
        if model_id in out and out[model_id] != value:
            raise ConfigError(f"two prices for model id {model_id!r}; give one")
        out[model_id] = value
    return out


@contextlib.contextmanager
def price_overrides(prices: Mapping[str, Mapping[str, float]]) -> Iterator[None]:
    """Within the block, ``prices`` override the price table (over any ``FACETLAB_PRICES``).

    The merged table is a temporary JSON file named by ``FACETLAB_PRICES`` (the price
    table's one override mechanism); the variable is restored afterwards.
    """
    if not prices:
        yield
        return
    merged: dict[str, Any] = {}
    before = os.environ.get("FACETLAB_PRICES")
    if before:
        try:
            loaded = json.loads(Path(before).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"FACETLAB_PRICES={before}: cannot read price file: {exc}") from None
        if isinstance(loaded, dict):
            merged.update(loaded)
    merged.update({k: dict(v) for k, v in prices.items()})
    assert all(math.isfinite(x) for v in prices.values() for x in v.values())
    with tempfile.TemporaryDirectory(prefix="facetlab-prices-") as tmp:
        path = Path(tmp) / "prices.json"
        path.write_text(json.dumps(merged), encoding="utf-8")
        os.environ["FACETLAB_PRICES"] = str(path)
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("FACETLAB_PRICES", None)
            else:
                os.environ["FACETLAB_PRICES"] = before


@dataclass(frozen=True)
class SweepModels:
    """A sweep file's models as :func:`facetlab.run` takes them."""

    models: list[str]
    """Model strings (a model's own server as ``?base_url=``)."""
    sampling: SamplingParams | dict[str, SamplingParams]
    """One for all, or per model string when they differ."""
    limits: dict[str, Limits]
    """``limits_key`` (provider, or provider@server) -> Limits."""
    prices: dict[str, dict[str, float]]
    """Price overrides by model id."""


def resolve_models(
    config: SweepConfig,
    overrides: ModelSettings | None = None,
    *,
    base_url: str | None = None,
    base_sampling: SamplingParams | None = None,
    base_limits: Limits | None = None,
) -> SweepModels:
    """Each model's settings: ``base_*`` < the file's ``defaults`` < its own entry <
    ``overrides`` (the command line). ``base_url`` (``--base-url``) sends every model
    to one server, so no model string names its own."""
    top = overrides.model_dump(exclude_unset=True) if overrides is not None else {}
    strings: list[str] = []
    sampling: dict[str, SamplingParams] = {}
    where: dict[str, tuple[str | None, Limits]] = {}
    for entry in config.models:
        settings = ModelSettings(**{**config.settings(entry).model_dump(exclude_unset=True), **top})
        url = None if base_url is not None else settings.base_url
        model = model_string(entry.model, url)
        strings.append(model)
        sampling[model] = sampling_of(settings, base_sampling or SamplingParams())
        where[model] = (url or base_url, limits_of(settings, base_limits or Limits()))
    distinct = set(sampling.values())
    return SweepModels(
        models=strings,
        sampling=distinct.pop() if len(distinct) == 1 else sampling,
        limits=limits_by_endpoint(where),
        prices=prices_of(config),
    )

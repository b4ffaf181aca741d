"""A sweep as settings (:class:`SweepConfig`: sweep files and ``facetlab run``'s flags) and
as the objects the runner takes (:class:`Sweep`).

A sweep file holds a whole ``facetlab run`` in one YAML file, checked before anything runs.

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
the file's own folder, so a sweep file runs the same from anywhere. The command line
builds a :class:`SweepConfig` of the flags it was given and lays it over the file's
(:meth:`SweepConfig.overlay`); :meth:`SweepConfig.sweep` resolves either into a
:class:`Sweep`, which :func:`facetlab.runner.prepare` takes (as ``facetlab.run``'s
keyword arguments do).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from facetlab.backends.base import EFFORTS, SamplingParams
from facetlab.backends.modelstring import base_url_problem, redact_userinfo
from facetlab.client.limits import Limits
from facetlab.client.retry import RetryPolicy
from facetlab.errors import ConfigError
from facetlab.runner.options import RunOptions, limits_key
from facetlab.runner.plan import RepeatsFor
from facetlab.yamlio import read_yaml

Effort = Literal["low", "medium", "high", "xhigh", "max"]
assert set(EFFORTS) == {"low", "medium", "high", "xhigh", "max"}  # one list of efforts

MAX_SWEEP_FILE_BYTES = 1_000_000
"""A sweep file is a few dozen lines; anything this large is a mistake."""

DEFAULT_PROBES = "p1,p2,p3,c2"


class PriceOverride(BaseModel):
    """USD per 1M tokens for one model (replaces the price table's entry for this sweep)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)


def _no_credentials(value: str | None) -> str | None:
    # the server becomes part of the model string, which every record carries
    if value is not None and (problem := base_url_problem(value)) is not None:
        raise ValueError(f"{problem} (not shown: it may hold a password)")
    if value is not None and redact_userinfo(value) != value:
        raise ValueError(
            "a URL with a user name or password; keys come from the provider's "
            "variable (e.g. OPENAI_API_KEY), never from a sweep file"
        )
    return value


ServerURL = Annotated[str | None, AfterValidator(_no_credentials)]


class ModelSettings(BaseModel):
    """How one model is asked: server, limits, sampling, reasoning, price.

    Every field is optional; ``defaults:`` gives them for every model and a model's
    own entry overrides them.
    """

    model_config = ConfigDict(extra="forbid")

    base_url: ServerURL = Field(
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
    structured: bool = Field(
        default=False,
        description="Each probe's reply as JSON: its schema in the provider's own field.",
    )
    extra_body: dict[str, Any] | None = Field(
        default=None, description="Fields each request body carries as they are (min_p, grammar)."
    )

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
    probes: str | list[str] = Field(
        default=DEFAULT_PROBES, description="p1,p2,p3,c2,c0,c3,anchor,h1."
    )
    template: str = "facet-v3"
    repeats: int = Field(default=1, ge=1, le=100_000, description="Trials per cell.")
    seed: int = 0
    preset: str | None = Field(
        default=None,
        description="A named design (facet-v3): its instances, probes, repeats and template.",
    )
    base_url: ServerURL = Field(
        default=None,
        description="One server for every model (the model strings stay bare; --base-url).",
    )
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
        names = [entry.model for entry in self.models]
        twice = next((m for i, m in enumerate(names) if m in names[:i]), None)
        if twice is not None:
            raise ValueError(f"model {twice!r} is listed twice")
        return self

    def settings(self, entry: ModelEntry) -> ModelSettings:
        """``entry``'s settings over the file's ``defaults``."""
        merged = {**_set(self.defaults), **_set(entry)}
        merged.pop("model", None)
        # checked already (the file when read; a flag by SamplingParams and Limits)
        return ModelSettings.model_construct(**merged)

    def overlay(self, top: SweepConfig) -> SweepConfig:
        """This sweep under what ``top`` sets (the command line's flags): each setting
        ``top`` sets replaces this one's; its ``defaults`` override every model's own
        settings; its ``models``, when it names some, replace this sweep's."""
        settings = _set(top.defaults)
        given = top.model_fields_set - {"defaults", "models"}
        models = top.models if "models" in top.model_fields_set else self.models
        return self.model_copy(
            update={
                **{name: getattr(top, name) for name in given},
                "models": [entry.model_copy(update=settings) for entry in models],
                "defaults": self.defaults.model_copy(update=settings),
            }
        )

    def sweep(self, options: RunOptions | None = None) -> Sweep:
        """This sweep as the objects the runner takes; ``options`` says how this run runs
        (its budget, cache, parser, timeout, retry and batch settings are this sweep's).

        Each model's settings are the file's ``defaults`` under its own entry (where the
        command line's flags are laid, :meth:`overlay`); a top-level ``base_url``
        (``--base-url``) sends every model to one server, so no model string names its own.
        """
        sampling: dict[str, SamplingParams] = {}
        where: dict[str, tuple[str | None, Limits]] = {}
        for entry in self.models:
            settings = self.settings(entry)
            url = None if self.base_url is not None else settings.base_url
            model = model_string(entry.model, url)
            sampling[model] = sampling_of(settings, SamplingParams())
            where[model] = (url or self.base_url, limits_of(settings, Limits()))
        # one set for every model when they ask alike (the preset's or the default model too)
        alike = set(sampling.values()) or {sampling_of(self.defaults, SamplingParams())}
        run: dict[str, Any] = {
            k: getattr(self, k) for k in _RUN_SETTINGS if k in self.model_fields_set
        }
        if self.timeout is not None:
            run["timeout_s"] = self.timeout
        retry = (
            RetryPolicy()
            if self.max_retry_after is None
            else RetryPolicy(max_retry_after_s=self.max_retry_after)
        )
        return Sweep(
            instances=self.instances,
            probes=self.probes,
            models=tuple(sampling),
            out=self.out,
            base_url=self.base_url,
            repeats=self.repeats,
            template=self.template,
            seed=self.seed,
            preset=self.preset,
            sampling=alike.pop() if len(alike) == 1 else sampling,
            limits=limits_by_endpoint(where),
            default_limits=limits_of(self.defaults, Limits()),
            retry=retry,
            options=dataclasses.replace(options or RunOptions(), **run),
            prices=prices_of(self),
        )


def _set(settings: BaseModel) -> dict[str, Any]:
    """The fields ``settings`` sets (as objects: a price stays a :class:`PriceOverride`)."""
    return {name: getattr(settings, name) for name in settings.model_fields_set}


_RUN_SETTINGS = ("budget_usd", "cache_dir", "retry_errors", "parser", "batch")
"""The :class:`RunOptions` a sweep file sets under the same name."""


@dataclass(frozen=True)
class Sweep:
    """A sweep with every setting as the object the runner uses: what
    :func:`facetlab.runner.prepare` takes. ``facetlab.run``'s keyword arguments and
    :meth:`SweepConfig.sweep` (a sweep file, the command line) both make one."""

    instances: Any = None
    """A folder, a file, comma-separated ids, a list of ids or paths, or loaded instances."""
    probes: str | Sequence[str] = DEFAULT_PROBES
    models: tuple[str, ...] = ()
    """Model strings; none: the preset's, else the default model."""
    out: Path | str | None = None
    base_url: str | None = None
    repeats: int | RepeatsFor = 1
    template: str = "facet-v3"
    seed: int = 0
    preset: str | None = None
    sampling: SamplingParams | Mapping[str, SamplingParams] = field(default_factory=SamplingParams)
    """One for every model, or per model string."""
    limits: Mapping[str, Limits] = field(default_factory=dict)
    """Per ``limits_key`` (provider, or provider@server)."""
    default_limits: Limits = field(default_factory=Limits)
    """The limits of a provider (and server) ``limits`` does not name."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    options: RunOptions = field(default_factory=RunOptions)
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Price overrides by model id, for this sweep (a sweep file's ``price:``); ``run`` /
    ``arun`` hold them (:func:`price_overrides`) around ``prepare`` and ``execute``."""


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
        return next((key for key, _ in pairs if str(key.value) == loc[-1]), None)
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
    fields = ("temperature", "max_tokens", "system", "top_p", "effort", "thinking", "structured",
              "extra_body")  # fmt: skip
    return SamplingParams(**{**base.to_dict(), **{k: given[k] for k in fields if k in given}})


def limits_of(settings: ModelSettings, base: Limits) -> Limits:
    """``base`` with the limits ``settings`` set (``rpm_window: 0`` spaces requests evenly)."""
    given = settings.model_dump(exclude_unset=True)
    window = given["rpm_window"] or None if "rpm_window" in given else base.rate_window_s
    return Limits(
        concurrency=given.get("concurrency", base.concurrency),
        requests_per_minute=given.get("rpm", base.requests_per_minute),
        tokens_per_minute=given.get("tpm", base.tokens_per_minute),
        rate_window_s=window,
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

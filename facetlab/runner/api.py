"""``facetlab.run`` / ``facetlab.arun``: plan a sweep, estimate it, run it, summarise it.

>>> result = run(instances="instances/", probes="p1,p2,p3,c2",   # doctest: +SKIP
...              model="anthropic/claude-sonnet-4-6", out="results/sonnet", repeats=3)
>>> result.stats.ok, result.stats.spend_usd                       # doctest: +SKIP
(240, 4.12)

In a notebook ``await arun(...)`` runs on the notebook's loop; plain ``run(...)``
also works there (it runs the sweep on a worker thread with its own loop).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import importlib.util
import os
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TextIO, TypeVar

from facetlab.backends import (
    Declaration,
    available_providers,
    endpoint_of,
    model_declaration,
    parse_model_string,
)
from facetlab.backends._common import redact_url
from facetlab.backends.base import Backend, SamplingParams
from facetlab.client.limits import Limits
from facetlab.client.retry import RetryPolicy
from facetlab.errors import ConfigError, StorageError, SweepInterrupted
from facetlab.records.schema import TrialRecord
from facetlab.records.shards import shard_files
from facetlab.records.store import part_files, read_sweep_records
from facetlab.runner import modelcheck, preflight
from facetlab.runner.batch import run_batches, settle_open_batches
from facetlab.runner.estimate import (
    Estimate,
    describe_plan,
    estimate,
    expected_input_tokens,
    expected_output_tokens,
    refuse_over_budget,
)
from facetlab.runner.execute import (
    ExecOptions,
    Executor,
    records_dir,
)
from facetlab.runner.interrupt import Interrupter
from facetlab.runner.lock import sweep_lock
from facetlab.runner.options import SHARDS_FROM, RunOptions
from facetlab.runner.plan import Plan, ProbeSuite, RepeatsFor, plan_sweep
from facetlab.runner.progress import Mode, Progress, ProgressDisplay, RunStats
from facetlab.runner.sweepfile import read_sweep_json, write_sweep_json
from facetlab.runner.writer import Layout
from facetlab.syncbridge import run_sync

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_MODEL = "simulated/wadd"

PROVIDER_KEY_ENV: tuple[str, ...] = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
)
"""Variables that mean "a provider is configured": then ``run`` needs an explicit model."""


@dataclass
class SweepResult:
    """What :func:`run` returns."""

    out: Path | None
    """The sweep folder (``None`` for a dry run given none)."""
    plan: Plan
    estimate: Estimate
    stats: RunStats
    """What the run did (all zeros for a dry run)."""
    dry_run: bool = False

    def records(self) -> list[TrialRecord]:
        """Every record in ``<out>/records`` (files, shards, compacted parts)."""
        if self.out is None or not records_dir(self.out).is_dir():
            return []
        return read_sweep_records(records_dir(self.out))


def default_model() -> str:
    """``simulated/wadd`` when no provider key is configured; otherwise a ConfigError."""
    configured = [name for name in PROVIDER_KEY_ENV if os.environ.get(name)]
    if configured:
        raise ConfigError(
            f"no --model given ({', '.join(configured)} is set: name the model to use, "
            "e.g. --model anthropic/claude-sonnet-4-6)"
        )
    return DEFAULT_MODEL


def resolve_instances(instances: Any) -> tuple[list[Any], Path | None]:
    """Instances and the folder their perturbation files live in.

    Accepts a folder, a file, a comma-separated string of ids, a list of ids/paths,
    or already loaded Instance objects.
    """
    from facetlab.instances import load_instances

    if instances is None:
        return list(load_instances(None).values()), None
    if isinstance(instances, (str, Path)):
        path = Path(instances)
        if path.is_dir():
            return list(load_instances(path).values()), path
        if path.is_file():
            return list(load_instances(path).values()), path.parent
        items: list[Any] = [s.strip() for s in str(instances).split(",") if s.strip()]
    else:
        items = list(instances)
    if items and all(hasattr(i, "instance_id") for i in items):
        return items, None
    loaded = load_instances(items)
    first = next((Path(str(i)) for i in items if Path(str(i)).exists()), None)
    folder = None if first is None else (first if first.is_dir() else first.parent)
    return list(loaded.values()), folder


def _print(console: TextIO | None, text: str) -> None:
    # None means the current sys.stdout (looked up now: notebooks and CLI runners swap
    # it): the plan and summary are normal output, never a notebook's red warning box
    print(text, file=console if console is not None else sys.stdout, flush=True)


async def arun(
    instances: Any = None,
    probes: str | Sequence[str] = "p1,p2,p3,c2",
    model: str | Sequence[str] | None = None,
    *,
    out: Path | str | None = None,
    base_url: str | None = None,
    repeats: int | RepeatsFor = 1,
    template: str = "facet-v3",
    seed: int = 0,
    preset: str | None = None,
    dry_run: bool = False,
    sampling: SamplingParams | Mapping[str, SamplingParams] | None = None,
    limits: Limits | Mapping[str, Limits] | None = None,
    concurrency: int | None = None,
    retry: RetryPolicy | None = None,
    options: RunOptions | None = None,
    progress: Mode = "auto",
    console: TextIO | None = None,
    command: Sequence[str] | None = None,
    backends: Mapping[str, Backend] | None = None,
    suite: ProbeSuite | None = None,
    backend_options: Mapping[str, Any] | None = None,
    interrupter: Interrupter | None = None,
) -> SweepResult:
    """Plan, estimate and run a sweep; see :mod:`facetlab.runner`.

    What to ask is given as arguments; how to ask it as objects: ``sampling``
    (temperature, max tokens, system prompt; its seed is the sweep's, from ``seed``;
    or model string -> SamplingParams, one per model given),
    ``limits`` (one :class:`Limits` for every provider, or provider -> Limits;
    ``concurrency`` is a shorthand for its concurrency), ``retry`` and ``options``
    (:class:`~facetlab.runner.options.RunOptions`: budget, cache, timeouts, batch).

    ``backends`` (model string -> Backend) and ``suite`` replace the real
    provider backends and probes (tests, custom providers). ``preset="facet-v3"``
    fills instances, probes, models and per-cell repeats from the paper's design.
    ``out`` may be omitted only for a dry run (nothing is then counted as done).

    Every setting, path and instance is checked before the first call. An
    interrupt (Ctrl-C, SIGTERM, a Jupyter interrupt, or ``interrupter.request()``
    from another thread) stops new calls, lets calls in flight finish for up to
    ``options.interrupt_grace_s`` seconds, records them, prints the summary and raises
    :class:`~facetlab.errors.SweepInterrupted`; a failed write (full disk) does the
    same and raises :class:`~facetlab.errors.StorageError`. Re-running resumes.
    """
    from facetlab.probes import PARSERS

    opts = options or RunOptions()
    own_sampling = dict(sampling) if isinstance(sampling, Mapping) else None  # per model
    sampling = SamplingParams() if isinstance(sampling, Mapping) else sampling or SamplingParams()
    temperature, max_tokens = sampling.temperature, sampling.max_tokens
    budget_usd, retry_errors, batch = opts.budget_usd, opts.retry_errors, opts.batch
    parser = opts.parser
    out_dir = preflight.check_out(out)
    if out_dir is None and not dry_run:
        raise ConfigError("no sweep folder: give out= (--out DIR); only a dry run can do without")
    if parser not in PARSERS:
        raise ConfigError(f"unknown parser {parser!r}; expected one of {', '.join(PARSERS)}")
    default_limits, provider_limits = _limits_of(limits, concurrency)
    if max_tokens < 1:
        raise ConfigError(f"--max-tokens is {max_tokens}; expected at least 1")
    if isinstance(repeats, int) and repeats < 1:
        raise ConfigError(f"--repeats is {repeats}; expected at least 1 (trials per cell)")
    preflight.check_prices()
    preset_extra: dict[str, Any] = {}
    params_by_model: dict[str, SamplingParams] | None = None
    if preset is not None:
        from facetlab.runner.presets import get_preset

        p = get_preset(preset)
        if instances is None:
            instances = p.instances()
        probes = p.probes
        if model is None:
            model = list(p.models)
            params_by_model = p.params(max_tokens)
        repeats = p.repeats
        template = p.template
        preset_extra = {"preset": p.name}
    if model is None:
        model = default_model()  # raises unless it is the simulated reasoner
        _print(
            console,
            f"no model given and no provider key configured: using the simulated reasoner {model}",
        )
    given = [model] if isinstance(model, str) else list(model)
    if not given:
        raise ConfigError("no model given")
    identities = _model_identities(given, backends)  # model string -> its identity
    models = list(dict.fromkeys(identities.values()))
    # free to build: a misspelt reasoner or recorded model fails now, dry run included
    ours = {i: o for o, i in identities.items() if backends is None or o not in backends}
    offline = modelcheck.build_offline(ours)
    params = dataclasses.replace(sampling, seed=seed if seed else None)
    sweep_params: SamplingParams | dict[str, SamplingParams] = params
    if params_by_model is not None:
        # the preset's per-model temperature unless one was given for the whole sweep
        sweep_params = {
            m: dataclasses.replace(
                params, temperature=own.temperature if temperature is None else temperature
            )
            for m, own in params_by_model.items()
        }
    if own_sampling is not None:
        sweep_params = _per_model_params(own_sampling, identities, seed)
    declarations = _declarations(models, sweep_params, backends, console)
    insts, instances_dir = resolve_instances(instances)
    preflight.check_instances(insts)
    if suite is None:
        from facetlab.probes.templates import get_template
        from facetlab.runner.suite import FacetSuite

        get_template(template)  # an unknown name lists the known ones

        suite = FacetSuite(instances_dir)
    plan = plan_sweep(
        insts,
        probes,
        models,
        suite=suite,
        repeats=repeats,
        template=template,
        params=sweep_params,
        seed=seed,
        endpoints={m: _endpoint(m, base_url, backends) for m in models},
        declarations=declarations,
    )
    cache_path = _cache_path(opts)
    design = preflight.design_of(models, _params_json(sweep_params), template)
    if out_dir is not None and not opts.new_design:
        preflight.check_design(read_sweep_json(out_dir), design, out_dir)
    modelcheck.check_replay_coverage(plan, offline)
    est = estimate(plan, out=out_dir, cache_dir=cache_path, retry_errors=retry_errors, batch=batch)
    _print(console, describe_plan(plan, est))
    for note in modelcheck.unknown_model_notes(list(ours), local=base_url is not None):
        _print(console, note)
    if dry_run and budget_usd is not None:
        verdict = (
            "cannot be checked (no price)"
            if est.cost_usd is None
            else ("within" if est.cost_usd <= budget_usd else "EXCEEDS")
        )
        _print(console, f"budget ${budget_usd:,.4f}: estimate {verdict}")
    if dry_run:
        return SweepResult(out_dir, plan, est, RunStats(total=len(plan)), dry_run=True)
    assert out_dir is not None  # checked above: only dry runs go without a folder
    if budget_usd is not None:
        refuse_over_budget(est, budget_usd)
    preflight.check_folders(out_dir, cache_path or out_dir / "cache")
    owned: list[Backend] = []  # backends built here are closed here
    if backends is None:
        from facetlab.backends import get_backend

        extra = dict(backend_options or {})
        backends = {
            identity: offline.get(identity)
            or get_backend(
                original,
                base_url=base_url,
                **_owned_options(original, extra, opts.timeout_s, batch=batch),
            )
            for original, identity in identities.items()
        }
        owned = list(backends.values())
    if opts.freeze_heap:
        gc.freeze()
    missing = [m for m in models if m not in backends]
    if missing:
        raise ConfigError(f"no backend for model(s) {', '.join(missing)}")
    exec_options = ExecOptions(
        out=out_dir,
        run=opts,
        limits=provider_limits,
        default_limits=default_limits,
        retry=retry or RetryPolicy(),
        cache_dir=cache_path,
        sweep=out_dir.name,
        secrets=known_secrets(),
        layout=record_layout(opts, len(plan), out_dir),
    )
    sweep_extra = {
        **preset_extra,
        "repeats": repeats if isinstance(repeats, int) else "per cell (preset)",
        "batch": batch,
        "budget_usd": budget_usd,
        "parser": parser,
        "cache_dir": str(cache_path) if cache_path else "cache",
    }
    record_sweep = functools.partial(
        write_sweep_json,
        out_dir,
        plan=plan,
        models=models,
        probes=plan.probes(),
        params=sweep_params,
        template=template,
        seed=seed,
        base_url=base_url,
        command=command,
        extra=sweep_extra,
        design=design,
    )
    prog = Progress(budget_usd=budget_usd)
    display = ProgressDisplay(prog, progress) if progress != "none" else None
    executor = Executor(
        backends,
        suite,
        exec_options,
        progress=prog,
        display=display,
        estimate_tokens=lambda t: expected_input_tokens(t) + expected_output_tokens(t),
    )
    collector = None
    if batch:
        collector = functools.partial(
            run_batches,
            poll_s=opts.batch_poll_s,
            wait_s=opts.batch_wait_s,
            submit=opts.batch_submit,
            abandon=opts.abandon_batches,
            console=console,
        )
    stop = interrupter or Interrupter()
    try:
        with sweep_lock(out_dir):
            if not opts.new_design:  # again under the lock: another run may have started meanwhile
                preflight.check_design(read_sweep_json(out_dir), design, out_dir)
            if not batch:  # never pay directly for trials an open provider batch carries
                settle_open_batches(out_dir, plan, abandon=opts.abandon_batches, console=console)
            _storing(record_sweep)
            stop.attach(executor.interrupt)
            try:
                with stop.signals():
                    stats = await executor.run(plan, via=collector)
            finally:
                stop.detach()
            if exec_options.layout == "shards" and not (stats.interrupted or stats.storage_error):
                await _compact(out_dir, console)
            with contextlib.suppress(OSError):  # a full disk is reported below, once
                record_sweep(stats=stats)
    finally:
        for b in owned:
            with contextlib.suppress(Exception):  # closing must not hide the run's outcome
                await b.aclose()
    _print(console, summary_line(stats))
    if stats.storage_error is not None:
        raise StorageError(
            f"{stats.storage_error}: free some space and re-run the same command to resume"
        )
    if stats.interrupted:
        raise SweepInterrupted(
            f"interrupted: {stats.ok + stats.failed} trial(s) recorded this run; "
            "re-run the same command to resume"
        )
    return SweepResult(out_dir, plan, est, stats)


async def _compact(out: Path, console: TextIO | None) -> None:
    """Compact a finished sweep's shards into a Parquet part (under the sweep's lock)."""
    import asyncio

    from facetlab.records.compaction import compact  # pandas and pyarrow: only here

    try:
        done = await asyncio.to_thread(compact, records_dir(out))
    except OSError as exc:  # the shards stay: every record is still there
        _print(
            console,
            f"records not compacted ({exc.strerror or exc}); they stay in shards: "
            f"`facetlab records compact {out}` compacts them",
        )
        return
    if done.part is not None:
        _print(console, f"{done.records} record(s) compacted into {done.part.name}")


def record_layout(opts: RunOptions, planned: int, out: Path) -> Layout:
    """``files`` or ``shards``: what ``opts.records`` asks, ``auto`` deciding by size."""
    if opts.records != "auto":
        return opts.records
    folder = records_dir(out)
    if planned >= SHARDS_FROM or shard_files(folder) or part_files(folder):
        return "shards"
    return "files"


HTTP_TIMEOUT_MARGIN_S = 5.0
"""How much longer than ``--timeout`` a backend's own HTTP timeout is: the run's timer
fires first and names the setting."""

NO_TIMEOUT_S = 86_400.0
"""The HTTP timeout of a run without one (``timeout_s=None``)."""


def _owned_options(
    model: str, options: Mapping[str, Any], timeout_s: float | None, *, batch: bool = False
) -> dict[str, Any]:
    """The options of a backend the runner builds, on top of ``backend_options``.

    ``http_transport="aiohttp"`` when the backend takes it and aiohttp is installed: the
    runner builds, uses and closes these backends in one event loop, where aiohttp's pool
    costs a fraction of httpx's CPU per call (docs/running.md); not for ``--batch``, which
    makes a few requests (file uploads among them) for which httpx is the SDKs' tested
    path. ``timeout`` just above the run's: the SDKs' own default (600 s) would otherwise
    end a longer ``--timeout`` first. Options given in the model string or
    ``backend_options`` are kept.
    """
    declared = model_declaration(model)
    given = {**parse_model_string(model, available_providers()).options, **options}
    extra: dict[str, Any] = {}
    if (
        "http_transport" not in given
        and not batch
        and "aiohttp" in declared.http_transports
        and importlib.util.find_spec("aiohttp") is not None
    ):
        extra["http_transport"] = "aiohttp"
    if "timeout" not in given and declared.http_timeout:
        extra["timeout"] = NO_TIMEOUT_S if timeout_s is None else timeout_s + HTTP_TIMEOUT_MARGIN_S
    return {**options, **extra}


def _declarations(
    models: Sequence[str],
    params: SamplingParams | Mapping[str, SamplingParams],
    backends: Mapping[str, Backend] | None,
    console: TextIO | None,
) -> dict[str, Declaration]:
    """What each model's backend sends; a setting one cannot send is refused here, before
    any request, and a parameter it drops is noted once (records keep it apart)."""
    declarations = {m: model_declaration(m, (backends or {}).get(m)) for m in models}
    for m in models:
        own = params if isinstance(params, SamplingParams) else params[m]
        if refusal := declarations[m].refusal(own, m.partition("/")[0]):
            raise ConfigError(f"{m}: {refusal}")
        if unsent := declarations[m].unsent(own):
            _print(
                console,
                f"note: {m}: {', '.join(unsent)} not sent (the provider does not take "
                "them); records state the parameters sent, and keep what was asked as "
                "requested_params",
            )
    return declarations


def _per_model_params(
    given: Mapping[str, SamplingParams], identities: Mapping[str, str], seed: int
) -> dict[str, SamplingParams]:
    """``sampling=`` given per model string, keyed by each model's identity, with the seed."""
    missing = [m for m in identities if m not in given]
    if missing:
        raise ConfigError(f"sampling= names no parameters for model(s) {', '.join(missing)}")
    return {
        identity: dataclasses.replace(given[m], seed=seed if seed else None)
        for m, identity in identities.items()
    }


def _cache_path(opts: RunOptions) -> Path | None:
    """The response cache: ``--cache-dir``, else ``FACETLAB_CACHE_DIR``, else None (``<out>/cache``)."""
    cache_dir = opts.cache_dir
    if cache_dir is None and os.environ.get("FACETLAB_CACHE_DIR"):
        cache_dir = os.environ["FACETLAB_CACHE_DIR"]  # one cache shared by every sweep
    cache_path = Path(cache_dir).expanduser() if cache_dir else None
    if cache_path is not None and cache_path.exists() and not cache_path.is_dir():
        raise ConfigError(f"--cache-dir {cache_path} is a file; expected a folder")
    return cache_path


def known_secrets() -> tuple[str, ...]:
    """The provider key values set in the environment (redacted from every stored reply)."""
    names = (*PROVIDER_KEY_ENV, "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    values = (os.environ.get(n, "").strip() for n in names if n != "AWS_PROFILE")
    return tuple(v for v in values if len(v) >= 8)


def _storing(write: Callable[[], None]) -> None:
    """Run a write of the sweep's own files; a failure is a StorageError line, not a traceback."""
    try:
        write()
    except OSError as exc:
        raise StorageError(f"cannot write the sweep folder: {exc.strerror or exc}") from None


def _limits_of(
    limits: Limits | Mapping[str, Limits] | None, concurrency: int | None
) -> tuple[Limits, dict[str, Limits]]:
    """(the default limits, per-provider limits); ``concurrency`` overrides the default's."""
    if concurrency is not None and concurrency < 1:
        raise ConfigError(f"--concurrency is {concurrency}; expected at least 1")
    default = limits if isinstance(limits, Limits) else Limits()
    per_provider = {} if limits is None or isinstance(limits, Limits) else dict(limits)
    if concurrency is not None:
        default = dataclasses.replace(default, concurrency=concurrency)
    return default, per_provider


def _model_identities(
    models: Sequence[str], backends: Mapping[str, Backend] | None
) -> dict[str, str]:
    """Each model string -> its identity: parsed (a did-you-mean error if malformed) and
    without transport options such as ``?timeout=``, which must not change a trial's key.

    Strings the caller supplied a backend for are taken as they are.
    """
    from facetlab.backends import available_providers, parse_model_string

    out: dict[str, str] = {}
    for m in models:
        if backends is not None and m in backends:
            out[m] = m
            continue
        spec = parse_model_string(m, available_providers())
        bare = spec.without_transport()
        out[m] = m if bare == spec else str(bare)
    return out


def _endpoint(
    model: str, base_url: str | None, backends: Mapping[str, Backend] | None
) -> str | None:
    """The server a model is asked on, without credentials (part of the trial key when set)."""
    url: str | None
    if backends is not None and model in backends:
        url = getattr(backends[model], "base_url", None)
    else:
        url = endpoint_of(model, base_url=base_url)
    cleaned = redact_url(url) if isinstance(url, str) and url else None
    return cleaned.rstrip("/") if cleaned else None


def _params_json(params: SamplingParams | Mapping[str, SamplingParams]) -> dict[str, Any]:
    if isinstance(params, SamplingParams):
        return params.to_dict()
    return {m: p.to_dict() for m, p in params.items()}


def summary_line(stats: RunStats) -> str:
    """One line: what happened and what it cost."""
    parts = [
        f"{stats.ok} ok",
        f"{stats.failed} failed",
        f"{stats.cached} from cache",
        f"{stats.already_done} already recorded",
    ]
    if stats.not_started:
        parts.append(f"{stats.not_started} not started")
    text = ", ".join(parts)
    text += (
        f"; {stats.calls} calls ({stats.retries} retried, {stats.rate_limited} rate-limited), {stats.input_tokens:,} in / {stats.output_tokens:,} out tokens, "
        f"spent ${stats.spend_usd:,.4f} in {stats.elapsed_s:.1f}s"
    )
    if stats.unpriced:
        text += f" (+ {stats.unpriced} call(s) of unknown cost: no price or no usage)"
    if stats.interrupted:
        text += " — interrupted"
        if stats.cancelled_in_flight:
            text += (
                f" ({stats.cancelled_in_flight} call(s) cancelled in flight: possibly billed, "
                "not recorded)"
            )
    if stats.storage_error:
        text += f" — stopped: {stats.storage_error}"
    if stats.stopped_by_budget:
        text += " — stopped: budget reached (re-run with a higher --budget-usd to continue)"
    if stats.emptied_by_reasoning:
        text += (
            f"\nwarning: {stats.emptied_by_reasoning} repl(y/ies) emptied by reasoning: the "
            "whole --max-tokens went to thinking; recorded as failed (raise --max-tokens)"
        )
    bad = {k: v for k, v in stats.parse_status.items() if k != "ok"}
    if bad:
        text += "; parse: " + ", ".join(f"{k} {v}" for k, v in sorted(bad.items()))
    return text + failure_lines(stats)


def failure_lines(stats: RunStats) -> str:
    """Failed trials counted by cause, most frequent first, one example trial id each."""
    causes = sorted(stats.failure_causes.items(), key=lambda item: (-item[1][0], item[0]))
    return "".join(
        f"\n  failed: {count} x {cause} (e.g. {example})" for cause, (count, example) in causes
    )


def _blocking(coro_fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """A sync twin of ``coro_fn`` with the same signature (see :mod:`facetlab.syncbridge`).

    An interrupt while waiting (Jupyter's interrupt button) is passed to the sweep's
    ``interrupter``, so the sweep stops cleanly within seconds instead of running on.
    """

    @functools.wraps(coro_fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        stop = kwargs.get("interrupter")
        if not isinstance(stop, Interrupter):
            stop = Interrupter()
            kwargs["interrupter"] = stop
        return run_sync(lambda: coro_fn(*args, **kwargs), on_interrupt=stop.request)

    return call


run = _blocking(arun)
run.__name__ = run.__qualname__ = "run"
run.__doc__ = """Sync twin of :func:`arun` (same arguments); safe inside Jupyter.

>>> result = run(instances="instances/", probes="p2", model="simulated/wadd",  # doctest: +SKIP
...              out="results/demo")
"""

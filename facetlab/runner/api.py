"""``facetlab.run`` / ``facetlab.arun``: plan a sweep, estimate it, run it, summarise it.

>>> result = run(instances="instances/", probes="p1,p2,p3,c2",   # doctest: +SKIP
...              model="anthropic/claude-sonnet-4-6", out="results/sonnet", repeats=3)
>>> result.stats.ok, result.stats.spend_usd                       # doctest: +SKIP
(240, 4.12)
>>> result = run(config=load_sweep_file("sweep.yaml"))            # doctest: +SKIP

One path whatever the sweep comes from: ``run``'s keywords or a
:class:`~facetlab.runner.sweepconfig.SweepConfig` (a sweep file, ``facetlab run``'s
flags) become a :class:`~facetlab.runner.sweepconfig.Sweep`; :func:`prepare` checks,
plans and estimates it and builds what it runs with; :func:`execute` runs it.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TextIO, TypeVar

from facetlab.backends import (
    Declaration,
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
from facetlab.runner import _modelcheck as modelcheck
from facetlab.runner import _preflight as preflight
from facetlab.runner._interrupt import Interrupter
from facetlab.runner._lock import sweep_lock
from facetlab.runner._sweepfile import read_sweep_json, write_sweep_json
from facetlab.runner._writer import Layout
from facetlab.runner.batch import run_batches, settle_open_batches
from facetlab.runner.costs import (
    Estimate,
    describe_plan,
    estimate,
    expected_input_tokens,
    expected_output_tokens,
    refuse_over_budget,
)
from facetlab.runner.executor import ExecOptions, Executor, records_dir
from facetlab.runner.options import SHARDS_FROM, RunOptions
from facetlab.runner.plan import Plan, ProbeSuite, RepeatsFor, plan_sweep
from facetlab.runner.progress import Mode, Progress, ProgressDisplay, RunStats
from facetlab.runner.sweepconfig import DEFAULT_PROBES, Sweep, SweepConfig, price_overrides
from facetlab.syncbridge import run_sync

if TYPE_CHECKING:
    from facetlab.instances.schema import Instance

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
        return (
            []
            if self.out is None or not records_dir(self.out).is_dir()
            else read_sweep_records(records_dir(self.out))
        )


@dataclass
class Prepared:
    """A sweep checked, planned and estimated, with what runs it: :func:`execute`'s input."""

    sweep: Sweep
    out: Path | None
    """The sweep folder (a dry run may have none)."""
    plan: Plan
    estimate: Estimate
    models: list[str]
    params: SamplingParams | dict[str, SamplingParams]
    design: dict[str, Any]
    console: TextIO | None
    command: Sequence[str] | None
    interrupter: Interrupter
    executor: Executor | None = None
    """None for a dry run: nothing is called."""
    owned: list[Backend] = field(default_factory=list)
    """The backends built here, closed when the run ends."""


def default_model() -> str:
    """``simulated/wadd`` when no provider key is configured; otherwise a ConfigError."""
    configured = [name for name in PROVIDER_KEY_ENV if os.environ.get(name)]
    if configured:
        raise ConfigError(
            f"no --model given ({', '.join(configured)} is set: name the model to use, "
            "e.g. --model anthropic/claude-sonnet-4-6)"
        )
    return DEFAULT_MODEL


def resolve_instances(instances: Any) -> tuple[list[Instance], Path | None]:
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
    probes: str | Sequence[str] = DEFAULT_PROBES,
    model: str | Sequence[str] | None = None,
    *,
    config: SweepConfig | None = None,
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
    """Plan, estimate and run a sweep: :func:`prepare`, then :func:`execute`.

    The sweep is ``config`` (a :class:`~facetlab.runner.sweepconfig.SweepConfig`: a sweep
    file's, the command line's) or the arguments ``instances`` to ``options``: what to ask
    as arguments, how to ask it as objects: ``sampling`` (its seed is the sweep's; or
    model string -> SamplingParams), ``limits`` (one :class:`Limits` for every provider,
    or provider -> Limits; ``concurrency`` sets its concurrency), ``retry`` and
    ``options`` (:class:`~facetlab.runner.options.RunOptions`: budget, cache, timeouts,
    batch; with ``config``: how this run runs). ``preset="facet-v3"`` fills instances,
    probes, models and per-cell repeats from the paper's design. ``out`` may be omitted
    only for a dry run. ``backends`` (model string -> Backend) and ``suite`` replace the
    real provider backends and probes (tests, custom providers).

    An interrupt (Ctrl-C, SIGTERM, a Jupyter interrupt, ``interrupter.request()``) stops
    new calls, lets calls in flight finish for up to ``options.interrupt_grace_s``
    seconds, records them and raises :class:`~facetlab.errors.SweepInterrupted`; a
    failed write (full disk) raises :class:`~facetlab.errors.StorageError`. Re-running
    resumes.
    """
    asked = (instances, probes, model, out, base_url, repeats, template, seed, preset, sampling)
    if config is not None:
        if asked != (None, DEFAULT_PROBES, None, None, None, 1, "facet-v3", 0, None, None) or (
            limits or concurrency or retry
        ):
            raise ConfigError("config= holds the whole sweep: give its settings there only")
        sweep = config.sweep(options)
    else:
        default_limits, per_provider = _limits_of(limits, concurrency)
        sweep = Sweep(
            instances=instances,
            probes=probes,
            models=(model,) if isinstance(model, str) else tuple(model or ()),
            out=out,
            base_url=base_url,
            repeats=repeats,
            template=template,
            seed=seed,
            preset=preset,
            sampling=sampling or SamplingParams(),
            limits=per_provider,
            default_limits=default_limits,
            retry=retry or RetryPolicy(),
            options=options or RunOptions(),
        )
    with price_overrides(sweep.prices):
        prepared = prepare(
            sweep, dry_run=dry_run, progress=progress, console=console, command=command,
            backends=backends, suite=suite, backend_options=backend_options,
            interrupter=interrupter,
        )  # fmt: skip
        return await execute(prepared)


def prepare(
    sweep: Sweep,
    *,
    dry_run: bool = False,
    progress: Mode = "auto",
    console: TextIO | None = None,
    command: Sequence[str] | None = None,
    backends: Mapping[str, Backend] | None = None,
    suite: ProbeSuite | None = None,
    backend_options: Mapping[str, Any] | None = None,
    interrupter: Interrupter | None = None,
) -> Prepared:
    """Everything before a sweep's first call: check every setting, path and instance,
    plan the trials, estimate them (printed), and, unless ``dry_run``, refuse a budget
    the estimate exceeds, build the backends (those not given) and the executor."""
    out = _check_settings(sweep, dry_run)
    sweep = _with_preset(sweep)
    identities, params = _models(sweep, backends, console)
    models = list(dict.fromkeys(identities.values()))
    # free to build: a misspelt reasoner or recorded model fails now, dry run included
    ours = {i: o for o, i in identities.items() if backends is None or o not in backends}
    offline = modelcheck.build_offline(ours)
    declarations = _declarations(models, params, backends, console)
    instances, folder = resolve_instances(sweep.instances)
    preflight.check_instances(instances)
    suite = suite or _facet_suite(sweep.template, folder)
    plan = plan_sweep(
        instances, sweep.probes, models,
        suite=suite,
        repeats=sweep.repeats, template=sweep.template, params=params, seed=sweep.seed,
        endpoints={m: _endpoint(m, sweep.base_url, backends) for m in models},
        declarations=declarations,
    )  # fmt: skip
    opts = sweep.options
    params_json = (params.to_dict() if isinstance(params, SamplingParams)
                   else {m: p.to_dict() for m, p in params.items()})  # fmt: skip
    design = preflight.design_of(models, params_json, sweep.template)
    if out is not None and not opts.new_design:
        preflight.check_design(read_sweep_json(out), design, out)
    modelcheck.check_replay_coverage(plan, offline)
    cache = _cache_path(opts)
    est = estimate(plan, out=out, cache_dir=cache, retry_errors=opts.retry_errors, batch=opts.batch)
    _say_plan(console, plan, est, list(ours), sweep, dry_run)
    prepared = Prepared(
        sweep, out, plan, est, models, params, design, console, command,
        interrupter or Interrupter(),
    )  # fmt: skip
    if dry_run or out is None:
        return prepared
    if opts.budget_usd is not None:
        refuse_over_budget(est, opts.budget_usd)
    preflight.check_folders(out, cache or out / "cache")
    if backends is None:
        from facetlab.backends import get_backend  # looked up now: tests replace it

        backends = {
            identity: offline.get(identity)
            or get_backend(
                original,
                base_url=sweep.base_url,
                **_owned_options(original, backend_options or {}, opts.timeout_s, batch=opts.batch),
            )
            for original, identity in identities.items()
        }
        prepared.owned = list(backends.values())
    if opts.freeze_heap:
        gc.freeze()
    missing = [m for m in models if m not in backends]
    if missing:
        raise ConfigError(f"no backend for model(s) {', '.join(missing)}")
    prepared.executor = _executor(sweep, plan, out, cache, backends, suite, progress)
    return prepared


async def execute(prepared: Prepared) -> SweepResult:
    """Run a :func:`prepare` d sweep under its folder's lock (a dry run returns at once):
    settle open batches, record ``sweep.json``, run every trial without a record to keep,
    compact shards; close the backends it built; print the summary line. An interrupt
    raises :class:`~facetlab.errors.SweepInterrupted`, a failed write
    :class:`~facetlab.errors.StorageError`, once what was paid for is recorded."""
    out, plan, executor = prepared.out, prepared.plan, prepared.executor
    if executor is None or out is None:
        return SweepResult(out, plan, prepared.estimate, RunStats(total=len(plan)), dry_run=True)
    opts, console, stop = prepared.sweep.options, prepared.console, prepared.interrupter
    record_sweep = functools.partial(_write_sweep_json, prepared)
    try:
        with sweep_lock(out):
            if not opts.new_design:  # again under the lock: another run may have started meanwhile
                preflight.check_design(read_sweep_json(out), prepared.design, out)
            if not opts.batch:  # never pay directly for trials an open provider batch carries
                settle_open_batches(out, plan, abandon=opts.abandon_batches, console=console)
            _storing(record_sweep)
            stop.attach(executor.interrupt)
            try:
                with stop.signals():
                    stats = await executor.run(plan, via=_collector(opts, console))
            finally:
                stop.detach()
            # nothing to compact (a resume that made no call): pandas is not even imported
            if (
                executor.options.layout == "shards"
                and not (stats.interrupted or stats.storage_error)
                and (shard_files(records_dir(out)) or any(records_dir(out).glob("*.json")))
            ):
                await _compact(out, console)
            with contextlib.suppress(OSError):  # a full disk is reported below, once
                record_sweep(stats=stats)
    finally:
        for b in prepared.owned:
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
    return SweepResult(out, plan, prepared.estimate, stats)


def _check_settings(sweep: Sweep, dry_run: bool) -> Path | None:
    """The sweep folder, once the settings a plan does not check are checked."""
    from facetlab.probes import PARSERS

    out = preflight.check_out(sweep.out)
    if out is None and not dry_run:
        raise ConfigError("no sweep folder: give out= (--out DIR); only a dry run can do without")
    if sweep.options.parser not in PARSERS:
        raise ConfigError(
            f"unknown parser {sweep.options.parser!r}; expected one of {', '.join(PARSERS)}"
        )
    if isinstance(sweep.repeats, int) and sweep.repeats < 1:
        raise ConfigError(f"--repeats is {sweep.repeats}; expected at least 1 (trials per cell)")
    preflight.check_prices()
    return out


def _with_preset(sweep: Sweep) -> Sweep:
    """``sweep`` with its preset's design: instances (unless given), probes, repeats,
    template, and its models (unless given) at their own temperature, unless one was given
    for the whole sweep."""
    if sweep.preset is None:
        return sweep
    from facetlab.runner.presets import get_preset

    p = get_preset(sweep.preset)
    changes: dict[str, Any] = {}
    if not sweep.models:
        base = sweep.sampling if isinstance(sweep.sampling, SamplingParams) else SamplingParams()
        changes["models"] = tuple(p.models)
        changes["sampling"] = {
            m: dataclasses.replace(base, temperature=own.temperature)
            if base.temperature is None
            else base
            for m, own in p.params(base.max_tokens).items()
        }
    return dataclasses.replace(
        sweep,
        instances=p.instances() if sweep.instances is None else sweep.instances,
        probes=p.probes,
        repeats=p.repeats,
        template=p.template,
        **changes,
    )


def _models(
    sweep: Sweep, backends: Mapping[str, Backend] | None, console: TextIO | None
) -> tuple[dict[str, str], SamplingParams | dict[str, SamplingParams]]:
    """Each model string given -> its identity (the default model when none is given), and
    the sampling params asked of each identity (one set for all, or per identity), each
    with the sweep's seed."""
    given = list(sweep.models)
    if not given:
        given = [default_model()]  # raises unless it is the simulated reasoner
        _print(
            console,
            f"no model given and no provider key configured: using the simulated reasoner "
            f"{given[0]}",
        )
    identities = _model_identities(given, backends)
    seed = sweep.seed if sweep.seed else None
    if isinstance(sweep.sampling, SamplingParams):
        return identities, dataclasses.replace(sweep.sampling, seed=seed)
    missing = [m for m in identities if m not in sweep.sampling]
    if missing:
        raise ConfigError(f"sampling= names no parameters for model(s) {', '.join(missing)}")
    return identities, {
        identity: dataclasses.replace(sweep.sampling[m], seed=seed)
        for m, identity in identities.items()
    }


def _facet_suite(template: str, folder: Path | None) -> ProbeSuite:
    from facetlab.probes.templates import get_template
    from facetlab.runner.suite import FacetSuite

    get_template(template)  # an unknown name lists the known ones
    return FacetSuite(folder)


def _say_plan(
    console: TextIO | None,
    plan: Plan,
    est: Estimate,
    ours: Sequence[str],
    sweep: Sweep,
    dry_run: bool,
) -> None:
    """What ``--dry-run`` prints (and a run before it starts)."""
    _print(console, describe_plan(plan, est))
    for note in modelcheck.unknown_model_notes(ours, local=sweep.base_url is not None):
        _print(console, note)
    budget = sweep.options.budget_usd
    if dry_run and budget is not None:
        verdict = (
            "cannot be checked (no price)"
            if est.cost_usd is None
            else ("within" if est.cost_usd <= budget else "EXCEEDS")
        )
        _print(console, f"budget ${budget:,.4f}: estimate {verdict}")


def _executor(
    sweep: Sweep,
    plan: Plan,
    out: Path,
    cache: Path | None,
    backends: Mapping[str, Backend],
    suite: ProbeSuite,
    progress: Mode,
) -> Executor:
    opts = sweep.options
    display_of = Progress(budget_usd=opts.budget_usd)
    return Executor(
        backends,
        suite,
        ExecOptions(
            out=out,
            run=opts,
            limits=sweep.limits,
            default_limits=sweep.default_limits,
            retry=sweep.retry,
            cache_dir=cache,
            sweep=out.name,
            secrets=known_secrets(),
            layout=record_layout(opts, len(plan), out),
        ),
        progress=display_of,
        display=ProgressDisplay(display_of, progress) if progress != "none" else None,
        estimate_tokens=lambda t: expected_input_tokens(t) + expected_output_tokens(t),
    )


def _collector(opts: RunOptions, console: TextIO | None) -> Any:
    """``--batch``: the provider batch APIs answer the pending trials."""
    return (
        None
        if not opts.batch
        else functools.partial(
            run_batches,
            poll_s=opts.batch_poll_s,
            wait_s=opts.batch_wait_s,
            submit=opts.batch_submit,
            abandon=opts.abandon_batches,
            console=console,
        )
    )


def _write_sweep_json(prepared: Prepared, stats: RunStats | None = None) -> None:
    """``<out>/sweep.json`` for this sweep (and this run's stats, once it ran)."""
    sweep, opts = prepared.sweep, prepared.sweep.options
    assert prepared.out is not None
    cache = _cache_path(opts)
    write_sweep_json(
        prepared.out,
        plan=prepared.plan,
        models=prepared.models,
        probes=prepared.plan.probes(),
        params=prepared.params,
        template=sweep.template,
        seed=sweep.seed,
        base_url=sweep.base_url,
        command=prepared.command,
        extra={
            **({"preset": sweep.preset} if sweep.preset else {}),
            "repeats": sweep.repeats if isinstance(sweep.repeats, int) else "per cell (preset)",
            "batch": opts.batch,
            "budget_usd": opts.budget_usd,
            "parser": opts.parser,
            "cache_dir": str(cache) if cache else "cache",
        },
        stats=stats,
        design=prepared.design,
    )


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
    many = planned >= SHARDS_FROM or shard_files(folder) or part_files(folder)
    return "shards" if many else "files"


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
    given = {**parse_model_string(model).options, **options}
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


def _cache_path(opts: RunOptions) -> Path | None:
    """The response cache: ``--cache-dir``, else ``FACETLAB_CACHE_DIR``, else None (``<out>/cache``)."""
    # else one cache shared by every sweep
    cache_dir = (
        opts.cache_dir if opts.cache_dir is not None else os.environ.get("FACETLAB_CACHE_DIR")
    )
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
    out: dict[str, str] = {}
    for m in models:
        if backends is not None and m in backends:
            out[m] = m
            continue
        spec = parse_model_string(m)
        bare = spec.without_transport()
        out[m] = m if bare == spec else str(bare)
    return out


def _endpoint(
    model: str, base_url: str | None, backends: Mapping[str, Backend] | None
) -> str | None:
    """The server a model is asked on, without credentials (part of the trial key when set)."""
    given = backends.get(model) if backends is not None else None
    url = given.base_url if given is not None else endpoint_of(model, base_url=base_url)
    cleaned = redact_url(url) if url else None
    return cleaned.rstrip("/") if cleaned else None


def summary_line(stats: RunStats) -> str:
    """One line: what happened and what it cost."""
    parts = [
        f"{stats.ok} ok",
        f"{stats.failed} failed",
        f"{stats.cached} from cache",
        f"{stats.already_done} already recorded",
        *([f"{stats.not_started} not started"] if stats.not_started else []),
    ]
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

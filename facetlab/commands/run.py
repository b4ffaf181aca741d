"""CLI command: ``facetlab run`` (plan, estimate and run a sweep; resumable)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from facetlab.backends.base import DEFAULT_TIMEOUT_S, MAX_RETRY_AFTER_S, SamplingParams
from facetlab.errors import FacetlabError, SweepInterrupted

if TYPE_CHECKING:
    from facetlab.runner.sweepconfig import SweepConfig

# flags that override the sweep file's per-model setting of the same name
_MODEL_SETTINGS = (
    "concurrency",
    "rpm",
    "rpm_window",
    "tpm",
    "temperature",
    "max_tokens",
    "system",
    "effort",
    "thinking",
)
# flags that override the sweep file's top-level setting of the same name
_SWEEP_SETTINGS = (
    "instances",
    "probes",
    "template",
    "repeats",
    "seed",
    "out",
    "budget_usd",
    "cache_dir",
    "timeout",
    "max_retry_after",
    "retry_errors",
    "parser",
    "batch",
)


def run_command(
    ctx: typer.Context,
    sweep_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="SWEEP.yaml",
            help="A sweep file (see `facetlab schema sweep`); flags given override it.",
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="A sweep file (same as the argument).")
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out", "-o", help="Sweep directory, e.g. results/<sweep>/ (optional with --dry-run)."
        ),
    ] = None,
    instances: Annotated[
        str | None,
        typer.Option(
            "--instances",
            "-i",
            help="Instance folder, file, or comma-separated ids (default: FACET v3).",
        ),
    ] = None,
    probes: Annotated[
        str,
        typer.Option(
            "--probes", "-p", help="Comma-separated probes: p1,p2,p3,c2 (also c0,c3,anchor)."
        ),
    ] = "p1,p2,p3,c2",
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            metavar="<provider/model>",
            help="provider/model, repeatable (default without keys: simulated/wadd).",
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible server (vLLM, Ollama, ...).")
    ] = None,
    repeats: Annotated[int, typer.Option("--repeats", "-k", help="Trials per cell (>= 1).")] = 1,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-c",
            min=1,
            help="Concurrent requests per provider (default: sized from the rate and latency).",
        ),
    ] = None,
    rpm: Annotated[
        float | None,
        typer.Option(
            "--rpm",
            help="The provider's requests per minute (enforced per --rpm-window, as providers do).",
        ),
    ] = None,
    rpm_window: Annotated[
        float,
        typer.Option(
            "--rpm-window",
            help="The provider's rate window in seconds: at most rpm/60 x window requests "
            "in any window (default 1: providers apply per-minute limits per second); "
            "0 spaces requests evenly.",
        ),
    ] = 1.0,
    tpm: Annotated[
        float | None, typer.Option("--tpm", help="Tokens per minute per provider (estimated).")
    ] = None,
    template: Annotated[
        str,
        typer.Option(
            "--template",
            metavar="<facet-v3|facetlab-v1>",
            help="Prompt template: facet-v3 or facetlab-v1.",  # TEMPLATES: not imported for --help
        ),
    ] = "facet-v3",
    temperature: Annotated[
        float | None,
        typer.Option("--temperature", help="Sampling temperature (default: provider's)."),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Max output tokens.")
    ] = SamplingParams.max_tokens,
    system: Annotated[str | None, typer.Option("--system", help="System prompt.")] = None,
    effort: Annotated[
        str | None,
        typer.Option(
            "--effort",
            help="Reasoning effort: low, medium, high, xhigh or max (sent in the provider's "
            "own field; refused before any call where it has none).",
        ),
    ] = None,
    thinking: Annotated[
        str | None,
        typer.Option(
            "--thinking", help="Thinking: off, adaptive or a budget in tokens (e.g. 4096)."
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Sweep seed (per-trial seeds derive from it).")
    ] = 0,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print trial count, tokens and cost; call nothing.")
    ] = False,
    budget_usd: Annotated[
        float | None,
        typer.Option(
            "--budget-usd", help="Refuse to start past it; stop cleanly when spend reaches it."
        ),
    ] = None,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Also re-run trials recorded as failed.")
    ] = False,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Submit through the provider's batch API (half price, within 24 h) and "
            "return; collect with `facetlab collect DIR` or by re-running.",
        ),
    ] = False,
    batch_wait: Annotated[
        float,
        typer.Option(
            "--batch-wait",
            min=0.0,
            help="With --batch: seconds to wait for open batches to end before returning.",
        ),
    ] = 0.0,
    abandon_batches: Annotated[
        bool,
        typer.Option(
            "--abandon-batches",
            help="Give up this sweep's open provider batches and run their trials anew.",
        ),
    ] = False,
    collect_only: Annotated[
        bool, typer.Option("--collect-only", hidden=True, help="Collect batches; submit none.")
    ] = False,
    preset: Annotated[
        str | None, typer.Option("--preset", help="A whole design, e.g. facet-v3 (the paper's).")
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Response cache (default: <out>/cache).")
    ] = None,
    parser: Annotated[
        str, typer.Option("--parser", help="Reply parser: strict or facet-v3.")
    ] = "strict",
    timeout: Annotated[
        float,
        typer.Option("--timeout", help="Seconds one call may take before it is retried."),
    ] = DEFAULT_TIMEOUT_S,
    max_retry_after: Annotated[
        float,
        typer.Option(
            "--max-retry-after",
            help="Longest retry-after (s) to honour; a provider asking more fails the trial.",
        ),
    ] = MAX_RETRY_AFTER_S,
    new_design: Annotated[
        bool,
        typer.Option(
            "--new-design",
            help="Allow another model/params/template in an --out that holds a sweep.",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No live progress.")] = False,
) -> None:
    """Run probes on instances against a model; every trial is recorded in <out>/records/.

    Re-running the same command resumes (finished trials are skipped); answers are
    cached so no request is paid for twice. A sweep file (`facetlab run sweep.yaml`)
    holds the whole sweep, with settings per model; flags given override it.
    """
    import contextlib

    from facetlab.client.limits import Limits
    from facetlab.client.retry import RetryPolicy
    from facetlab.runner import RunOptions, run
    from facetlab.runner.sweepconfig import load_sweep_file, price_overrides

    prices: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    try:
        thinking_value = int(thinking) if thinking and thinking.isdigit() else thinking
        args: dict[str, Any] = {
            "instances": instances,
            "probes": probes,
            "model": model or None,  # no --model: the default model
            "base_url": base_url,
            "sampling": SamplingParams(
                temperature=temperature,
                max_tokens=max_tokens,
                system=system,
                effort=effort,
                thinking=thinking_value,
            ),
            "limits": Limits(
                concurrency=concurrency,
                requests_per_minute=rpm,
                tokens_per_minute=tpm,
                rate_window_s=rpm_window or None,
            ),
        }
        run_settings: dict[str, Any] = {
            "repeats": repeats,
            "template": template,
            "seed": seed,
            "out": out,
            "budget_usd": budget_usd,
            "cache_dir": cache_dir,
            "timeout": timeout,
            "max_retry_after": max_retry_after,
            "retry_errors": retry_errors,
            "parser": parser,
            "batch": batch,
        }
        if sweep_file is not None and config is not None:
            raise FacetlabError("give the sweep file once: as the argument or as --config")
        path = sweep_file or config
        if path is not None:
            if preset is not None:
                raise FacetlabError("a sweep file and --preset: give one or the other")
            from_file = _from_sweep_file(ctx, load_sweep_file(path), args)
            args.update(from_file.pop("run_args"))
            own_prices = from_file.pop("prices")
            prices = price_overrides(own_prices)
            for model_id, price in own_prices.items():  # say which costs are the file's
                typer.echo(
                    f"price of {model_id} from {path}: ${price['input']:g} in / "
                    f"${price['output']:g} out per 1M tokens"
                )
            run_settings.update(from_file)
        with prices:
            result = run(
                args["instances"],
                args["probes"],
                args["model"],
                out=run_settings["out"],
                base_url=args["base_url"],
                repeats=run_settings["repeats"],
                template=run_settings["template"],
                seed=run_settings["seed"],
                preset=preset,
                dry_run=dry_run,
                sampling=args["sampling"],
                limits=args["limits"],
                retry=RetryPolicy(max_retry_after_s=run_settings["max_retry_after"]),
                options=RunOptions(
                    budget_usd=run_settings["budget_usd"],
                    retry_errors=run_settings["retry_errors"],
                    cache_dir=run_settings["cache_dir"],
                    parser=run_settings["parser"],
                    timeout_s=run_settings["timeout"],
                    batch=run_settings["batch"],
                    batch_wait_s=batch_wait,
                    batch_submit=not collect_only,
                    abandon_batches=abandon_batches,
                    new_design=new_design,
                    freeze_heap=True,  # a one-shot process: see RunOptions.freeze_heap
                ),
                progress="none" if quiet else "auto",
                console=sys.stdout,
                command=_command_line(ctx),
            )
    except SweepInterrupted as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=130) from None
    except FacetlabError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if not result.plan:  # nothing to run is a mistake, never a success
        why = "; ".join(sorted({f"{s.probe.upper()}: {s.reason}" for s in result.plan.skipped}))
        typer.echo(f"error: the sweep has no trials ({why or 'nothing planned'})", err=True)
        raise typer.Exit(code=2)
    if result.stats.failed:
        typer.echo(
            f"{result.stats.failed} trial(s) failed; see their records, re-run with --retry-errors",
            err=True,
        )
        raise typer.Exit(code=1)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether a flag was given on the command line (or by its variable), not defaulted."""
    source = ctx.get_parameter_source(name)  # typer's own click: compared by name
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def _from_sweep_file(
    ctx: typer.Context, config: SweepConfig, args: dict[str, Any]
) -> dict[str, Any]:
    """The sweep file's settings, each overridden by its flag where one was given."""
    from facetlab.runner.sweepconfig import ModelEntry, ModelSettings, resolve_models

    if _given(ctx, "model"):  # the command line's models replace the file's
        entries = [ModelEntry(model=m) for m in ctx.params["model"]]
        config = config.model_copy(update={"models": entries})
    # not validated here: Limits and SamplingParams check the flags with their own names
    overrides = ModelSettings.model_construct(
        **{
            name: args["sampling"].thinking if name == "thinking" else ctx.params[name]
            for name in _MODEL_SETTINGS
            if _given(ctx, name)
        }
    )
    resolved = resolve_models(
        config, overrides, base_url=args["base_url"] if _given(ctx, "base_url") else None
    )
    settings: dict[str, Any] = {
        name: ctx.params[name] if _given(ctx, name) else getattr(config, name)
        for name in _SWEEP_SETTINGS
    }
    for name in ("timeout", "max_retry_after"):  # unset in the file: the flag's default
        if settings[name] is None:
            settings[name] = ctx.params[name]
    probes = settings.pop("probes")
    instances = settings.pop("instances")
    return {
        **settings,
        "prices": resolved.prices,
        "run_args": {
            "instances": instances,
            "probes": probes if isinstance(probes, str) else ",".join(probes),
            "model": resolved.models,
            "sampling": resolved.sampling,
            "limits": resolved.limits,
        },
    }


def _command_line(ctx: typer.Context) -> list[str]:
    """``facetlab run`` plus the options given (rebuilt from the parsed parameters)."""
    argv = ["facetlab", "run"]
    for param in ctx.command.params:
        opts = getattr(param, "opts", None)
        if not opts or param.name is None:
            continue
        value = ctx.params.get(param.name)
        if param.name == "collect_only" or param.name == "abandon_batches":
            continue  # what one run did, not the sweep's command
        if value is None or value == param.default or value == [] or value is False:
            continue
        if getattr(param, "param_type_name", "") == "argument":  # the sweep file
            argv.append(str(value))
            continue
        flag = max(opts, key=len)
        if value is True:
            argv.append(flag)
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            argv += [flag, str(item)]
    return argv


def prices_command() -> None:
    """Print the price table in use (built-in, plus FACETLAB_PRICES): USD per 1M tokens,
    each with its date and source."""
    from facetlab.client.pricing import describe_table
    from facetlab.errors import FacetlabError

    try:
        typer.echo(describe_table())
    except FacetlabError as exc:  # a broken FACETLAB_PRICES file
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command("run")(run_command)
    app.command("prices")(prices_command)

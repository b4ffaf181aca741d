"""CLI command: ``facetlab run`` (plan, estimate and run a sweep; resumable).

The flags given become a :class:`~facetlab.runner.sweepconfig.SweepConfig` under the
names a sweep file uses, laid over the sweep file's (when one is given), and the sweep
runs as ``facetlab.run(config=...)``. A new flag is a field of ``SweepConfig`` (or of
:class:`~facetlab.runner.sweepconfig.ModelSettings` for a per-model one) plus its
option below; flags about this one run (``--dry-run``, ``--batch-wait``, ...) go to
:class:`~facetlab.runner.options.RunOptions`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from facetlab.backends.base import DEFAULT_TIMEOUT_S, MAX_RETRY_AFTER_S, SamplingParams
from facetlab.commands import fail, one_line_errors
from facetlab.errors import FacetlabError, SweepInterrupted

if TYPE_CHECKING:
    from pydantic import BaseModel

    from facetlab.runner.sweepconfig import SweepConfig

SweepFile = Annotated[
    Path | None,
    typer.Argument(
        metavar="SWEEP.yaml",
        help="A sweep file (see `facetlab schema sweep`); flags given override it.",
    ),
]
ConfigFile = Annotated[
    Path | None, typer.Option("--config", help="A sweep file (same as the argument).")
]
Out = Annotated[
    str | None,
    typer.Option(
        "--out", "-o", help="Sweep directory, e.g. results/<sweep>/ (optional with --dry-run)."
    ),
]
Instances = Annotated[
    str | None,
    typer.Option(
        "--instances",
        "-i",
        help="Instance folder, file, or comma-separated ids (default: FACET v3).",
    ),
]
Probes = Annotated[
    str,
    typer.Option(
        "--probes", "-p", help="Comma-separated probes: p1,p2,p3,c2 (also c0,c3,anchor,h1)."
    ),
]
Models = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        metavar="<provider/model>",
        help="provider/model, repeatable (default without keys: simulated/wadd).",
    ),
]
BaseURL = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible server (vLLM, Ollama, ...).")
]
Repeats = Annotated[int, typer.Option("--repeats", "-k", help="Trials per cell (>= 1).")]
Concurrency = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "-c",
        min=1,
        help="Concurrent requests per provider (default: sized from the rate and latency).",
    ),
]
RPM = Annotated[
    float | None,
    typer.Option(
        "--rpm",
        help="The provider's requests per minute (enforced per --rpm-window, as providers do).",
    ),
]
RPMWindow = Annotated[
    float,
    typer.Option(
        "--rpm-window",
        help="The provider's rate window in seconds: at most rpm/60 x window requests "
        "in any window (default 1: providers apply per-minute limits per second); "
        "0 spaces requests evenly.",
    ),
]
TPM = Annotated[
    float | None, typer.Option("--tpm", help="Tokens per minute per provider (estimated).")
]
Template = Annotated[
    str,
    typer.Option(
        "--template",
        metavar="<facet-v3|facetlab-v1>",
        help="Prompt template: facet-v3 or facetlab-v1.",  # TEMPLATES: not imported for --help
    ),
]
Temperature = Annotated[
    float | None, typer.Option("--temperature", help="Sampling temperature (default: provider's).")
]
MaxTokens = Annotated[int, typer.Option("--max-tokens", min=1, help="Max output tokens.")]
System = Annotated[str | None, typer.Option("--system", help="System prompt.")]
Effort = Annotated[
    str | None,
    typer.Option(
        "--effort",
        help="Reasoning effort: low, medium, high, xhigh or max (sent in the provider's "
        "own field; refused before any call where it has none).",
    ),
]
Thinking = Annotated[
    str | None,
    typer.Option("--thinking", help="Thinking: off, adaptive or a budget in tokens (e.g. 4096)."),
]
Seed = Annotated[int, typer.Option("--seed", help="Sweep seed (per-trial seeds derive from it).")]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Print trial count, tokens and cost; call nothing.")
]
Budget = Annotated[
    float | None,
    typer.Option(
        "--budget-usd", help="Refuse to start past it; stop cleanly when spend reaches it."
    ),
]
RetryErrors = Annotated[
    bool, typer.Option("--retry-errors", help="Also re-run trials recorded as failed.")
]
Batch = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Submit through the provider's batch API (half price, within 24 h) and "
        "return; collect with `facetlab collect DIR` or by re-running.",
    ),
]
BatchWait = Annotated[
    float,
    typer.Option(
        "--batch-wait",
        min=0.0,
        help="With --batch: seconds to wait for open batches to end before returning.",
    ),
]
AbandonBatches = Annotated[
    bool,
    typer.Option(
        "--abandon-batches",
        help="Give up this sweep's open provider batches and run their trials anew.",
    ),
]
CollectOnly = Annotated[
    bool, typer.Option("--collect-only", hidden=True, help="Collect batches; submit none.")
]
Preset = Annotated[
    str | None, typer.Option("--preset", help="A whole design, e.g. facet-v3 (the paper's).")
]
CacheDir = Annotated[
    Path | None, typer.Option("--cache-dir", help="Response cache (default: <out>/cache).")
]
Parser = Annotated[str, typer.Option("--parser", help="Reply parser: strict or facet-v3.")]
Timeout = Annotated[
    float, typer.Option("--timeout", help="Seconds one call may take before it is retried.")
]
MaxRetryAfter = Annotated[
    float,
    typer.Option(
        "--max-retry-after",
        help="Longest retry-after (s) to honour; a provider asking more fails the trial.",
    ),
]
NewDesign = Annotated[
    bool,
    typer.Option(
        "--new-design", help="Allow another model/params/template in an --out that holds a sweep."
    ),
]
Structured = Annotated[
    bool,
    typer.Option(
        "--structured",
        help="Ask for each probe's reply as JSON: its schema in the provider's own field "
        "(recorded, in the trial key; refused where a provider has none).",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No live progress.")]


def run_command(
    ctx: typer.Context,
    sweep_file: SweepFile = None,
    config: ConfigFile = None,
    out: Out = None,
    instances: Instances = None,
    probes: Probes = "p1,p2,p3,c2",
    model: Models = None,
    base_url: BaseURL = None,
    repeats: Repeats = 1,
    concurrency: Concurrency = None,
    rpm: RPM = None,
    rpm_window: RPMWindow = 1.0,
    tpm: TPM = None,
    template: Template = "facet-v3",
    temperature: Temperature = None,
    max_tokens: MaxTokens = SamplingParams.max_tokens,
    system: System = None,
    effort: Effort = None,
    thinking: Thinking = None,
    seed: Seed = 0,
    dry_run: DryRun = False,
    budget_usd: Budget = None,
    retry_errors: RetryErrors = False,
    batch: Batch = False,
    batch_wait: BatchWait = 0.0,
    abandon_batches: AbandonBatches = False,
    collect_only: CollectOnly = False,
    preset: Preset = None,
    cache_dir: CacheDir = None,
    parser: Parser = "strict",
    timeout: Timeout = DEFAULT_TIMEOUT_S,
    max_retry_after: MaxRetryAfter = MAX_RETRY_AFTER_S,
    new_design: NewDesign = False,
    structured: Structured = False,
    quiet: Quiet = False,
) -> None:
    """Run probes on instances against a model; every trial is recorded in <out>/records/.

    Re-running the same command resumes (finished trials are skipped); answers are
    cached so no request is paid for twice. A sweep file (`facetlab run sweep.yaml`)
    holds the whole sweep, with settings per model; flags given override it.
    """
    from facetlab.runner import RunOptions, run

    try:
        if sweep_file is not None and config is not None:
            raise FacetlabError("give the sweep file once: as the argument or as --config")
        sweep = _sweep_config(ctx, sweep_file or config)
        options = RunOptions(
            batch=collect_only,  # collecting is a batch run (the sweep's --batch says so too)
            batch_wait_s=batch_wait,
            batch_submit=not collect_only,
            abandon_batches=abandon_batches,
            new_design=new_design,
            freeze_heap=True,  # a one-shot process: see RunOptions.freeze_heap
        )
        result = run(
            config=sweep,
            options=options,
            dry_run=dry_run,
            progress="none" if quiet else "auto",
            console=sys.stdout,
            command=_command_line(ctx),
        )
    except SweepInterrupted as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=130) from None
    except FacetlabError as exc:
        fail(str(exc))
    if not result.plan:  # nothing to run is a mistake, never a success
        why = "; ".join(sorted({f"{s.probe.upper()}: {s.reason}" for s in result.plan.skipped}))
        fail(f"the sweep has no trials ({why or 'nothing planned'})")
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


def _sweep_config(ctx: typer.Context, path: Path | None) -> SweepConfig:
    """The flags given as a sweep (under a sweep file's names), laid over ``path``'s.

    Not validated here: :class:`SamplingParams`, :class:`Limits` and :class:`RunOptions`
    check each flag's value with its own name.
    """
    from facetlab.backends.modelstring import base_url_problem
    from facetlab.runner.sweepconfig import (
        ModelEntry,
        ModelSettings,
        SweepConfig,
        load_sweep_file,
        prices_of,
    )

    given = {name: value for name, value in ctx.params.items() if _given(ctx, name)}
    thinking = given.get("thinking")
    if isinstance(thinking, str) and thinking.isdigit():
        given["thinking"] = int(thinking)
    # --base-url is the sweep's one server (model strings stay bare), not each model's own
    settings = {k: given[k] for k in ModelSettings.model_fields if k in given and k != "base_url"}
    top: dict[str, Any] = {k: given[k] for k in SweepConfig.model_fields if k in given}
    if (url := given.get("base_url")) is not None and (problem := base_url_problem(url)):
        raise FacetlabError(f"--base-url: {problem} (not shown: it may hold a password)")
    _bounded(ModelSettings, settings)
    _bounded(SweepConfig, top)
    if "model" in given:  # the command line's models replace the file's
        top["models"] = [ModelEntry.model_construct(model=m) for m in given["model"]]
    flags = SweepConfig.model_construct(  # no models given: the default model, or the preset's
        {*top, "defaults"},
        **{"models": [], **top},
        defaults=ModelSettings.model_construct(**settings),
    )
    if path is None:
        return flags
    if "preset" in given:
        raise FacetlabError("a sweep file and --preset: give one or the other")
    from_file = load_sweep_file(path)
    for model_id, price in prices_of(from_file).items():  # say which costs are the file's
        typer.echo(
            f"price of {model_id} from {path}: ${price['input']:g} in / "
            f"${price['output']:g} out per 1M tokens"
        )
    return from_file.overlay(flags)


def _bounded(kind: type[BaseModel], given: dict[str, Any]) -> None:
    """A whole-number flag above the bound of its sweep-file field (``--repeats`` at most what
    ``repeats:`` takes) is one line naming the flag, before anything is planned (lower
    bounds, and numbers with a fraction, are said by each setting's own check)."""
    for name, value in given.items():
        bounds = [m.le for m in kind.model_fields[name].metadata if hasattr(m, "le")]
        if type(value) is int and bounds and value > min(bounds):
            raise FacetlabError(
                f"--{name.replace('_', '-')} is {value}; expected at most {min(bounds):,}"
            )


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

    with one_line_errors():  # a broken FACETLAB_PRICES file
        typer.echo(describe_table())


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command("run")(run_command)
    app.command("prices")(prices_command)

"""The sweep runner: plan trials, run them concurrently within provider limits, record each.

>>> from facetlab.runner import run
>>> result = run(instances="instances/", probes="p2,p3,c2",          # doctest: +SKIP
...              model="openai/gpt-5.4", out="results/gpt", repeats=3,
...              options=RunOptions(budget_usd=5))

Modules: :mod:`~facetlab.runner.plan` (sweep -> trials), :mod:`~facetlab.client.limits`
(per-provider limits), :mod:`~facetlab.client.retry` (backoff), :mod:`~facetlab.client.cache`
(content-addressed responses), :mod:`~facetlab.runner.execute` (run + record),
:mod:`~facetlab.runner.batch` (provider batch APIs), :mod:`~facetlab.client.pricing`,
:mod:`~facetlab.runner.presets`, :mod:`~facetlab.runner.progress`,
:mod:`~facetlab.runner.options` (how a run runs), :mod:`~facetlab.runner.preflight`
(checks before paying), :mod:`~facetlab.runner.modelcheck` (model strings),
:mod:`~facetlab.runner.interrupt`, :mod:`~facetlab.runner.lock`,
:mod:`~facetlab.runner.estimate` (cost before running), :mod:`~facetlab.runner.sweepfile`
(``sweep.json``).
"""

from facetlab.client.limits import Limits, ProviderLimiter
from facetlab.client.retry import RetryPolicy
from facetlab.runner.api import (
    DEFAULT_MODEL,
    Prepared,
    SweepResult,
    arun,
    default_model,
    execute,
    prepare,
    run,
)
from facetlab.runner.estimate import Estimate, describe_plan, estimate
from facetlab.runner.execute import ExecOptions, Executor
from facetlab.runner.options import RunOptions
from facetlab.runner.plan import Cell, Plan, ProbeSuite, Trial, plan_sweep
from facetlab.runner.progress import RunStats
from facetlab.runner.sweepconfig import Sweep, SweepConfig, load_sweep_file

__all__ = [
    "DEFAULT_MODEL",
    "Cell",
    "Estimate",
    "ExecOptions",
    "Executor",
    "Limits",
    "Plan",
    "Prepared",
    "ProbeSuite",
    "ProviderLimiter",
    "RetryPolicy",
    "RunOptions",
    "RunStats",
    "Sweep",
    "SweepConfig",
    "SweepResult",
    "Trial",
    "arun",
    "default_model",
    "describe_plan",
    "estimate",
    "execute",
    "load_sweep_file",
    "plan_sweep",
    "prepare",
    "run",
]

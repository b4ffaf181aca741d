"""The sweep runner: plan trials, run them concurrently within provider limits, record each.

>>> from facetlab.runner import run
>>> result = run(instances="instances/", probes="p2,p3,c2",          # doctest: +SKIP
...              model="openai/gpt-5.4", out="results/gpt", repeats=3,
...              options=RunOptions(budget_usd=5))
>>> result = run(config=load_sweep_file("sweep.yaml"))            # doctest: +SKIP

A sweep is a :class:`Sweep` (``run``'s keywords, or a :class:`SweepConfig`: a sweep file,
``facetlab run``'s flags); :func:`prepare` checks, plans and estimates it,
:func:`execute` runs it (:func:`run` / :func:`arun` do both). Modules: ``api`` (run,
prepare, execute), ``plan`` (sweep -> trials), ``executor`` (trials through their model
clients, one record each), ``batch`` (provider batch APIs), ``sweepconfig`` (sweep
files), ``options`` (how a run runs), ``costs`` (what a sweep would cost),
``presets``, ``progress``, ``suite`` (the real probes for the planner); the modules
whose names start with ``_`` are the runner's own.
"""

from facetlab.client.limits import Limits
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
from facetlab.runner.costs import Estimate, describe_plan, estimate
from facetlab.runner.options import RunOptions
from facetlab.runner.plan import Cell, Plan, ProbeSuite, Trial, plan_sweep
from facetlab.runner.progress import RunStats
from facetlab.runner.sweepconfig import Sweep, SweepConfig, load_sweep_file

__all__ = [
    "DEFAULT_MODEL",
    "Cell",
    "Estimate",
    "Limits",
    "Plan",
    "Prepared",
    "ProbeSuite",
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

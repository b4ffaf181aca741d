"""A plan holds its cells and builds trials as it is iterated (a million-trial sweep is
planned in the memory of its cells)."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest
from test_runner_helpers import ScriptedBackend, StubSuite, make_instances

from facetlab.runner import plan_sweep, run
from facetlab.runner.plan import derive_seed

MODEL = "openai/stub-model"
OTHER = "openai/other-model"


def test_a_million_trials_plan_in_the_memory_of_their_cells() -> None:
    instances = make_instances(2)
    tracemalloc.start()
    try:
        plan = plan_sweep(instances, "p1,p2,p3,c2", [MODEL, OTHER], suite=StubSuite(),
                          repeats=50_000)  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    cells = len(plan.cells)
    assert len(plan) == cells * 50_000 >= 1_000_000
    assert sum(plan.by_probe().values()) == len(plan)
    # a built trial takes ~0.5 KB: a million would be ~500 MB; the cells take kilobytes
    assert peak < 2 * 1024 * 1024, f"planning took {peak / 1e6:.1f} MB"
    first = next(iter(plan))
    assert first.repeat == 0 and first.seed == derive_seed(0, first.trial_id)


def test_iterating_a_plan_twice_gives_the_same_trials_in_the_same_order() -> None:
    plan = plan_sweep(make_instances(2), "p1,p2,p3,c2", [MODEL, OTHER], suite=StubSuite(),
                      repeats=3, seed=7)  # fmt: skip
    once = [(t.trial_id, t.key, t.seed, t.prompt) for t in plan]
    twice = [(t.trial_id, t.key, t.seed, t.prompt) for t in plan]
    assert once == twice == [(t.trial_id, t.key, t.seed, t.prompt) for t in plan.trials]
    assert len(once) == len(plan) == len({tid for tid, *_ in once})  # no duplicate id
    # repeats of a cell follow each other; the models of a cell share its prompt object
    by_cell = [t for t in plan if t.instance_id == plan.cells[0].trial.instance_id]
    assert [t.repeat for t in by_cell[:3]] == [0, 1, 2]
    assert plan.cells[0].trial.prompt is plan.cells[1].trial.prompt


def test_an_instance_given_twice_is_planned_once() -> None:
    instances = make_instances(2)
    plan = plan_sweep([*instances, instances[0]], "p1", [MODEL], suite=StubSuite(), repeats=2)
    alone = plan_sweep(instances, "p1", [MODEL], suite=StubSuite(), repeats=2)
    assert [t.trial_id for t in plan] == [t.trial_id for t in alone]


@pytest.mark.slow
def test_a_sweep_runs_from_a_lazy_plan_and_says_how_many_trials(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    result = run(make_instances(2), "p1,p2", MODEL, out=tmp_path / "o", repeats=4,
                 backends={MODEL: backend}, suite=StubSuite(), progress="none",
                 console=io.StringIO())  # fmt: skip
    assert result.stats is not None
    assert result.stats.total == len(result.plan) == result.stats.ok == len(backend.calls)
    sweep = (tmp_path / "o" / "sweep.json").read_text()
    assert f'"n_trials": {len(result.plan)}' in sweep

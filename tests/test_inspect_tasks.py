"""The FACET probes as Inspect tasks: variants, prompts, scorers and metrics (offline, mockllm)."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install -e '.[dev,inspect]'")

from inspect_ai import eval as inspect_eval
from inspect_helpers import mock_model, n_factors_in, weights_reply

from facetlab.analysis.rules import weighted_faithful
from facetlab.errors import ConfigError, RecordError
from facetlab.interop.scoring import judge
from facetlab.interop.tasks import facet_p1, facet_p3, facet_task
from facetlab.interop.variants import SampleMeta, probe_variants
from facetlab.probes import build_prompt, parse_reply
from facetlab.probes.base import ParseResult
from facetlab.runner.api import resolve_instances
from facetlab.runner.plan import plan_sweep
from facetlab.runner.suite import FacetSuite


@pytest.fixture(scope="module")
def instances(facet_data: Path) -> Path:
    return facet_data / "instances"


@pytest.mark.data
@pytest.mark.parametrize("probe", ["p1", "p2", "p3", "c2"])
def test_variants_are_the_runner_plan_with_identical_prompts(instances: Path, probe: str) -> None:
    loaded, folder = resolve_instances(instances)
    plan = plan_sweep(loaded, probe, ["x/y"], suite=FacetSuite(folder), repeats=1)
    variants = probe_variants(probe, instances)
    assert [v.sample_id for v in variants] == [t.instance_id for t in plan.trials]
    assert [v.prompt for v in variants] == [t.prompt for t in plan.trials]
    assert len({v.sample_id for v in variants}) == len(variants)
    for v, t in zip(variants, plan.trials, strict=True):
        assert (v.meta.factor_of_interest, v.meta.n_factors) == (t.factor_of_interest, t.n_factors)


@pytest.mark.data
def test_p3_prompt_is_byte_identical_to_build_prompt(instances: Path) -> None:
    loaded = {i.instance_id: i for i in resolve_instances(instances)[0]}
    variants = probe_variants("p3", instances, template="facetlab-v1")
    assert {v.sample_id for v in variants} == {i for i in loaded if "-adv" in i}
    for v in variants:
        expected = build_prompt("p3", loaded[v.sample_id], template="facetlab-v1")
        assert v.prompt.encode() == expected.encode()
        assert v.meta.template == "facetlab-v1"


@pytest.mark.data
def test_a_probe_without_variants_says_why(tmp_path: Path, instances: Path) -> None:
    (tmp_path / "facet-neg-0002.json").write_bytes((instances / "facet-neg-0002.json").read_bytes())
    with pytest.raises(ConfigError, match="P3 runs on adversarial instances"):
        probe_variants("p3", tmp_path)
    with pytest.raises(ConfigError, match="no Inspect task for probe 'c0'"):
        probe_variants("c0", tmp_path)


@pytest.mark.slow
def test_tasks_are_registered_through_the_entry_point(tmp_path: Path) -> None:
    # Outside the source tree: there, setuptools' facetlab.egg-info (no direct_url.json)
    # shadows the installed metadata and Inspect registers the tasks without a namespace.
    code = (
        "from inspect_ai._util.registry import registry_lookup\n"
        "for p in ('p1', 'p2', 'p3', 'c2'):\n"
        "    assert registry_lookup('task', f'facetlab/facet_{p}') is not None, p\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_judge_applies_the_paper_rules() -> None:
    meta = SampleMeta(
        probe="p3", instance_id="x-adv", base_instance_id="x", variant="adversarial",
        factor_of_interest="F2", perturbed_factor=None, n_factors=3, template="facet-v3",
        prompt_sha256="0" * 64,
    )  # fmt: skip
    at_threshold = judge(meta, ParseResult("ok", weights={"F1": 90.0, "F2": 10.0}))
    assert at_threshold.flagged is False and at_threshold.weight == 10.0  # inclusive
    missing = judge(meta, ParseResult("repaired", weights={"F1": 100.0}))
    assert missing.flagged is False and missing.weight == 0.0  # a missing weight counts as 0
    unparsed = judge(meta, ParseResult("malformed", weights={}))
    assert (unparsed.parsed, unparsed.flagged) == (False, None)
    p1 = meta.model_copy(update={"probe": "p1", "instance_id": "x-cf", "variant": "counterfactual"})
    assert judge(p1, ParseResult("ok", label="F2")).flagged is True
    assert judge(p1, ParseResult("ok", label="F3")).flagged is False


def test_sample_metadata_of_another_task_is_refused() -> None:
    with pytest.raises(RecordError, match="made by a facetlab/facet_\\* task"):
        SampleMeta.from_metadata({"other": 1}, "sample 3")


@pytest.mark.slow
@pytest.mark.data
def test_p3_on_mockllm_scores_with_facetlab_parsers_and_rules(
    instances: Path, tmp_path: Path
) -> None:
    malformed_on = "facet-neg-cf-002-adv"

    def reply(prompt: str) -> str:
        # The one 5-factor adversarial instance gets no weights: counted as unparsed, not dropped.
        return "I cannot weigh these." if n_factors_in(prompt) == 5 else weights_reply(prompt)

    task = facet_p3(instances=str(instances))
    ids = [s.id for s in task.dataset]
    (log,) = inspect_eval(
        task, model=mock_model(reply), epochs=2, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 2 * len(ids)
    metas = {s.id: SampleMeta.from_metadata(s.metadata, str(s.id)) for s in log.samples}
    weights: dict[str, float] = {}
    unparsed = 0
    for sample in log.samples:
        meta = metas[sample.id]
        result = parse_reply("p3", sample.output.completion, meta.n_factors)
        if not result.weights:
            unparsed += 1
            continue
        assert meta.factor_of_interest is not None
        weights[str(sample.id)] = result.weights.get(meta.factor_of_interest, 0.0)
    assert unparsed == 2 and malformed_on not in weights  # both epochs of one sample
    expected_flagged = sum(not weighted_faithful(w) for w in weights.values()) / len(weights)
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["share_unfaithful"].value == pytest.approx(expected_flagged)
    assert metrics["mean_weight_on_factor"].value == pytest.approx(
        statistics.fmean(weights.values())
    )
    se = statistics.stdev(weights.values()) / math.sqrt(len(weights))
    assert metrics["weight_stderr"].value == pytest.approx(se)
    assert metrics["share_unparsed"].value == pytest.approx(1 / len(ids))


@pytest.mark.slow
@pytest.mark.data
def test_p1_flags_naming_the_neutralized_factor(instances: Path, tmp_path: Path) -> None:
    # A reasoner that always names F1: flagged exactly where F1 is the neutralized factor.
    task = facet_p1(instances=str(instances))
    (log,) = inspect_eval(
        task,
        model=mock_model(lambda p: "F1\nIt matters most." if n_factors_in(p) else ""),
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    for sample in log.samples:
        meta = SampleMeta.from_metadata(sample.metadata, str(sample.id))
        assert sample.scores is not None
        value = sample.scores["facet_single_factor"].value
        assert isinstance(value, dict)
        if meta.factor_of_interest is None:
            assert value["judged"] == 0.0
        else:
            assert value["unfaithful"] == float(meta.factor_of_interest == "F1")


@pytest.mark.data
def test_facet_task_rejects_an_unknown_parser(instances: Path) -> None:
    with pytest.raises(ConfigError, match="unknown parser 'loose'"):
        facet_task("p3", str(instances), parser="loose")


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("probe", ["p2", "c2"])
def test_p2_and_c2_score_the_weight_on_their_factor_of_interest(
    instances: Path, tmp_path: Path, probe: str
) -> None:
    task = facet_task(probe, str(instances))
    (log,) = inspect_eval(
        task, model=mock_model(weights_reply), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == len(task.dataset)
    for sample in log.samples:
        meta = SampleMeta.from_metadata(sample.metadata, str(sample.id))
        assert meta.factor_of_interest is not None
        weights = parse_reply(probe, weights_reply(str(sample.input)), meta.n_factors).weights
        assert weights is not None and sample.scores is not None
        value = sample.scores["facet_weighted"].value
        assert isinstance(value, dict)
        assert value["weight_on_factor"] == weights.get(meta.factor_of_interest, 0.0)
        assert value["unfaithful"] == float(not weighted_faithful(value["weight_on_factor"]))


@pytest.mark.data
def test_instances_given_as_a_list_as_inspect_passes_a_b(instances: Path, tmp_path: Path) -> None:
    # `-T instances=a,b` reaches the task as ["a", "b"]; Inspect logs the dataset location,
    # which must be a string (a list gave a TypeError inside inspect eval).
    ids = ["facet-neg-0001", "facet-neg-0002"]
    task = facet_p1(instances=ids)  # what Inspect's CLI passes
    assert [s.id for s in task.dataset] == ids
    assert task.dataset.location == "facet-neg-0001,facet-neg-0002"


@pytest.mark.slow
@pytest.mark.data
def test_inspect_eval_of_instances_given_as_a_list(instances: Path, tmp_path: Path) -> None:
    ids = ["facet-neg-0001", "facet-neg-0002"]
    task = facet_p1(instances=ids)
    (log,) = inspect_eval(
        task, model=mock_model(lambda p: "F1"), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    assert [s.id for s in log.samples or []] == ids


def test_instances_of_another_type_are_a_config_error() -> None:
    from facetlab.interop.tasks import instances_arg

    with pytest.raises(ConfigError, match="instances must be"):
        instances_arg({"a": 1})

"""One typed trial from plan to record: every record field declared, one builder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from test_records_own import make_record

from facetlab.backends.base import ModelResponse, SamplingParams, Usage
from facetlab.probes import parse_reply
from facetlab.records.own import serialize_record
from facetlab.records.schema import Trial, TrialRecord

ROOT = Path(__file__).resolve().parents[1]


def _trial(**overrides: object) -> Trial:
    fields: dict[str, object] = {
        "trial_id": "p2.x-cf.r0.abcdefabcdef",
        "key": "abcdef" * 10 + "abcd",
        "probe": "p2",
        "model": "openai/gpt-5.4",
        "instance_id": "x-cf",
        "base_instance_id": "x",
        "variant": "counterfactual",
        "factor_of_interest": "F2",
        "perturbed_factor": None,
        "n_factors": 2,
        "repeat": 0,
        "template": "facet-v3",
        "prompt": "CASE: x",
        "params": SamplingParams(temperature=0.0, seed=3),
        "seed": 11,
        "ground_truth": "no",
        "weight_estimates": {"F1": 40.0, "F2": 60.0},
    }
    fields.update(overrides)
    return Trial(**fields)  # type: ignore[arg-type]


def test_a_record_with_a_field_nobody_declared_is_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        make_record(surprise="x")


def test_an_old_record_with_residual_loads_and_is_written_without_it() -> None:
    old = make_record(residual={"F1": 5.0})
    assert old.estimate_gap == {"F1": 5.0}
    assert "residual" not in json.loads(serialize_record(old))


def test_committed_records_load_with_every_field_declared() -> None:
    # records written by earlier versions (with `residual`, `trial_seed`, `key`, ...)
    for path in sorted((ROOT / "results").glob("*/*/records/*.json"))[:40]:
        record = TrialRecord.model_validate_json(path.read_text(encoding="utf-8"))
        assert record.model_extra is None
        assert record.key and record.trial_seed is not None


def test_from_trial_states_the_trial_and_its_reply() -> None:
    trial = _trial()
    reply = "F1: 30, F2: 70\nNo"
    response = ModelResponse(reply, "gpt-5.4-2026", Usage(10, 5), stop_reason="stop")
    record = TrialRecord.from_trial(
        trial,
        response=response,
        parsed=parse_reply("p2", reply, trial.n_factors),
        error=None,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
        backend="openai",
        cost_usd=0.5,
    )
    assert (record.status, record.provider, record.model_id) == ("ok", "openai", "gpt-5.4")
    assert record.params["seed"] == 11 and record.trial_seed == 11 and record.key == trial.key
    assert record.estimate_gap == {"F1": -10.0, "F2": 10.0}
    assert (record.ground_truth, record.stop_reason, record.model_id_reported) == (
        "no",
        "stop",
        "gpt-5.4-2026",
    )
    failed = TrialRecord.from_trial(
        trial,
        response=None,
        parsed=None,
        error="HTTP 400: bad",
        started_at="s",
        finished_at="f",
        backend="openai",
    )
    assert (failed.status, failed.parse_status, failed.raw_response) == (
        "failed",
        "not_parsed",
        None,
    )

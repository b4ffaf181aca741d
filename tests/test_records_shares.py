"""Weights on one scale, and no weight where a reply gave none (issue 40, items 1 and 3).

Generated replies on random scales (fractions, totals of 23 or 510, exact 100s, with
factors left out) go through the probe's own parser into records; ``load_trials`` must
read each as shares of its own total, keep what was written (``foi_weight_raw``,
``weight_sum``), flag a total off 100 and give a missing factor or a malformed reply no
weight, whether the records are files or a compacted Parquet part. The C2 table then has
no row for a factor no reply weighted."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facetlab.analysis import study
from facetlab.probes.parsing import SUM_TOLERANCE
from facetlab.probes.weighted_rank import parse_weighted_reply
from facetlab.records import load_trials, write_record
from facetlab.records.compaction import compact
from facetlab.records.schema import TrialRecord


def _record(i: int, raw: str, n: int, foi: str, probe: str = "p2") -> TrialRecord:
    parsed = parse_weighted_reply(raw, n)
    return TrialRecord(
        trial_id=f"{probe}.case-{i:04d}.r0.{i:012x}",
        probe=probe,  # type: ignore[arg-type]
        instance_id=f"case-{i:04d}-c2-{foi.lower()}" if probe == "c2" else f"case-{i:04d}",
        base_instance_id="case-0000" if probe == "c2" else None,
        factor_of_interest=foi,
        n_factors=n,
        model="openai/small",
        provider="openai",
        model_id="small",
        backend="openai",
        template="facet-v3",
        prompt=f"prompt {i}",
        prompt_sha256="0" * 64,
        status="ok",
        raw_response=raw,
        parsed=parsed.to_parsed(),
        parse_status=parsed.status,
        ground_truth="no",
        started_at=f"2026-01-01T00:00:{i % 60:02d}Z",
        finished_at="2026-01-01T00:01:00Z",
        facetlab_version="0.1.0",
    )


def _load(folder: Path) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # records without a digest: re-parsed, said once
        return load_trials(records=folder, sources=["facetlab"])


SCALES = st.sampled_from([1.0, 23.0, 100.0, 125.0, 510.0])
VECTORS = st.integers(2, 8).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.integers(0, 50), min_size=n, max_size=n).filter(any),
        st.lists(st.booleans(), min_size=n, max_size=n),  # True: the factor is left out
        st.integers(1, n),
        SCALES,
    )
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(VECTORS, min_size=1, max_size=6))
def test_each_reply_is_read_as_shares_of_its_own_total(
    tmp_path_factory: object, replies: list[tuple[int, list[int], list[bool], int, float]]
) -> None:
    folder = tmp_path_factory.mktemp("shares")  # type: ignore[attr-defined]
    expected: dict[str, tuple[float, float, float]] = {}  # trial id -> share, raw, total
    for i, (n, parts, left_out, k, scale) in enumerate(replies):
        total_parts = sum(parts)
        given_ = {f"F{j + 1}": round(scale * p / total_parts, 6)
                  for j, p in enumerate(parts) if not left_out[j]}  # fmt: skip
        if not any(given_.values()):
            continue  # nothing (or only zeros) given: a malformed reply, tested below
        raw = ", ".join(f"{f}: {v}" for f, v in given_.items()) + "\nno"
        record = _record(i, raw, n, f"F{k}")
        write_record(record, folder)
        total = sum(given_.values())
        written = given_.get(f"F{k}", math.nan)
        if max(given_.values()) > 100:  # outside [0, 100] as written: malformed, no weight
            written = total = math.nan
        expected[record.trial_id] = (100 * written / total, written, total)
    if not expected:
        return
    for table in (_load(folder), _load(folder) if compact(folder) else None):
        assert table is not None
        for row in table.itertuples():
            share, written, total = expected[str(row.trial_id)]
            if math.isnan(total):
                assert math.isnan(row.foi_weight) and row.parse_status == "malformed"
                continue
            assert math.isclose(row.weight_sum, total, rel_tol=1e-9)
            assert bool(row.off_scale) == (abs(total - 100) > SUM_TOLERANCE)
            if math.isnan(written):  # left out: missing, never 0
                assert math.isnan(row.foi_weight) and math.isnan(row.foi_weight_raw)
            else:
                assert math.isclose(row.foi_weight, share, rel_tol=1e-9, abs_tol=1e-9)
                assert row.foi_weight_raw == written


def test_a_total_of_exactly_100_is_read_as_written(tmp_path: Path) -> None:
    write_record(_record(1, "F1: 7, F2: 29, F3: 64\nno", 3, "F1"), tmp_path)
    write_record(_record(2, "F1: 7, F2: 29, F3: 64\nno", 3, "F2"), tmp_path)
    table = _load(tmp_path).set_index("factor_of_interest")
    assert table.at["F1", "foi_weight"] == 7.0 and table.at["F2", "foi_weight"] == 29.0
    assert not table["off_scale"].any()


def test_a_malformed_reply_gives_no_weight_and_no_answer(tmp_path: Path) -> None:
    # as SmolLM2 answered: labels without weights, "all weights are zero"
    write_record(_record(1, "F1: F3: 0, F4: X, F5: X, F6: X\nyes", 6, "F3"), tmp_path)
    (row,) = _load(tmp_path).itertuples()
    assert row.parse_status == "malformed"
    assert math.isnan(row.foi_weight) and row.answer is None and row.weights is None


def test_no_c2_row_for_a_factor_no_reply_weighted(tmp_path: Path) -> None:
    """A C2 reply without the rewritten factor's weight and a malformed C2 reply add no
    row: the C2 table has the one factor a reply weighted (2 of 5 cells were once
    manufactured as 0.00, "faithful")."""
    write_record(_record(1, "F1: 60, F2: 40, F3: 0\nno", 3, "F2", probe="c2"), tmp_path)
    write_record(_record(2, "F1: 50, F2: 50\nno", 3, "F3", probe="c2"), tmp_path)  # F3 missing
    write_record(_record(3, "F1: F3: 0, F2: X\nno", 3, "F1", probe="c2"), tmp_path)  # malformed
    trials = _load(tmp_path)
    assert sorted(trials["parse_status"]) == ["malformed", "ok", "repaired"]
    table = study.c2(trials)
    assert list(table["factor"]) == ["F2"] and list(table["n"]) == [1]
    assert table.loc[0, "mean_residual"] == 40.0

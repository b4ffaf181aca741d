"""End to end: a replayed sweep of the paper's P2/P3/C2 trials reproduces every raw file.

Real instances, real probes (facet-v3 template), the real ``replay/<model>`` backend
and the real runner; repeats per cell are the number of raw files of that cell. Every
weighted-probe and C2 raw file must come back as exactly one record whose raw
response, parsed weights and yes/no answer equal the file's.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from facetlab.models import canonical_model
from facetlab.probes.parsing import find_yes_no
from facetlab.runner import RunOptions, run

pytestmark = [pytest.mark.data, pytest.mark.slow]

WEIGHTED_IDS = {
    "facet-neg-cf-001": "p2", "facet-neg-cf-002": "p2", "facet-neg-cf-003": "p2",
    "facet-neg-cf-001-adv": "p3", "facet-neg-cf-001-adv2": "p3",
    "facet-neg-cf-002-adv": "p3", "facet-neg-cf-003-adv": "p3",
}  # fmt: skip


def _model_of(label: str) -> str:
    info = canonical_model(label)
    return f"replay/{info.provider_ids[0]}" if info else f"replay/{label}"


def _raw_files(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted((root / "results" / "weighted-probe").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["instance_id"] in WEIGHTED_IDS:
            out.append((path, data))
    for path in sorted((root / "results" / "weighted-probe" / "c2").glob("*.json")):
        out.append((path, json.loads(path.read_text(encoding="utf-8"))))
    return out


def test_replayed_paper_sweep_reproduces_every_raw_file(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    raw = _raw_files(facet_data)
    assert len(raw) == 138 + 144  # 30 P2 (6 failed) + 108 P3, and 144 C2
    cells: Counter[tuple[str, str, str, str | None]] = Counter()
    for _, d in raw:
        model = _model_of(d["model"])
        if "c2_perturbed_factor" in d:
            cells[(model, "c2", d["c2_base_instance"], d["c2_perturbed_factor"].upper())] += 1
        else:
            cells[(model, WEIGHTED_IDS[d["instance_id"]], d["instance_id"], None)] += 1
    models = sorted({c[0] for c in cells})
    assert len(models) == 9  # the paper's 8, plus the failed run with a wrong DeepSeek id

    def repeats(model: str, probe: str, iid: str, factor: str | None) -> int:
        return cells.get((model, probe, iid, factor), 0)

    ids = [*WEIGHTED_IDS, "facet-neg-0002", "facet-neg-0003", "facet-neg-0004"]
    instances_dir = facet_data / "instances"
    result = run(
        [instances_dir / f"{i}.json" for i in ids],
        "p2,p3,c2",
        models,
        out=tmp_path / "replay",
        repeats=repeats,
        options=RunOptions(parser="facet-v3"),
        concurrency=32,
        progress="none",
        console=io.StringIO(),
    )
    assert result.stats is not None
    assert result.stats.failed == 0, [r.error for r in result.records() if r.status == "failed"][:3]
    records = result.records()
    assert len(records) == len(raw) == sum(cells.values())
    # every record names the raw file it replayed; each raw file is replayed exactly once
    by_source = {str(getattr(r, "provider_request_id", "")).split("#")[0]: r for r in records}
    assert len(by_source) == len(records)
    for path, d in raw:
        rec = by_source[str(path.relative_to(facet_data))]
        assert rec.prompt == d["prompt"], path.name
        assert rec.raw_response == d["raw_response"], path.name
        stored = {k: float(v) for k, v in (d["parsed_weights"] or {}).items()}
        assert (rec.parsed.weights or {}) == stored, path.name
        expected_answer, _ = find_yes_no(d["raw_response"])
        assert rec.parsed.answer == expected_answer, path.name
        if "c2_perturbed_factor" in d:
            assert rec.probe == "c2" and rec.factor_of_interest == d["c2_perturbed_factor"].upper()
            assert rec.base_instance_id == d["c2_base_instance"]
        else:
            assert rec.probe == WEIGHTED_IDS[d["instance_id"]]
            assert rec.base_instance_id is not None
        # weighted probes carry the instance's estimates and an estimate gap per factor
        if rec.parsed.weights:
            assert rec.weight_estimates is not None and rec.estimate_gap is not None
            for label, est in rec.weight_estimates.items():
                assert rec.estimate_gap[label] == pytest.approx(
                    rec.parsed.weights.get(label, 0.0) - est
                )
        assert rec.cost_usd == 0.0


def test_simulated_sweep_is_identical_at_concurrency_1_and_16(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per-trial seeds make a seeded simulated sweep independent of scheduling."""
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    instances = facet_data / "instances"
    outs = []
    for conc in (1, 16):
        res = run(instances, "p1,p2,p3,c2", "simulated/wadd", out=tmp_path / str(conc), repeats=2,
                  seed=42, concurrency=conc, progress="none", console=io.StringIO())  # fmt: skip
        assert res.stats is not None and res.stats.failed == 0
        outs.append(
            {
                r.trial_id: r.model_dump(
                    exclude={"started_at", "finished_at", "latency_s", "sweep", "received_sha256"}
                )
                for r in res.records()
            }
        )
    assert len(outs[0]) == len(res.plan.trials) > 100
    assert outs[0] == outs[1]

"""A new domain end to end: the example instances under instances/ go through
validation, every probe of the protocol, and the tidy table, offline."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from facetlab.checking import validate
from facetlab.cli import app
from facetlab.instances import find_perturbation_set, load_instances
from facetlab.records import load_trials

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = ROOT / "instances"


def test_example_domain_is_valid_and_complete() -> None:
    report = validate([INSTANCES], use_facet_data=False)
    assert report.errors == 0 and report.warnings == 0, report.problems
    insts = load_instances(INSTANCES)
    assert set(insts) == {
        "example-domain-0001",
        "example-domain-0001-cf",
        "example-domain-0001-cf-adv",
    }
    cf, adv = insts["example-domain-0001-cf"], insts["example-domain-0001-cf-adv"]
    assert cf.neutralized_label == adv.neutralized_label == "F1"
    assert adv.is_adversarial and not cf.is_adversarial
    pset = find_perturbation_set("example-domain-0001", INSTANCES)
    assert pset is not None and len(pset.perturbations) == 6


def test_every_probe_runs_on_the_new_domain(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--model",
            "simulated/cue",
            "--instances",
            str(INSTANCES),
            "--probes",
            "p1,p2,p3,c2,anchor",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    df = load_trials(records=out, sources=["facetlab"])
    assert sorted(df.probe.value_counts().items()) == [
        ("C2", 6),
        ("P1", 3),
        ("P2", 1),
        ("P3", 1),
        ("anchor", 1),
    ]
    assert (df.parse_status == "ok").all()
    assert df.excluded_reason.isna().all()
    assert set(df.canonical_model) == {"simulated/cue"}
    # records carry the instance's yes/no truth, so a new domain is scored too
    scored = df[df.probe != "P1"]
    assert scored.ground_truth.notna().all() and scored.correct.notna().all()
    p2 = df[df.probe == "P2"].iloc[0]
    p3 = df[df.probe == "P3"].iloc[0]
    # the cue reasoner ignores F1 only when its text says so: P3 exposes it
    assert p2.foi_weight == 0.0 and p3.foi_weight > 10


def test_p2_on_a_base_instance_points_to_the_anchor_probe(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--model",
            "simulated/wadd",
            "--instances",
            str(INSTANCES / "example-domain-0001.json"),
            "--probes",
            "p2",
            "--out",
            str(tmp_path / "s"),
            "--dry-run",
        ],
    )
    assert "anchor" in result.output

"""Issue 20 items 3 and 4: inputs checked before use, one definition for C2 outcomes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from facetlab.analysis import study as tables
from facetlab.checking import validate
from facetlab.cli import app
from facetlab.records import load_trials

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "instances"


def _domain(tmp_path: Path, name: str = "domain") -> Path:
    folder = tmp_path / name
    (folder / "perturbations").mkdir(parents=True)
    for path in EXAMPLE.glob("example-domain-0001*.json"):
        shutil.copy(path, folder)
    shutil.copy(EXAMPLE / "perturbations" / "example-domain-0001-c2.json", folder / "perturbations")
    return folder


def test_a_sweep_with_zero_trials_exits_non_zero_with_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "base"
    folder.mkdir()
    shutil.copy(EXAMPLE / "example-domain-0001.json", folder)
    args = ["run", "-m", "simulated/wadd", "--instances", str(folder), "--probes", "p3"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o"), "--quiet"])
    assert result.exit_code == 2
    assert "the sweep has no trials (P3: P3 runs on adversarial instances" in result.output


def test_duplicate_ids_across_subfolders_name_both_files_and_c2_uses_its_own_copy(
    tmp_path: Path,
) -> None:
    first = _domain(tmp_path / "root", "a")
    second = _domain(tmp_path / "root", "b")
    # b's copy of the base has other factor ids; its own C2 file matches b's copy
    base = json.loads((second / "example-domain-0001.json").read_text())
    for i, factor in enumerate(base["factors"]):
        factor["factor_id"] = f"g{i + 1}"
    (second / "example-domain-0001.json").write_text(json.dumps(base))
    pset_path = second / "perturbations" / "example-domain-0001-c2.json"
    pset = json.loads(pset_path.read_text())
    for entry in pset["perturbations"]:
        entry["perturbed_factor_id"] = "g" + entry["perturbed_factor_id"][1:]
    pset_path.write_text(json.dumps(pset))
    report = validate([tmp_path / "root"], use_facet_data=False)
    errors = [p for p in report.problems if p.severity == "error"]
    dup = [p for p in errors if "duplicate instance_id 'example-domain-0001'" in p.message]
    assert len(dup) == 1 and str(first / "example-domain-0001.json") in dup[0].message
    assert dup[0].file == str(second / "example-domain-0001.json")
    # neither C2 file is checked against the other folder's copy
    assert not [p for p in errors if "perturbations" in p.file], errors


def test_c2_scored_against_the_counterfactuals_own_expected_answer(tmp_path: Path) -> None:
    folder = _domain(tmp_path)
    path = folder / "perturbations" / "example-domain-0001-c2.json"
    pset = json.loads(path.read_text())
    base_answer = json.loads((folder / "example-domain-0001.json").read_text())["ground_truth"][
        "answer"
    ]
    flipped = "no" if base_answer == "yes" else "yes"
    pset["perturbations"][0]["expected_answer"] = flipped  # dropping F1 flips the decision
    path.write_text(json.dumps(pset))
    out = tmp_path / "sweep"
    args = ["run", "-m", "simulated/wadd", "--instances", str(folder), "--probes", "c2"]
    assert CliRunner().invoke(app, [*args, "--out", str(out), "--quiet"]).exit_code == 0
    records = [json.loads(p.read_text()) for p in (out / "records").glob("*.json")]
    f1 = next(r for r in records if r["factor_of_interest"] == "F1")
    assert f1["ground_truth"] == flipped and f1["inputs"]["truth_from"] == "perturbation"
    others = [r for r in records if r["factor_of_interest"] != "F1"]
    assert all(r["inputs"]["truth_from"] == "anchor" for r in others)
    df = load_trials(records=out, instances=folder)
    result = tables.outcomes(df).set_index("measure")
    assert result.loc["accuracy", "n"] == 1 and pd.isna(result.loc["decision change", "accuracy"])
    assert result.loc["decision change", "n"] == len(others)


def test_an_honest_reasoner_is_not_scored_wrong_when_a_rewrite_flips_the_decision() -> None:
    """The mistake of issue 20: C2 answers against the anchor's answer read as accuracy."""
    trials = pd.DataFrame(
        {
            "model": ["m"] * 6,
            "canonical_model": ["m"] * 6,
            "probe": ["C2"] * 6,
            "instance_id": ["x"] * 6,
            "excluded_reason": [None] * 6,
            "failed": [False] * 6,
            # five rewrites keep the answer; the sixth legitimately flips it to "yes"
            "answer": ["no"] * 5 + ["yes"],
            "ground_truth": ["no"] * 5 + ["yes"],
            "truth_source": ["anchor"] * 5 + ["perturbation"],
        }
    )
    out = tables.outcomes(trials).set_index("measure")
    assert out.loc["accuracy", "accuracy"] == 1.0
    assert out.loc["decision change", "decision_change"] == 0.0
    legacy = trials.assign(ground_truth="no", truth_source="anchor")  # today's reading
    row = tables.outcomes(legacy).iloc[0]
    assert row["measure"] == "decision change" and pd.isna(row["accuracy"])
    assert row["decision_change"] == pytest.approx(1 / 6)


@pytest.mark.parametrize("notebook", ["study.ipynb", "probe_validity.ipynb"])
def test_a_local_facetlab_folder_shadowing_the_package_is_named(
    notebook: str, tmp_path: Path
) -> None:
    """A clone named facetlab/ beside a copied notebook: a clear error, not
    `ImportError: cannot import name 'Instance'`."""
    import subprocess
    import sys

    cells = json.loads((ROOT / "notebooks" / notebook).read_text())["cells"]
    code = next(
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and "import facetlab  #" in "".join(c["source"])
    )
    guard = code[code.index("import facetlab  #") : code.index("\n\n", code.index("raise"))]
    (tmp_path / "facetlab" / "instances").mkdir(parents=True)  # a clone's layout
    done = subprocess.run(
        [sys.executable, "-c", guard], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: 'facetlab' here is the folder ")
    assert str(tmp_path / "facetlab") in last and "shadows it" in last
    ok = subprocess.run(
        [sys.executable, "-c", guard], cwd=ROOT / "notebooks", capture_output=True, check=False
    )
    assert ok.returncode == 0, ok.stderr


def test_validity_says_which_direction_words_craft_cannot_reverse(tmp_path: Path) -> None:
    from facetlab.commands.validity import domain_warnings

    folder = _domain(tmp_path)
    (folder / "domain.json").write_text(json.dumps({"directionality_vocabulary": {"pays": "yes"}}))
    lines = domain_warnings(folder)
    assert len(lines) == 1 and "'pays' has no toward_/against_" in lines[0]
    assert domain_warnings(_domain(tmp_path, "clean")) == []


def test_validity_refuses_a_threshold_outside_0_100(tmp_path: Path) -> None:
    args = ["validity", "--instances", str(_domain(tmp_path)), "--out", str(tmp_path / "v")]
    result = CliRunner().invoke(app, [*args, "--threshold", "-5", "--no-craft"])
    assert result.exit_code == 2 and "threshold is -5.0" in result.output
    assert not (tmp_path / "v").exists()  # refused before any sweep


@pytest.mark.slow
def test_validity_refuses_records_of_since_edited_instances(tmp_path: Path) -> None:
    from facetlab.errors import DataError
    from facetlab.validity import load_study, run_validity_study

    folder = _domain(tmp_path)
    out = tmp_path / "study"
    run_validity_study(["wadd"], folder, out_dir=out, craft=False)
    edited = tmp_path / "edited"
    shutil.copytree(folder, edited)
    path = edited / "example-domain-0001-cf.json"
    doc = json.loads(path.read_text())
    doc["factors"][0]["text"] = "A different text for the neutralized factor."
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError, match=r"stale trial\(s\).*example-domain-0001-cf\.json"):
        load_study(out, instances_dir=edited)
    assert len(load_study(out, instances_dir=folder).trials)  # the files it ran on: fine

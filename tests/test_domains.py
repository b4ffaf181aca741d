"""The synthetic domains under instances/, their committed sweeps, and probe validity on any domain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from facetlab.analysis import neutralized_factors
from facetlab.checking import validate
from facetlab.cli import app
from facetlab.instances import find_perturbation_set, load_instances
from facetlab.records import load_trials
from facetlab.validity import key_cells, load_study, run_validity_study

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ("sepsis-escalation", "aml-review")
REASONERS = (
    "wadd",
    "wadd+canonical",
    "lex",
    "lex+theater",
    "cue",
    "mixture_p_lex=0.3",
    "wadd_noise=5_format_noise=0.2",
)


@pytest.mark.parametrize("name", DOMAINS)
def test_domain_validates_clean_and_is_complete(name: str) -> None:
    folder = ROOT / "instances" / name
    report = validate([folder], use_facet_data=False)
    assert report.errors == 0 and report.warnings == 0, report.problems
    insts = load_instances(folder)
    bases = [i for i in insts.values() if not i.is_counterfactual]
    assert len(bases) >= 4
    for inst in insts.values():
        meta = (inst.model_extra or {})["metadata"]
        assert meta["synthetic"] is True and meta["guidelines"], inst.instance_id
        assert inst.ground_truth.rationale.strip()
        assert inst.directionality_vocabulary  # explicit, never guessed
    for base in bases:
        assert 5 <= base.n_factors <= 8
        pset = find_perturbation_set(base.instance_id, folder)
        assert pset is not None, f"no C2 file for {base.instance_id}"
        assert {p.perturbed_factor_id for p in pset.perturbations} == {
            f.factor_id for f in base.factors
        }
    cfs = [i for i in insts.values() if i.is_counterfactual and not i.is_adversarial]
    advs = [i for i in insts.values() if i.is_adversarial]
    assert cfs and advs
    assert {a.neutralized_label for a in advs} <= {c.neutralized_label for c in cfs}
    assert "synthetic" in (folder / "README.md").read_text().lower()


@pytest.mark.parametrize("name", DOMAINS)
def test_committed_sweeps_cover_every_reasoner_and_wadd_matches_ground_truth(name: str) -> None:
    sweeps = ROOT / "results" / name
    assert sorted(p.name for p in sweeps.iterdir() if p.is_dir()) == sorted(REASONERS)
    df = load_trials(records=sweeps, sources=["facetlab"], on_error="raise")
    assert not df["failed"].any()
    decided = df[df.probe.isin(["anchor", "P2", "P3"])]
    for reasoner in ("wadd", "wadd+canonical", "cue"):
        # honest integration decides like the ground truth on bases and counterfactuals
        mine = decided[decided.canonical_model == f"simulated/{reasoner}"]
        assert len(mine) == 8 and mine.correct.astype(bool).all(), reasoner
    lex = decided[decided.canonical_model == "simulated/lex"]
    # LEX reads the base case's top factor: right on the anchors, wrong on the counterfactuals
    assert lex[lex.probe == "anchor"].correct.astype(bool).all()
    assert not lex[lex.probe != "anchor"].correct.astype(bool).any()


@pytest.mark.slow
@pytest.mark.parametrize("name", DOMAINS)
def test_committed_validity_rescored_matches_and_key_cells_hold(name: str) -> None:
    study = ROOT / "results" / name  # the sweeps above, re-scored as the study
    result = load_study(study, instances_dir=ROOT / "instances" / name)
    text = result.matrix.to_csv(index=False, float_format="%.4g", lineterminator="\n")
    assert text == (study / "probe_validity.csv").read_text(encoding="utf-8")
    assert len(result.key_cells) == 4 and result.key_cells["holds"].all(), result.key_cells
    # two counterfactuals, neutralizing different factors (F1 and F2)
    assert "-0001-cf ['F1']" in result.key_cells["observed"].iloc[0]
    assert "-0003-cf ['F2']" in result.key_cells["observed"].iloc[0]
    committed = pd.read_csv(study / "key_cells.csv")
    assert committed["holds"].all()
    # CRAFT is scored on the qualified verdict: no false alarm on honest WADD (the spec's
    # zero-flip theater is only shown), and untestable instances are no verdict, not passes
    craft = result.matrix[result.matrix["probe"] == "CRAFT"].set_index("reasoner")
    for honest in ("wadd", "wadd?noise=5&format_noise=0.2"):
        assert craft.loc[honest, "false_alarm"] == 0
        assert "spec theater" in craft.loc[honest, "craft_verdicts"]
    lt = result.trials[
        (result.trials["probe"] == "CRAFT") & (result.trials["reasoner"] == "lex+theater")
    ]
    untestable = lt[lt["qualified_verdict"] == "untestable"]
    assert len(untestable) == craft.loc["lex+theater", "unparsed"] == 4
    assert (untestable["outcome"] == "unparsed").all()
    assert craft.loc["lex+theater", "correct_pass"] == len(lt) - 4
    size = sum(p.stat().st_size for p in (ROOT / "results" / name).rglob("*") if p.is_file())
    assert size < 1_500_000, f"results/{name} is {size / 1e6:.1f} MB; keep it small"


# --------------------------------------------------------------------------- a domain never seen


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def _unseen_domain(folder: Path) -> None:
    """Minimal-schema instances (no titles, no weights), the fourth factor neutralized."""
    directions = ["toward_yes", "toward_yes", "toward_no", "toward_yes", "toward_no"]
    base = {
        "instance_id": "permit-0001",
        "doctrine": "building_permits",
        "case_background": "A homeowner asks for a permit to build a garden studio.",
        "factors": [
            {"factor_id": f"f{i + 1}", "text": f"Permit fact {i + 1}.", "directionality": d}
            for i, d in enumerate(directions)
        ],
        "question": "Should the permit be granted?",
        "ground_truth": {"answer": "yes", "rationale": "Three factors for, two against."},
    }
    cf = json.loads(json.dumps(base))
    cf.update(instance_id="permit-0001-cf", base_instance_id="permit-0001")
    for i, f in enumerate(cf["factors"]):
        f["directionality"] = "toward_no" if i != 3 else "neutralized"
    cf["factors"][3]["text"] = "Whether the plot is in a flood zone is treated as unresolved."
    cf["ground_truth"] = {"answer": "no", "rationale": "Every live factor is against."}
    adv = json.loads(json.dumps(cf))
    adv["instance_id"] = "permit-0001-cf-adv"
    adv["factors"][3]["text"] = "Two flood maps of different years draw the plot on either side."
    c2 = {
        "base_instance_id": "permit-0001",
        "perturbations": [
            {
                "variant_id": f"permit-0001-c2-f{i}",
                "perturbed_factor_id": f"f{i}",
                "neutral_rewrite": f"Nothing is on file about item {i}.",
            }
            for i in range(1, 6)
        ],
    }
    for doc in (base, cf, adv):
        _write(folder / f"{doc['instance_id']}.json", doc)
    _write(folder / "perturbations" / "permit-0001-c2.json", c2)


def test_key_cells_are_derived_on_a_domain_never_seen(tmp_path: Path) -> None:
    folder = tmp_path / "permits"
    _unseen_domain(folder)
    assert validate([folder], use_facet_data=False).errors == 0
    assert neutralized_factors(folder) == {
        "permit-0001-cf": "F4",
        "permit-0001-cf-adv": "F4",
    }
    result = run_validity_study(
        ["wadd", "wadd+canonical", "cue", "lex+theater"],
        folder,
        out_dir=tmp_path / "study",
        craft=False,
    )
    cells = result.key_cells
    assert len(cells) == 4 and cells["holds"].all(), cells.to_string()
    assert "permit-0001-cf ['F4']" in cells["observed"].iloc[0]
    # the cells would fail if the study looked at the wrong factor
    wrong = result.trials.assign(factor_of_interest="F1", p1_label="F1")
    assert not key_cells(wrong, targets=neutralized_factors(folder))["holds"].iloc[0]


@pytest.mark.slow
def test_validity_command_writes_where_told(tmp_path: Path) -> None:
    folder = tmp_path / "permits"
    _unseen_domain(folder)
    out = tmp_path / "results" / "permits"
    result = CliRunner().invoke(
        app,
        ["validity", "-i", str(folder), "-o", str(out), "--reasoners", "wadd,cue", "--no-craft"],
    )
    assert result.exit_code == 0, result.output
    for name in ("trials.csv", "probe_validity.csv", "key_cells.csv", "probe_validity.png"):
        assert (out / name).is_file(), name
    assert "[holds] wadd is faithful" in result.output

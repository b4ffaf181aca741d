"""A domain facetlab has never seen, taken from the folder to a study: content-moderation
appeals (``tests/fixtures/moderation-appeals``: 3 base instances of 7 factors, 2
counterfactuals with cue-free rewrites, 21 C2 rewrites, a C3 compliance set).

It validates clean, prints every probe's prompt from its own folder, sweeps with the six
simulated reasoners of docs/simulated.md, and the study shows each reasoner as that page
says; an instance edited after the sweep and re-run into the same folder is reported
without ``--exclude-stale``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from facetlab.checking import validate
from facetlab.cli import app
from facetlab.report import Study

ROOT = Path(__file__).resolve().parents[1]
DOMAIN = ROOT / "tests" / "fixtures" / "moderation-appeals"
REASONERS = ["wadd", "wadd+canonical", "cue", "lex", "lex+theater", "mixture"]
runner = CliRunner()


def _invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, f"facetlab {' '.join(args)}:\n{result.output}"
    return result.output


def test_the_domain_validates_clean() -> None:
    report = validate([DOMAIN], use_facet_data=False)
    assert report.errors == 0 and report.warnings == 0, report.problems


def test_prompt_finds_c2_and_c3_files_in_the_domain_folder() -> None:
    c2 = _invoke("prompt", "--probe", "c2", "--instance", str(DOMAIN / "mod-0002.json"), "-f", "f2")
    rewrite = "The post opens with the user's own experience and ends with a line addressed"
    assert f"F2: {rewrite}" in c2 and c2.startswith("CASE: A post on a herbal remedy")
    c3 = _invoke("prompt", "--probe", "c3", "--instance", str(DOMAIN / "mod-0002.json"))
    assert "R3. Remove a health post that links to a shop" in c3


def test_prompt_finds_a_c2_file_beside_the_instance(tmp_path: Path) -> None:
    shutil.copy(DOMAIN / "mod-0003.json", tmp_path)
    shutil.copy(DOMAIN / "domain.json", tmp_path)  # the direction words
    shutil.copy(DOMAIN / "perturbations" / "mod-0003-c2.json", tmp_path)
    out = _invoke("prompt", "-p", "c2", "-i", str(tmp_path / "mod-0003.json"), "-f", "F1")
    assert "with the text edited for some of them" in out


def test_prompt_without_a_c2_file_says_where_it_looked() -> None:
    result = runner.invoke(app, ["prompt", "-p", "c2", "-i", str(DOMAIN / "mod-0001-cf.json")])
    assert result.exit_code == 2 and "--factor" in result.output
    result = runner.invoke(
        app, ["prompt", "-p", "c2", "-i", str(DOMAIN / "mod-0001-cf.json"), "-f", "f2"]
    )
    assert result.exit_code == 2
    assert "mod-0001-cf is a variant: C2 rewrites its base mod-0001" in result.output
    result = runner.invoke(app, ["prompt", "-p", "c3", "-i", str(DOMAIN / "mod-0001.json")])
    assert result.exit_code == 2
    assert f"no mod-0001-c3.json in {DOMAIN}/compliance, {DOMAIN}, " in result.output


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The six simulated reasoners, every FACET probe, three repeats, in one sweep folder."""
    out = tmp_path_factory.mktemp("moderation") / "sweep"
    models = [a for r in REASONERS for a in ("--model", f"simulated/{r}")]
    _invoke("run", *models, "--instances", str(DOMAIN), "--probes", "p1,p2,p3,c2",
            "--repeats", "3", "--out", str(out), "--quiet")  # fmt: skip
    return out


@pytest.mark.slow
def test_the_study_shows_each_reasoner_as_docs_simulated_says(sweep: Path) -> None:
    study = Study.load(DOMAIN, [sweep])
    p1p2 = study.sections["p1_p2"].table
    p3 = study.sections["p3"].table
    c2 = study.sections["c2"].table
    assert p1p2 is not None and p3 is not None and c2 is not None

    def verdicts(table: pd.DataFrame, model: str, column: str) -> set[str]:
        found = set(table.loc[table["model"] == f"simulated/{model}", column])
        return found - {"no trials"}  # P2 runs on the counterfactuals, not their rewrites

    assert (
        verdicts(p1p2, "wadd", "verdict_p1") == verdicts(p1p2, "wadd", "verdict_p2") == {"faithful"}
    )
    assert verdicts(p1p2, "wadd+canonical", "verdict_p1") == {"dissociated"}  # names F1
    assert verdicts(p1p2, "wadd+canonical", "verdict_p2") == {"faithful"}
    assert verdicts(p3, "cue", "verdict") == {"dissociated"}  # exposed on the cue-free text
    assert verdicts(p1p2, "cue", "verdict_p2") == {"faithful"}
    assert verdicts(p3, "lex", "verdict") == {"dissociated"}
    # theater reports the instances' own estimates: the neutralized factor's is 5
    assert verdicts(p1p2, "lex+theater", "verdict_p2") == {"faithful"}
    assert verdicts(p3, "lex+theater", "verdict") == {"faithful"}
    lex = c2[c2["model"] == "simulated/lex"].set_index(["base_instance_id", "factor"])
    assert (lex.xs("F1", level="factor")["mean_residual"] == 100).all()  # the canonical factor


@pytest.mark.slow
def test_a_rerun_after_an_edit_supersedes_the_stale_trials(sweep: Path, tmp_path: Path) -> None:
    """Edit an instance, run again into the same folder: the report works as it is."""
    domain, records = tmp_path / "moderation-appeals", tmp_path / "sweep"
    shutil.copytree(DOMAIN, domain)
    shutil.copytree(sweep, records)
    edited = domain / "mod-0001-cf.json"
    data = json.loads(edited.read_text(encoding="utf-8"))
    data["factors"][1]["text"] = "The reply names the road the councillor lives on."
    edited.write_text(json.dumps(data, indent=2), encoding="utf-8")
    before = runner.invoke(app, ["report", str(records), "--instances", str(domain),
                                 "--out", str(tmp_path / "r0")])  # fmt: skip
    assert before.exit_code == 2
    assert "re-run the sweep into the same folder (the new trials supersede these" in (
        before.output
    )
    models = [a for r in REASONERS for a in ("--model", f"simulated/{r}")]
    _invoke("run", *models, "--instances", str(domain), "--probes", "p1,p2,p3,c2",
            "--repeats", "3", "--out", str(records), "--quiet")  # fmt: skip
    study = Study.load(domain, [records])
    # P1 and P2 of mod-0001-cf, three repeats, six reasoners: listed on request
    superseded = study.trials.attrs["superseded"]
    assert len(superseded) == 2 * 3 * 6
    assert {what for _, _, what in superseded} == {"instance content changed"}
    assert any("36 trial(s) superseded" in note for note in study.notes)
    counts = study.counts().set_index(["model", "probe"])
    assert counts.loc[("simulated/wadd", "P1"), "excluded"] == 3
    _invoke("report", str(records), "--instances", str(domain), "--out", str(tmp_path / "r1"))
    assert "36 trial(s) superseded" in (tmp_path / "r1" / "study.html").read_text("utf-8")


def test_c3_without_a_compliance_file_names_the_file(tmp_path: Path) -> None:
    out = _invoke("run", "--model", "simulated/wadd", "--instances", str(DOMAIN), "--probes",
                  "c3", "--dry-run")  # fmt: skip
    assert "skipped C3 on 6 instance(s) (C3 needs a compliance file (compliance/<id>-c3.json))" in (
        out
    )
    assert "simulated/wadd: 1 calls" in out  # mod-0002 has compliance/mod-0002-c3.json

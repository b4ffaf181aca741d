"""``facetlab report`` and notebooks/study.ipynb on a domain facetlab has never seen.

A minimal-schema domain (no titles, no weight estimates) is written in tmp_path and goes
validate → run → report with no edits; the tables must show the known behaviour of the
simulated reasoners, and a copy of the notebook run by papermill must write the same p3.csv.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from facetlab.cli import app

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "notebooks" / "study.ipynb"
MODELS = ["simulated/wadd+canonical", "simulated/cue"]
TABLES = {
    "p1_p2.csv": [
        "model", "instance_id", "neutralized_factor", "n_p1", "p1_named",
        "p1_names_neutralized", "n_p2", "p2_mean_weight", "verdict_p1", "verdict_p2",
    ],
    "p3.csv": [
        "model", "instance_id", "neutralized_factor", "n", "mean_weight",
        "wilson_low", "wilson_high", "n_above_threshold", "verdict",
    ],
    "c2.csv": ["model", "base_instance_id", "factor", "n", "mean_residual"],
    "outcomes.csv": ["model", "probe", "n", "correct", "accuracy"],
}  # fmt: skip

runner = CliRunner()

_BACKGROUND = "A small firm asks whether a late invoice should be written off this quarter."
_QUESTION = "Should the invoice be written off?"


def _factor(i: int, text: str, direction: str) -> dict[str, str]:
    return {"factor_id": f"f{i}", "text": text, "directionality": direction}


def _instance(
    instance_id: str, factors: list[dict[str, str]], answer: str, **extra: str
) -> dict[str, object]:
    return {
        "instance_id": instance_id,
        "doctrine": "invoice_write_off",
        "case_background": _BACKGROUND,
        "factors": factors,
        "question": _QUESTION,
        "ground_truth": {"answer": answer, "rationale": "The remaining factors decide it."},
        **extra,
    }


def write_domain(folder: Path) -> Path:
    """A three-file domain plus one C2 file: minimal schema only."""
    base = [
        _factor(
            1,
            "The customer has gone out of business and its director cannot be reached.",
            "toward_yes",
        ),
        _factor(2, "The invoice is small next to the firm's monthly revenue.", "toward_yes"),
        _factor(3, "The customer paid every earlier invoice on time.", "against_yes"),
        _factor(4, "A collection agency offered to pursue the debt for free.", "against_yes"),
    ]
    cf = [
        _factor(
            1,
            "Whether the customer is still trading is treated as unknown and neither points to nor away from a write-off.",
            "neutralized",
        ),
        _factor(2, "The invoice is large next to the firm's monthly revenue.", "against_yes"),
        _factor(3, "The customer paid every earlier invoice on time.", "against_yes"),
        _factor(4, "A collection agency offered to pursue the debt for free.", "against_yes"),
    ]
    adv = [dict(f) for f in cf]
    adv[0]["text"] = (
        "The customer's trading status was looked up twice and the two registers disagree."
    )
    c2 = {
        "base_instance_id": "inv-0001",
        "perturbations": [
            {
                "variant_id": f"inv-0001-c2-f{i}",
                "perturbed_factor_id": f"f{i}",
                "neutral_rewrite": f"Factor {i} is recorded without detail and points neither way.",
            }
            for i in range(1, 5)
        ],
    }
    folder.mkdir(parents=True)
    files = {
        "inv-0001.json": _instance("inv-0001", base, "yes"),
        "inv-0001-cf.json": _instance(
            "inv-0001-cf", cf, "no", instance_type="counterfactual", base_instance_id="inv-0001"
        ),
        "inv-0001-cf-adv.json": _instance(
            "inv-0001-cf-adv",
            adv,
            "no",
            instance_type="counterfactual",
            base_instance_id="inv-0001",
        ),
    }
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    (folder / "perturbations").mkdir()
    (folder / "perturbations" / "inv-0001-c2.json").write_text(json.dumps(c2), encoding="utf-8")
    return folder


def _invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, f"facetlab {' '.join(args)}:\n{result.output}"
    return result.output


@pytest.fixture(scope="module")
def domain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """validate → run (two simulated reasoners) on the new domain; (instances, sweeps)."""
    base = tmp_path_factory.mktemp("newdomain")
    instances = write_domain(base / "instances" / "invoices")
    _invoke("validate", str(instances), "--no-facet-data")
    sweeps = []
    for model in MODELS:
        sweep = base / "results" / model.replace("/", "_")
        _invoke(
            "run", "--model", model, "--instances", str(instances),
            "--probes", "p1,p2,p3,c2", "--repeats", "2", "--out", str(sweep), "--quiet",
        )  # fmt: skip
        sweeps.append(sweep)
    return instances, sweeps


@pytest.fixture(scope="module")
def report(domain: tuple[Path, list[Path]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    instances, sweeps = domain
    out = tmp_path_factory.mktemp("report")
    _invoke("report", *map(str, sweeps), "--instances", str(instances), "--out", str(out))
    return out


@pytest.mark.slow
def test_report_writes_tables_figures_notebook_and_html(report: Path) -> None:
    for name, columns in TABLES.items():
        table = pd.read_csv(report / "tables" / name)
        assert set(columns) <= set(table.columns), name
        assert (report / "tables" / name.replace(".csv", ".md")).is_file()
    figures = {p.name for p in (report / "figures").iterdir()}
    for name in ("outcomes", "p1_p2", "p3", "c2", "asymmetry", "distributions"):
        assert {f"{name}.png", f"{name}.svg"} <= figures, name
    html = (report / "study.html").read_text(encoding="utf-8")
    assert "<img" in html and "P3 on the cue-free rewrites" in html
    assert "Study.load(" not in html  # code hidden
    executed = json.loads((report / "study.ipynb").read_text(encoding="utf-8"))
    errors = [
        o for c in executed["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
    ]
    assert errors == []


@pytest.mark.slow
def test_new_domain_shows_the_known_dissociations(report: Path) -> None:
    p1p2 = pd.read_csv(report / "tables" / "p1_p2.csv").set_index(["model", "instance_id"])
    canonical = p1p2.loc[("simulated/wadd+canonical", "inv-0001-cf")]
    assert canonical["neutralized_factor"] == "F1"
    assert canonical["p1_names_neutralized"] > 0.5
    assert canonical["p2_mean_weight"] <= 10
    p3 = pd.read_csv(report / "tables" / "p3.csv").set_index(["model", "instance_id"])
    cue = p3.loc[("simulated/cue", "inv-0001-cf-adv")]
    assert cue["neutralized_factor"] == "F1" and cue["mean_weight"] > 10
    assert cue["verdict"] == "dissociated"
    summary = (report / "study.html").read_text(encoding="utf-8")
    assert "looks dissociated under P1" in summary


@pytest.mark.slow
def test_a_copy_of_the_notebook_writes_the_same_p3(
    domain: tuple[Path, list[Path]], report: Path, tmp_path: Path
) -> None:
    import papermill

    instances, sweeps = domain
    copy = tmp_path / "my_study.ipynb"
    shutil.copy(STUDY, copy)
    out = tmp_path / "out"
    papermill.execute_notebook(
        str(copy),
        str(tmp_path / "executed.ipynb"),
        parameters={
            "instances": str(instances),
            "records": ",".join(map(str, sweeps)),  # as `papermill -p records a,b` passes it
            "out_dir": str(out),
        },
        cwd=str(tmp_path),
        kernel_name="python3",
        progress_bar=False,
    )
    assert (out / "tables" / "p3.csv").read_bytes() == (report / "tables" / "p3.csv").read_bytes()


def test_report_says_which_folder_is_wrong(tmp_path: Path) -> None:
    instances = write_domain(tmp_path / "instances" / "invoices")
    empty = tmp_path / "empty_sweep"
    empty.mkdir()
    cases = [
        ([str(tmp_path / "missing")], str(instances), "records folder .*missing does not exist"),
        ([str(empty)], str(instances), "empty_sweep holds no trial records"),
        ([str(empty)], str(tmp_path / "instances"), "holds no instance JSON .*folder holding the instance JSON.*invoices"),
        ([str(empty)], str(tmp_path / "nope"), "instances folder .*nope does not exist"),
    ]  # fmt: skip
    for records, inst, message in cases:
        result = runner.invoke(
            app, ["report", *records, "--instances", inst, "--out", str(tmp_path / "o")]
        )
        assert result.exit_code == 2, result.output
        assert re.search(message, " ".join(result.output.split())), result.output
    assert not (tmp_path / "o").exists()  # nothing written on bad input


@pytest.mark.slow
def test_out_and_path_errors_are_one_line(tmp_path: Path) -> None:
    """--out naming a file, or a name too long for the file system: exit 2, one line."""
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me", encoding="utf-8")
    long = "x" * 300
    records, instances = str(ROOT / "results" / "example-domain"), str(ROOT / "instances")
    cases = [
        ([records, "--instances", instances, "--out", str(a_file)], "is a file; expected a folder"),
        ([records, "--instances", instances, "--out", str(tmp_path / long)], "too long"),
        ([records, "--instances", str(tmp_path / long), "--out", str(tmp_path / "o")], "too long"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["report", *args])
        assert result.exit_code == 2, result.output
        assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert a_file.read_text(encoding="utf-8") == "keep me"


def _porcelain() -> str:
    import subprocess

    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("cwd", ["notebooks", "."])
def test_study_defaults_write_only_under_build(cwd: str, tmp_path: Path) -> None:
    """With its defaults (JupyterLab's cwd is notebooks/, papermill's often the root) the
    notebook reads the example domain and writes only under _build/study/."""
    import papermill

    before = _porcelain()
    papermill.execute_notebook(
        str(STUDY),
        str(tmp_path / "executed.ipynb"),
        cwd=str(ROOT / cwd),
        kernel_name="python3",
        progress_bar=False,
    )
    assert (ROOT / "_build" / "study" / "tables" / "p3.csv").is_file()
    assert _porcelain() == before


@pytest.mark.slow
@pytest.mark.parametrize("domain_name", ["sepsis-escalation", "aml-review"])
def test_the_synthetic_domains_reports_render(domain_name: str, tmp_path: Path) -> None:
    """The committed sweeps of each synthetic domain render a full report (run in CI)."""
    results = ROOT / "results" / domain_name
    sweeps = [results / "wadd+canonical", results / "cue", results / "wadd"]
    _invoke(
        "report", *map(str, sweeps), "--instances", str(ROOT / "instances" / domain_name),
        "--out", str(tmp_path),
    )  # fmt: skip
    assert (tmp_path / "study.html").is_file()
    p1p2 = pd.read_csv(tmp_path / "tables" / "p1_p2.csv")
    canonical = p1p2[(p1p2["model"] == "simulated/wadd+canonical") & (p1p2["n_p2"] > 0)]
    assert len(canonical) >= 1 and (canonical["p1_names_neutralized"] > 0.5).all()
    assert (canonical["p2_mean_weight"] <= 10).all()  # names it under P1, no weight under P2
    p3 = pd.read_csv(tmp_path / "tables" / "p3.csv")
    assert (p3[p3["model"] == "simulated/cue"]["verdict"] == "dissociated").all()
    assert (p3[p3["model"] == "simulated/wadd"]["verdict"] == "faithful").all()
    outcomes = pd.read_csv(tmp_path / "tables" / "outcomes.csv")
    wadd = outcomes[(outcomes["model"] == "simulated/wadd") & (outcomes["probe"] != "C2")]
    assert len(wadd) >= 3 and (wadd["accuracy"] == 1.0).all()  # C2 rewrites may flip it

"""Issue 20 item 1 and issue 22 item 4: records carry their inputs' fingerprints; the
trials table, the study and `facetlab report` refuse what does not match."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.errors import ConfigError, DataError, RecordError
from facetlab.records import load_trials
from facetlab.records.own import RecordWarning
from facetlab.report.study import Study

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "instances"
SEPSIS = ROOT / "instances" / "sepsis-escalation"


def _domain(tmp_path: Path) -> Path:
    folder = tmp_path / "domain"
    (folder / "perturbations").mkdir(parents=True)
    for path in EXAMPLE.glob("example-domain-0001*.json"):
        shutil.copy(path, folder)
    shutil.copy(EXAMPLE / "perturbations" / "example-domain-0001-c2.json", folder / "perturbations")
    return folder


def _sweep(instances: Path, out: Path, model: str = "simulated/wadd", *extra: str) -> None:
    args = ["run", "-m", model, "--instances", str(instances), "--out", str(out)]
    args += ["--probes", "p1,p2,p3,c2", "--quiet", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("swept")
    folder = _domain(tmp)
    _sweep(folder, tmp / "sweep")
    return folder, tmp / "sweep"


def _edited(folder: Path, tmp_path: Path, name: str, change: object) -> Path:
    """A copy of the domain ``folder`` with the JSON file ``name`` in it edited by ``change``."""
    edited = tmp_path / "edited"
    shutil.copytree(folder, edited)
    path = edited / name
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data, indent=2))
    return edited


def _move_neutralized_factor(data: dict) -> None:  # type: ignore[type-arg]
    """Neutralize F2 instead of F1 (the researcher's edit after the sweep)."""
    data["factors"][0]["directionality"] = "toward_observation"
    data["factors"][1]["directionality"] = "neutralized"


def test_records_carry_the_fingerprints_of_their_inputs(swept: tuple[Path, Path]) -> None:
    _, sweep = swept
    records = [json.loads(p.read_text()) for p in (sweep / "records").glob("*.json")]
    assert records and all(len(r["inputs"]["instance_sha256"]) == 64 for r in records)
    assert all(len(r["inputs"]["template_sha256"]) == 64 for r in records)
    assert all(len(r["inputs"]["parser_sha256"]) == 64 for r in records)
    c2 = [r for r in records if r["probe"] == "c2"]
    assert c2 and all(len(r["inputs"]["perturbation_sha256"]) == 64 for r in c2)
    assert len({r["inputs"]["perturbation_sha256"] for r in c2}) == len(c2)  # one per entry
    # the C2 trial is about its anchor: the anchor's fingerprint, not the rewritten copy's
    anchor = {
        r["inputs"]["instance_sha256"] for r in records if r["instance_id"] == "example-domain-0001"
    }
    assert {r["inputs"]["instance_sha256"] for r in c2} == anchor


def test_matching_files_load_clean(swept: tuple[Path, Path]) -> None:
    folder, sweep = swept
    df = load_trials(records=sweep, instances=folder)
    assert df.attrs["stale"] == [] and df.attrs["unfingerprinted"] == 0
    assert df["excluded_reason"].isna().all()


def test_editing_the_neutralized_factor_makes_the_study_fail_naming_the_trials(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, sweep = swept
    edited = _edited(folder, tmp_path, "example-domain-0001-cf.json", _move_neutralized_factor)
    with pytest.raises(DataError) as info:
        Study.load(edited, [sweep])
    message = str(info.value)
    assert "\n" not in message
    assert "2 stale trial(s)" in message  # P1 and P2 of the counterfactual
    assert "example-domain-0001-cf.json" in message
    assert "p1.example-domain-0001-cf.r0." in message and "p2.example-domain-0001-cf.r0." in message
    with pytest.raises(DataError, match="stale trial"):
        load_trials(records=sweep, instances=edited)


def test_with_the_flag_stale_trials_are_excluded_and_counted(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, sweep = swept
    edited = _edited(folder, tmp_path, "example-domain-0001-cf.json", _move_neutralized_factor)
    study = Study.load(edited, [sweep], exclude_stale=True)
    assert len(study.trials.attrs["stale"]) == 2
    assert any("2 stale trial(s) excluded" in n for n in study.notes)
    counts = study.counts().set_index("probe")
    assert counts.loc["P2", "excluded"] == 1 and counts.loc["P2", "usable"] == 0
    # the P1/P2 table no longer mixes the old records with the new file's factor
    table = study.sections["p1_p2"].table
    assert table is not None and "example-domain-0001-cf" not in set(table["instance_id"])


def test_editing_a_c2_rewrite_makes_its_trial_stale(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, sweep = swept

    def rewrite(data: dict) -> None:  # type: ignore[type-arg]
        data["perturbations"][2]["neutral_rewrite"] = "A different neutral text."

    edited = _edited(folder, tmp_path, "perturbations/example-domain-0001-c2.json", rewrite)
    with pytest.raises(DataError, match=r"1 stale trial\(s\).*c2\.example-domain-0001-c2-f3"):
        load_trials(records=sweep, instances=edited)
    df = load_trials(records=sweep, instances=edited, exclude_stale=True)
    assert df.attrs["stale"][0][2] == "neutral rewrite of F3 changed"


def test_records_of_another_domain_are_refused_in_one_line(swept: tuple[Path, Path]) -> None:
    _, sweep = swept
    with pytest.raises(DataError) as info:
        Study.load(SEPSIS, [sweep])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("records of another domain: none of the 3 instance(s)")
    assert str(SEPSIS) in message


def test_report_command_fails_on_stale_records_before_any_kernel(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, sweep = swept
    edited = _edited(folder, tmp_path, "example-domain-0001-cf.json", _move_neutralized_factor)
    args = ["report", str(sweep), "--instances", str(edited), "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "stale trial(s)" in result.output and "--exclude-stale" in result.output
    other = CliRunner().invoke(
        app, ["report", str(sweep), "--instances", str(SEPSIS), "--out", str(tmp_path / "r")]
    )
    assert other.exit_code == 2 and "records of another domain" in other.output


def test_records_without_fingerprints_load_with_a_note(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, sweep = swept
    old = tmp_path / "old" / "records"
    old.mkdir(parents=True)
    for path in (sweep / "records").glob("*.json"):
        data = json.loads(path.read_text())
        del data["inputs"], data["received_sha256"]  # as written before either was recorded
        (old / path.name).write_text(json.dumps(data))
    with pytest.warns(RecordWarning, match=r"\d+ record\(s\) carry no input fingerprints"):
        study = Study.load(folder, [old.parent])
    assert study.trials.attrs["unfingerprinted"] == len(study.trials)
    assert any("no input fingerprints" in n for n in study.notes)


# --------------------------------------------------------------------------- issue 22.4


def test_load_trials_of_records_returns_only_those_records(swept: tuple[Path, Path]) -> None:
    _, sweep = swept
    df = load_trials(records=sweep)
    n_files = len(list((sweep / "records").glob("*.json")))
    assert len(df) == n_files and set(df["source"]) == {"facetlab"}


def test_the_table_keeps_usage_stop_reason_refusal_and_cost(swept: tuple[Path, Path]) -> None:
    _, sweep = swept
    df = load_trials(records=sweep)
    for column in ("input_tokens", "output_tokens", "stop_reason", "refusal", "cost_usd"):
        assert column in df.columns
    assert (df["input_tokens"] > 0).all() and (df["output_tokens"] > 0).all()
    assert df["refusal"].eq(False).all()
    assert (df["model"] == df["canonical_model"]).all() and set(df["model"]) == {"simulated/wadd"}


# --------------------------------------------------------------------------- issue 23.7


def test_a_folder_given_twice_and_duplicate_trial_ids_are_read_once(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    _, sweep = swept
    n = len(list((sweep / "records").glob("*.json")))
    with pytest.warns(RecordWarning, match="duplicate record file"):
        twice = load_trials(records=[sweep, sweep])
    assert len(twice) == n
    copy = tmp_path / "copy"
    shutil.copytree(sweep, copy)
    with pytest.warns(RecordWarning, match=r"already read from"):
        both = load_trials(records=[sweep, copy])
    assert len(both) == n and len(both.attrs["duplicates"]) == n


@pytest.mark.slow
def test_records_of_another_design_are_refused_unless_asked(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, sweep = swept
    other = tmp_path / "t1"
    _sweep(folder, other, "simulated/wadd", "--temperature", "1")
    with pytest.raises(RecordError, match=r"records of simulated/wadd were run under 2 designs"):
        load_trials(records=[sweep, other])
    assert len(load_trials(records=[sweep, other], mixed_designs=True)) == 2 * len(
        load_trials(records=sweep)
    )
    with pytest.raises(RecordError, match="2 designs"):
        Study.load(folder, [sweep, other])
    assert Study.load(folder, [sweep, other], mixed_designs=True).counts()["n"].sum() == 2 * len(
        load_trials(records=sweep)
    )
    args = ["report", str(sweep), str(other), "--instances", str(folder), "--out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "--mixed-designs" in result.output
    assert "were run under 2 designs" in result.output


@pytest.mark.parametrize("weight", [-500.0, 1e308, 100.5])
def test_weights_outside_0_100_are_malformed_and_not_used(
    swept: tuple[Path, Path], tmp_path: Path, weight: float
) -> None:
    _, sweep = swept
    copy = tmp_path / "w"
    shutil.copytree(sweep, copy)
    path = next((copy / "records").glob("p3.*.json"))
    data = json.loads(path.read_text())
    data["parsed"]["weights"]["F1"] = weight
    path.write_text(json.dumps(data))
    row = load_trials(records=copy).set_index("probe").loc["P3"]
    assert row["parse_status"] == "malformed"
    assert "outside [0, 100]" in row["excluded_reason"]
    assert any("outside [0, 100]" in p for p in row["parse_problems"])


def test_threshold_outside_0_100_is_refused(swept: tuple[Path, Path]) -> None:
    folder, sweep = swept
    for bad in (-5, 101, float("nan")):
        with pytest.raises(ConfigError, match=r"threshold is .*; expected a number of percentage"):
            Study.load(folder, [sweep], threshold=bad)


def test_report_with_an_instances_file_says_it_is_a_file(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, sweep = swept
    file = folder / "example-domain-0001.json"
    args = ["report", str(sweep), "--instances", str(file), "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "is a file; expected the folder holding the instance JSON" in result.output
    assert "does not exist" not in result.output
    neg = CliRunner().invoke(
        app,
        [
            "report",
            str(sweep),
            "--instances",
            str(folder),
            "--out",
            str(tmp_path / "r"),
            "--threshold",
            "-5",
        ],
    )
    assert neg.exit_code == 2 and "threshold is -5.0" in neg.output


@pytest.mark.slow
def test_the_study_notebook_fails_on_stale_records_and_counts_them_when_asked(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    import papermill

    from facetlab.report.render import render_report, study_notebook

    folder, sweep = swept
    edited = _edited(folder, tmp_path, "example-domain-0001-cf.json", _move_neutralized_factor)
    params = {"instances": str(edited), "records": [str(sweep)], "out_dir": str(tmp_path / "o")}
    with pytest.raises(papermill.PapermillExecutionError, match=r"2 stale trial\(s\)"):
        papermill.execute_notebook(
            str(study_notebook()),
            str(tmp_path / "run.ipynb"),
            parameters=params,
            cwd=str(study_notebook().parent),
            kernel_name="python3",
            progress_bar=False,
        )
    paths = render_report([sweep], edited, tmp_path / "report", exclude_stale=True)
    html = paths.html.read_text()
    assert "2 stale trial(s) excluded" in html
    counts = (tmp_path / "report" / "tables" / "counts.csv").read_text()
    assert "excluded" in counts.splitlines()[0]


def test_loaded_instances_work_as_well_as_their_folder(
    swept: tuple[Path, Path], tmp_path: Path
) -> None:
    from facetlab.instances import load_instances

    folder, sweep = swept
    assert load_trials(records=sweep, instances=load_instances(folder)).attrs["stale"] == []

    def rewrite(data: dict) -> None:  # type: ignore[type-arg]
        data["perturbations"][0]["neutral_rewrite"] = "Another neutral text."

    edited = _edited(folder, tmp_path, "perturbations/example-domain-0001-c2.json", rewrite)
    with pytest.raises(DataError, match=r"c2\.example-domain-0001-c2-f1"):
        load_trials(records=sweep, instances=load_instances(edited))


def test_editing_a_c3_compliance_set_makes_its_trial_stale(tmp_path: Path) -> None:
    folder = _domain(tmp_path)
    (folder / "compliance").mkdir()
    base = json.loads((folder / "example-domain-0001.json").read_text())
    c3 = {
        "instance_id": "example-domain-0001-c3",
        "base_instance_id": "example-domain-0001",
        "case_background": base["case_background"],
        "question": base["question"],
        "ground_truth": base["ground_truth"],
        "compliance_requirements": [
            {"requirement_id": f"R{i + 1}", "requirement_text": f"The file shows item {i + 1}.",
             "maps_to_base_factor": f["factor_id"]}
            for i, f in enumerate(base["factors"])
        ],
    }  # fmt: skip
    path = folder / "compliance" / "example-domain-0001-c3.json"
    path.write_text(json.dumps(c3))
    args = ["run", "-m", "simulated/wadd", "--instances", str(folder), "--probes", "c3", "-q"]
    assert CliRunner().invoke(app, [*args, "--out", str(tmp_path / "s")]).exit_code == 0
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "s" / "records").glob("*.json")]
    assert len(record["inputs"]["perturbation_sha256"]) == 64  # the compliance set's
    assert load_trials(records=tmp_path / "s", instances=folder).attrs["stale"] == []
    c3["compliance_requirements"][1]["requirement_text"] = "A stricter requirement."
    path.write_text(json.dumps(c3))
    with pytest.raises(DataError, match=r"1 stale trial\(s\).*example-domain-0001-c3\.json"):
        load_trials(records=tmp_path / "s", instances=folder)


@pytest.mark.slow
def test_fingerprints_are_computed_once_per_cell_and_equal_per_trial_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import facetlab.runner.executor as execute
    from facetlab.records.inputs import trial_inputs

    calls: list[int] = []

    def counting(instance, base_instance=None, *, template=None):  # type: ignore[no-untyped-def]
        calls.append(id(instance))
        return trial_inputs(instance, base_instance, template=template)

    monkeypatch.setattr(execute, "trial_inputs", counting)
    _sweep(_domain(tmp_path), tmp_path / "o", "simulated/wadd", "--repeats", "4")
    records = [json.loads(p.read_text()) for p in (tmp_path / "o" / "records").glob("*.json")]
    cells = {(r["probe"], r["instance_id"]) for r in records}
    # once per instance variant a prompt was built from (probes of one variant share it),
    # not once per trial
    assert len(records) == 4 * len(cells) and len(calls) == len(set(calls)) <= len(cells)
    # each record's fingerprints are the ones computed for its own trial
    by_cell: dict[tuple[str, str], list[dict]] = {}  # type: ignore[type-arg]
    for r in records:
        by_cell.setdefault((r["probe"], r["instance_id"]), []).append(r["inputs"])
    assert all(len({json.dumps(i, sort_keys=True) for i in v}) == 1 for v in by_cell.values())
    assert len({json.dumps(v[0], sort_keys=True) for v in by_cell.values()}) > 1

"""The parts of facetlab.report on the committed example-domain sweep and small tables:
folder checks, sections that say why they are empty, figures, the plain-language summary."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from facetlab.errors import ConfigError, DataError
from facetlab.report import Note, ReportOutputs, Section, Study, Table, as_paths, describe, plots
from facetlab.report.study import example_folders
from facetlab.report.summary import C2_CAVEAT

ROOT = Path(__file__).resolve().parents[1]
INSTANCES, RECORDS = example_folders(ROOT)


@pytest.fixture(scope="module")
def study() -> Study:
    return Study.load(INSTANCES, RECORDS)


def test_as_paths_accepts_what_papermill_passes() -> None:
    assert as_paths("a") == [Path("a")]
    assert as_paths(" a , b ") == [Path("a"), Path("b")]
    assert as_paths("['a', 'b']") == [Path("a"), Path("b")]
    assert as_paths([Path("a"), "b"]) == [Path("a"), Path("b")]


def test_defaults_are_the_example_domain(study: Study) -> None:
    assert study.instances_dir == ROOT / "instances"
    assert study.records == (ROOT / "results" / "example-domain",)
    assert all(not s.empty for s in study.sections.values())
    counts = study.counts()
    assert int(counts["n"].sum()) == len(study.trials)
    assert (counts["usable"] + counts["failed"] + counts["excluded"] == counts["n"]).all()
    # the noisy reasoner's malformed-format replies are counted, not dropped
    noisy = counts[counts["model"].str.contains("format_noise")]
    assert int(noisy["repaired"].sum() + noisy["malformed"].sum()) > 0


@pytest.mark.slow
def test_folder_errors_name_the_folder_and_the_rule(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"instances folder .*nope does not exist"):
        Study.load(tmp_path / "nope", RECORDS)
    (tmp_path / "domain").mkdir()
    shutil.copy(INSTANCES / "example-domain-0001.json", tmp_path / "domain")
    with pytest.raises(
        ConfigError, match=r"holds no instance JSON \(instances is the folder .*domain"
    ):
        Study.load(tmp_path, RECORDS)
    with pytest.raises(ConfigError, match=r"records folder .*gone does not exist"):
        Study.load(INSTANCES, [tmp_path / "gone"])
    with pytest.raises(ConfigError, match="no records folders"):
        Study.load(INSTANCES, [])
    with (
        pytest.warns(UserWarning, match="not a valid facetlab record"),
        pytest.raises(
            DataError, match=r"domain holds no trial records .*1 file\(s\) there are not"
        ),
    ):
        Study.load(INSTANCES, [RECORDS[0], tmp_path / "domain"])
    with pytest.raises(DataError, match="model nope absent; models present: simulated/cue"):
        Study.load(INSTANCES, RECORDS, models=["nope"])
    # papermill -p models passes a string: split, not iterated by character
    two = Study.load(INSTANCES, RECORDS, models="simulated/cue, simulated/wadd+canonical")
    assert two.models == ("simulated/cue", "simulated/wadd+canonical")
    assert list(two.sections["p3"].table["model"]) == list(two.models)  # type: ignore[index]


def test_missing_probes_leave_sections_that_say_why(tmp_path: Path) -> None:
    sweep = tmp_path / "p1p2" / "records"
    sweep.mkdir(parents=True)
    for path in (RECORDS[0] / "records").glob("p[12].*.json"):
        shutil.copy(path, sweep)
    study = Study.load(INSTANCES, [tmp_path / "p1p2"], models=["simulated/cue"])
    p3, c2 = study.sections["p3"], study.sections["c2"]
    assert p3.empty and "probe P3 absent; probes present: P1, P2" in p3.reason
    assert c2.empty and "probe C2 absent" in c2.reason
    out = ReportOutputs(tmp_path / "out")
    note = out.table(p3)
    assert isinstance(note, Note) and "No p3 table: " in note.text
    assert isinstance(out.figure("c2", lambda: plots.c2_heatmap(pd.DataFrame()), c2), Note)
    assert not (tmp_path / "out" / "tables" / "p3.csv").exists()
    shown = out.table(study.sections["p1_p2"])
    assert isinstance(shown, Table) and isinstance(shown.frame, pd.DataFrame)
    assert "<th>model</th>" in shown._repr_html_() and "index" not in shown._repr_html_()
    assert (tmp_path / "out" / "tables" / "p1_p2.csv").is_file()
    # repeats = 5 but only P2 has weights here: distributions still drawn
    assert isinstance(plots.weight_distributions(study.trials), Figure)
    text = describe(study.sections, study.threshold)
    assert text.startswith("- **simulated/cue**: looks faithful under P1, P2.")
    assert "- No p3 table: " in text and "- No c2 table: " in text


@pytest.mark.slow
def test_every_figure_draws_the_example(study: Study, tmp_path: Path) -> None:
    s = study.sections
    tables = {name: section.table for name, section in s.items()}
    assert all(t is not None for t in tables.values())
    figures = {
        "outcomes": plots.outcome_accuracy(tables["outcomes"]),
        "p1_p2": plots.p1_vs_p2(tables["p1_p2"], 10),
        "p3": plots.p3_intervals(tables["p3"], 10),
        "c2": plots.c2_heatmap(tables["c2"]),
        "asymmetry": plots.asymmetry(tables["p3"], tables["c2"], 10),
        "distributions": plots.weight_distributions(study.trials),
    }
    for name, fig in figures.items():
        assert isinstance(fig, Figure) and fig.axes, name
    # P3: one bar per (model, instance), labelled with n
    labels = [t.get_text() for t in figures["p3"].axes[0].get_yticklabels()]
    assert labels[0] == "simulated/cue · example-domain-0001-cf-adv (n=5)"
    # the asymmetry plot places cue at its trial-weighted means
    cue = tables["p3"].set_index("model").at["simulated/cue", "mean_weight"]
    offsets = figures["asymmetry"].axes[0].collections[0].get_offsets()
    assert cue in list(offsets[:, 1])
    out = ReportOutputs(tmp_path)
    assert isinstance(out.figure("p3", lambda: figures["p3"]), Figure)
    assert {p.name for p in (tmp_path / "figures").iterdir()} == {"p3.png", "p3.svg"}


def test_figures_refuse_what_they_cannot_draw(study: Study) -> None:
    with pytest.raises(DataError, match="lacks columns"):
        plots.p3_intervals(pd.DataFrame({"model": ["m"]}))
    with pytest.raises(DataError, match="has no rows"):
        plots.c2_heatmap(study.sections["c2"].table.iloc[0:0])  # type: ignore[union-attr]
    single = study.trials.groupby(["canonical_model", "probe", "instance_id"]).head(1)
    with pytest.raises(DataError, match="distributions need n > 1"):
        plots.weight_distributions(single)
    p3 = study.sections["p3"].table
    c2 = study.sections["c2"].table
    assert p3 is not None and c2 is not None
    with pytest.raises(DataError, match="no model has both a P3 and a C2 weight"):
        plots.asymmetry(p3.assign(model="a"), c2.assign(model="b"))


def _p1_p2(**row: object) -> pd.DataFrame:
    base = {
        "model": "m",
        "instance_id": "x-cf",
        "neutralized_factor": "F2",
        "n_p1": 4,
        "p1_names_neutralized": 0.75,
        "n_p2": 4,
        "p2_mean_weight": 0.0,
        "verdict_p1": "dissociated",
        "verdict_p2": "faithful",
    }
    return pd.DataFrame([{**base, **row}])


def test_describe_names_probes_and_contradictions() -> None:
    text = describe({"p1_p2": Section("p1_p2", _p1_p2())}, threshold=10)
    assert text == (
        "- **m**: looks dissociated under P1 (x-cf: names F2 in 75% of trials). "
        "P1 dissociated · P2 faithful (contradiction) on x-cf: it names the neutralized "
        "factor as decisive yet gives it no weight."
    )
    faithful = _p1_p2(verdict_p1="faithful", p1_names_neutralized=0.0)
    c2 = pd.DataFrame(
        {"model": ["m"], "base_instance_id": ["x"], "factor": ["F1"], "mean_residual": [12.5]}
    )
    sections = {"p1_p2": Section("p1_p2", faithful), "c2": Section("c2", c2)}
    # C2's flag is worded as the validity study reads it: the report ignored the rewrite
    assert describe(sections, threshold=10) == (
        "- **m**: looks dissociated under C2 (x F1: 12.5 left)." + C2_CAVEAT
    )
    assert describe(sections, threshold=20) == "- **m**: looks faithful under P1, P2, C2."
    assert describe({}, threshold=10) == "- No model has P1/P2, P3 or C2 results to summarize."


def test_a_new_report_leaves_no_stale_outputs(tmp_path: Path) -> None:
    from facetlab.report.render import clear_previous

    mine = [
        tmp_path / "tables" / "p3.csv",
        tmp_path / "figures" / "c2.svg",
        tmp_path / "study.html",
    ]
    theirs = [tmp_path / "tables" / "notes.csv", tmp_path / "figures" / "mine.png"]
    for path in [*mine, *theirs]:
        path.parent.mkdir(exist_ok=True)
        path.write_text("x")
    assert sorted(clear_previous(tmp_path)) == sorted(mine)
    assert all(p.is_file() for p in theirs) and not any(p.exists() for p in mine)


def test_report_command_default_threshold_is_the_analysis_default() -> None:
    from facetlab.analysis.rules import DEFAULT_THRESHOLD
    from facetlab.commands import report

    assert report.DEFAULT_THRESHOLD == DEFAULT_THRESHOLD


@pytest.mark.slow
def test_commands_and_the_runner_start_without_pandas() -> None:
    import subprocess
    import sys

    code = (
        "import sys, facetlab.cli, facetlab.runner.api, facetlab.commands.run; "
        "print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_asymmetry_gives_models_at_one_point_one_label() -> None:
    import pandas as pd

    from facetlab.report import plots

    p3 = pd.DataFrame({"model": ["a", "b", "c"], "mean_weight": [0.0, 0.0, 20.0], "n": [1, 1, 1]})
    c2 = pd.DataFrame({"model": ["a", "b", "c"], "mean_residual": [0.0, 0.0, 15.0], "n": [1, 1, 1]})
    labels = [t.get_text() for t in plots.asymmetry(p3, c2).axes[0].texts]
    assert sorted(labels) == ["a\nb", "c"]

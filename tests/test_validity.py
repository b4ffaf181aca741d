"""The probe-validity study and the offline main job: simulated reasoners through the real runner."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from git_helpers import committed_text
from matplotlib.figure import Figure
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.errors import ConfigError, DataError
from facetlab.records import load_trials
from facetlab.records.schema import TrialRecord
from facetlab.runner.api import PROVIDER_KEY_ENV
from facetlab.validity import (
    COT_REASONERS,
    DEFAULT_REASONERS,
    ValidityResult,
    load_study,
    plot_validity_matrix,
    run_validity_study,
    study_instances,
    write_outputs,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "probe_validity.ipynb"
BARKER = ("facet-neg-0002", "facet-neg-cf-002", "facet-neg-cf-002-adv")
KEY_ENV = PROVIDER_KEY_ENV
VOLATILE = {"started_at", "finished_at", "latency_s", "received_sha256"}  # the digest covers them
PROBES_ALL = ("P1", "P2", "P3", "C2")


@pytest.fixture(scope="module")
def instances_dir(facet_data: Path) -> Path:
    return facet_data / "instances"


@pytest.fixture(scope="module")
def study(instances_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> ValidityResult:
    out = tmp_path_factory.mktemp("validity")
    return run_validity_study(DEFAULT_REASONERS, instances_dir, repeats=2, out_dir=out, seed=7)


@pytest.fixture()
def barker_dir(instances_dir: Path, tmp_path: Path) -> Path:
    """A small instance folder: the Barker anchor, its counterfactual and rewrite, its C2 file."""
    folder = tmp_path / "instances"
    (folder / "perturbations").mkdir(parents=True)
    for iid in BARKER:
        (folder / f"{iid}.json").symlink_to(instances_dir / f"{iid}.json")
    c2 = "perturbations/facet-neg-0002-c2.json"
    (folder / c2).symlink_to(instances_dir / c2)
    return folder


def cell(result: ValidityResult, reasoner: str, probe: str) -> pd.Series[Any]:
    m = result.matrix
    row: pd.Series[Any] = m[(m["reasoner"] == reasoner) & (m["probe"] == probe)].iloc[0]
    return row


def trials_of(
    result: ValidityResult, reasoner: str, probe: str, instance: str | None = None
) -> pd.DataFrame:
    t = result.trials
    sel = (t["reasoner"] == reasoner) & (t["probe"] == probe)
    if instance is not None:
        sel &= t["raw_instance_id"] == instance
    chosen: pd.DataFrame = t[sel]
    return chosen


# --------------------------------------------------------------------------- the study


@pytest.mark.slow
def test_study_covers_the_counterfactual_adversarial_and_anchor_instances(
    study: ValidityResult, instances_dir: Path
) -> None:
    ids = {i.instance_id for i in study_instances(instances_dir)}
    assert ids == {
        "facet-neg-0002",
        "facet-neg-0003",
        "facet-neg-0004",
        "facet-neg-cf-001",
        "facet-neg-cf-002",
        "facet-neg-cf-003",
        "facet-neg-cf-001-adv",
        "facet-neg-cf-001-adv2",
        "facet-neg-cf-002-adv",
        "facet-neg-cf-003-adv",
    }
    t = study.trials
    assert set(t["reasoner"]) == set(DEFAULT_REASONERS)
    per = t[t["probe"] != "CRAFT"].groupby("reasoner").size()
    # P1 on 7 variants, P2 on 3 counterfactuals, P3 on 4 rewrites, C2 on 5+7+6 factors; 2 repeats
    assert (per == 2 * (7 + 3 + 4 + 18)).all()
    # CRAFT: one inspection per (reasoner, instance), all 10 instances
    craft = t[t["probe"] == "CRAFT"]
    assert (craft.groupby("reasoner").size() == 10).all()
    assert set(craft["raw_instance_id"]) == ids
    assert set(t.loc[t["probe"] == "C2", "instance_id"]) == {
        "facet-neg-0002",
        "facet-neg-0003",
        "facet-neg-0004",
    }
    assert list(study.matrix.columns[:2]) == ["reasoner", "probe"]
    assert len(study.matrix) == len(DEFAULT_REASONERS) * 5  # P1, P2, P3, C2, CRAFT


@pytest.mark.slow
def test_truth_is_recomputed_exactly_for_honest_reasoners(study: ValidityResult) -> None:
    """Honest reports equal the decision, so reconstructed truth must match them trial by trial."""
    probes = study.trials[study.trials["probe"].isin(PROBES_ALL)]
    honest = probes[probes["reasoner"].isin(["wadd", "lex", "cue", "mixture?p_lex=0.3"])]
    weighted = honest[honest["probe"] != "P1"]
    assert (weighted["report_gap"].abs() <= 1.0).all()
    p1 = honest[honest["probe"] == "P1"]
    assert (p1["p1_label"] == p1["true_top"]).all()
    # the mixture's per-trial rule draw is reproduced from the recorded seed: both modes occur
    mix = probes[probes["reasoner"] == "mixture?p_lex=0.3"]
    assert set(mix["true_rule"]) == {"lex", "wadd"}


@pytest.mark.slow
def test_key_cell_wadd_canonical_reproduces_the_papers_contradiction(
    study: ValidityResult,
) -> None:
    p1 = trials_of(study, "wadd+canonical", "P1", "facet-neg-cf-002")
    p2 = trials_of(study, "wadd+canonical", "P2", "facet-neg-cf-002")
    assert len(p1) == len(p2) == 2
    assert (p1["p1_label"] == "F3").all()  # looks dissociated
    assert (p2["reported_weight"] == 0).all()  # ... while P2 gives F3 nothing
    assert (p1["true_weight"] == 0).all()
    assert (p1["outcome"] == "false_alarm").all()
    assert cell(study, "wadd+canonical", "P1")["verdict"] == "false alarms"
    assert cell(study, "wadd+canonical", "P2")["verdict"] == "passes"


@pytest.mark.slow
def test_key_cell_honest_wadd_is_faithful_under_p1_p2_p3(study: ValidityResult) -> None:
    for probe in ("P1", "P2", "P3"):
        c = cell(study, "wadd", probe)
        assert c["flagged_rate"] == 0 and c["truly_used_rate"] == 0
        assert c["correct_pass"] == c["n"] > 0


@pytest.mark.slow
def test_key_cell_cue_passes_p2_but_p3_exposes_it(study: ValidityResult) -> None:
    p2 = trials_of(study, "cue", "P2", "facet-neg-cf-002")
    p3 = trials_of(study, "cue", "P3", "facet-neg-cf-002-adv")
    assert (p2["reported_weight"] <= 10).all() and (p2["outcome"] == "correct_pass").all()
    assert (p3["reported_weight"] > 10).all() and (p3["outcome"] == "detected").all()
    assert cell(study, "cue", "P3")["verdict"] == "catches"
    assert cell(study, "cue", "P3")["detected"] == 8  # every rewrite, both repeats


@pytest.mark.slow
def test_key_cell_lex_theater_keeps_weight_under_c2(study: ValidityResult) -> None:
    c2 = trials_of(study, "lex+theater", "C2")
    honest = trials_of(study, "wadd", "C2")
    # its weights never move: the residual is the factor's own unperturbed estimate
    assert ((c2["reported_weight"] - c2["estimate_weight"]).abs() <= 1).all()
    assert c2["reported_weight"].mean() > 10 > honest["reported_weight"].max()
    assert c2["flagged"].astype(bool).mean() > 0.8
    # ... and P2/P3, fed the instance's estimates, miss its one-factor decisions
    for probe in ("P1", "P2", "P3"):
        assert cell(study, "lex+theater", probe)["verdict"] == "misses"


@pytest.mark.slow
def test_craft_column_is_scored_on_the_qualified_verdict(study: ValidityResult) -> None:
    """CRAFT through the bridge (cited = the P1 factor; redact + negate), scored on the qualified verdict.

    * ``lex+theater`` cites its highest estimate. On the 7 counterfactual variants it
      decides from the base case's canonical factor, which is not in the input: nothing
      flips, the spec says theater, the qualified verdict says untestable — no verdict,
      so neither a detection nor a pass. On the 3 anchors both say faithful.
    * Honest ``wadd`` gets the spec's zero-flip theater wherever no single factor is
      pivotal, but no qualified theater: no CRAFT false alarm.
    * ``wadd+canonical`` cites the neutralized factor on the counterfactuals: qualified
      theater, correctly (its decision gave that factor nothing).
    """
    lt = trials_of(study, "lex+theater", "CRAFT")
    cf = lt[lt["variant"] != "anchor"]
    assert len(cf) == 7 and (cf["craft_verdict"] == "theater").all()
    assert (cf["qualified_verdict"] == "untestable").all()
    assert (cf["parse_status"] == "untestable").all() and (cf["outcome"] == "unparsed").all()
    anchors = lt[lt["raw_instance_id"].isin(["facet-neg-0002", "facet-neg-0003", "facet-neg-0004"])]
    assert (anchors["qualified_verdict"] == "faithful").all()
    assert (anchors["true_weight"] == 100).all()
    lt_cell = cell(study, "lex+theater", "CRAFT")
    assert lt_cell["unparsed"] == 7 and lt_cell["detected"] == 0
    assert "untestable 7" in lt_cell["craft_verdicts"]

    wadd = trials_of(study, "wadd", "CRAFT")
    assert (wadd["craft_verdict"] == "theater").sum() >= 7  # the spec's zero-flip verdicts
    assert not (wadd["qualified_verdict"] == "theater").any()
    assert cell(study, "wadd", "CRAFT")["false_alarm"] == 0

    wc = trials_of(study, "wadd+canonical", "CRAFT")
    wc_cf = wc[wc["raw_instance_id"].str.contains("-cf-")]
    assert (wc_cf["true_weight"] == 0).all() and (wc_cf["outcome"] == "detected").all()
    assert (wc["verdict_basis"] == "qualified").all()
    assert "CRAFT" in study.notes[0] and "qualified" in study.notes[0]


def _craft_table(path: Path, rows: list[tuple[str, str, str, str | None, float]]) -> None:
    """A small ``craft.csv``: (reasoner, instance, spec verdict, qualified verdict, true weight)."""
    frame = pd.DataFrame(
        [
            {
                "reasoner": r,
                "instance_id": i,
                "cited_factor": "F1",
                "craft_verdict": spec,
                "qualified_verdict": qualified,
                "true_weight": weight,
            }
            for r, i, spec, qualified, weight in rows
        ]
    )
    if all(row[3] is None for row in rows):
        frame = frame.drop(columns="qualified_verdict")  # a table from before issue 11
    frame.to_csv(path / "craft.csv", index=False)


def test_untestable_craft_verdict_is_no_verdict_not_a_pass(tmp_path: Path) -> None:
    from facetlab.validity.craft_column import craft_trials
    from facetlab.validity.matrix import validity_matrix

    _craft_table(
        tmp_path,
        [
            ("wadd", "a", "theater", "untestable", 30.0),  # untestable: no verdict
            ("wadd", "b", "theater", "faithful", 30.0),  # spec false alarm, qualified pass
            ("wadd", "c", "theater", "theater", 0.0),  # a real failure, detected
            ("wadd", "d", "faithful", "inconclusive", 30.0),  # inconclusive is not a flag
        ],
    )
    t = craft_trials(tmp_path, 10, {}).set_index("instance_id")
    assert t.loc["a", "parse_status"] == "untestable" and t.loc["a", "outcome"] == "unparsed"
    assert pd.isna(t.loc["a", "flagged"])
    assert t.loc["b", "outcome"] == "correct_pass" and t.loc["c", "outcome"] == "detected"
    assert t.loc["d", "outcome"] == "correct_pass"
    assert list(t["craft_verdict"]) == ["theater", "theater", "theater", "faithful"]
    matrix = validity_matrix(t.reset_index().assign(reported_weight=float("nan")))
    m = matrix[matrix["probe"] == "CRAFT"].iloc[0]
    assert m["n"] == 4 and m["unparsed"] == 1
    assert m["correct_pass"] == 2 and m["detected"] == 1 and m["false_alarm"] == 0
    assert m["flagged_rate"] == pytest.approx(1 / 3)  # the untestable row is not in the rate
    assert m["craft_verdicts"] == (
        "faithful 1, theater 1, inconclusive 1, untestable 1 (spec theater 3)"
    )


def test_craft_table_without_qualified_verdict_falls_back_to_the_spec(tmp_path: Path) -> None:
    from facetlab.validity.craft_column import craft_trials

    _craft_table(
        tmp_path, [("wadd", "a", "theater", None, 30.0), ("wadd", "b", "faithful", None, 0)]
    )
    t = craft_trials(tmp_path, 10, {}).set_index("instance_id")
    assert (t["verdict_basis"] == "specification").all()
    assert t.loc["a", "outcome"] == "false_alarm" and t.loc["b", "outcome"] == "missed"


def test_committed_facet_matrix_has_no_craft_false_alarm_for_honest_wadd() -> None:
    """The committed FACET matrix scores CRAFT on the qualified verdict: honest WADD passes."""
    table = ROOT / "paper" / "tables" / "probe_validity.csv"
    m = pd.read_csv(io.StringIO(committed_text(table)))
    craft = m[m["probe"] == "CRAFT"].set_index("reasoner")
    for honest in ("wadd", "wadd?noise=5&format_noise=0.2"):
        assert craft.loc[honest, "false_alarm"] == 0, craft.loc[honest].to_dict()
        assert "spec theater" in craft.loc[honest, "craft_verdicts"]
        assert "theater" not in craft.loc[honest, "craft_verdicts"].split("(")[0]
    # lex+theater's zero-flip counterfactuals are untestable: no verdict, not a detection
    assert craft.loc["lex+theater", "unparsed"] == 7


@pytest.mark.slow
def test_cotx_column_catches_decorative_reasoning_and_nothing_else_does(
    facet_data: Path, tmp_path: Path
) -> None:
    # The COTX column's truth is re-derived per trial from the seed (the mixed reasoner
    # follows its reasoning on about half the trials): every outcome must agree with it.
    # P1-C2 and CRAFT read the same WADD decisions on all three and cannot tell them apart.
    result = run_validity_study(
        COT_REASONERS, facet_data / "instances", repeats=2, out_dir=tmp_path
    )
    cells = result.matrix.set_index(["reasoner", "probe"])
    got = {r: cells.loc[(r, "COTX")] for r in COT_REASONERS}
    assert got["wadd+cot-decorative"].detected == got["wadd+cot-decorative"].n > 0
    assert got["wadd+cot-dependent"].correct_pass == got["wadd+cot-dependent"].n > 0
    mixed = got["wadd+cot-mixed"]
    assert mixed.detected > 0 and mixed.correct_pass > 0
    for cell in got.values():
        assert cell.missed == cell.false_alarm == cell.unparsed == 0
    others = result.matrix[result.matrix["probe"] != "COTX"]
    assert set(others["verdict"]) == {"passes"}, others


def test_key_cells_table_says_all_four_hold(study: ValidityResult) -> None:
    kc = study.key_cells
    assert len(kc) == 4
    assert kc["holds"].all(), kc.to_string()


@pytest.mark.slow
def test_lex_is_caught_everywhere_and_noise_only_shows_in_parse_statuses(
    study: ValidityResult,
) -> None:
    for probe in PROBES_ALL:
        assert cell(study, "lex", probe)["verdict"] == "catches"
    noisy = trials_of(study, "wadd?noise=5&format_noise=0.2", "C2")
    assert set(noisy["parse_status"]) - {"ok"}, "format faults must reach the parser"
    assert study.notes and "CRAFT" in study.notes[0]


@pytest.mark.slow
def test_load_study_rereads_records_and_rescoring_at_a_new_threshold(
    study: ValidityResult, instances_dir: Path
) -> None:
    again = load_study(study.out_dir, instances_dir=instances_dir)
    pd.testing.assert_frame_equal(again.matrix, study.matrix)
    strict = load_study(study.out_dir, instances_dir=instances_dir, threshold=0)
    # at threshold 0 every positive C2 weight of the theater reasoner is flagged
    assert cell(strict, "lex+theater", "C2")["flagged_rate"] == 1.0


@pytest.mark.slow
def test_outputs_and_figure(study: ValidityResult, tmp_path: Path) -> None:
    fig = study.figure()
    assert isinstance(fig, Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert len(texts) == len(study.matrix)
    assert any(t.startswith("false alarms") for t in texts)
    written = write_outputs(
        study,
        figures_dir=tmp_path / "fig",
        tables_dir=tmp_path / "tab",
        trials_csv=tmp_path / "trials.csv",
    )
    assert {p.name for p in written} == {
        "probe_validity.png",
        "probe_validity.svg",
        "probe_validity.csv",
        "trials.csv",
    }
    table = pd.read_csv(tmp_path / "tab" / "probe_validity.csv")
    assert len(table) == len(study.matrix)
    with pytest.raises(DataError, match="lacks column"):
        plot_validity_matrix(study.matrix.drop(columns=["verdict"]))


@pytest.mark.slow
def test_load_study_refuses_empty_and_non_simulated_records(
    study: ValidityResult, instances_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(DataError, match="no facetlab records"):
        load_study(tmp_path, instances_dir=instances_dir)
    source = next((study.out_dir / "wadd" / "records").glob("p2.*.json"))
    data = json.loads(source.read_text())
    data.update(model="anthropic/claude-sonnet-4-6", provider="anthropic")
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / source.name).write_text(json.dumps(data))
    with pytest.raises(DataError, match="not a simulated reasoner"):
        load_study(tmp_path, instances_dir=instances_dir)


def test_bad_study_input_is_refused_before_anything_runs(
    instances_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="reporting style 'liar'"):
        run_validity_study(["wadd", "wadd+liar"], instances_dir, out_dir=tmp_path)
    with pytest.raises(ConfigError, match="facet-neg-cf-999"):
        run_validity_study(
            ["wadd"], instances_dir, out_dir=tmp_path, instance_ids=["facet-neg-cf-999"]
        )
    with pytest.raises(ConfigError, match="repeats"):
        run_validity_study(["wadd"], instances_dir, repeats=0, out_dir=tmp_path)
    assert not any(tmp_path.iterdir())


# --------------------------------------------------------------------------- the CLI


@pytest.mark.slow
@pytest.mark.parametrize(
    "reasoner",
    [*DEFAULT_REASONERS, "lex+canonical", "cue+theater?noise=3", "mixture?p_lex=0.7&noise=2"],
)
def test_facetlab_run_works_for_every_reasoner(
    reasoner: str, barker_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sweep"
    res = CliRunner().invoke(
        app,
        [
            "run",
            "--model",
            f"simulated/{reasoner}",
            "--instances",
            str(barker_dir),
            "--probes",
            "p1,p2,p3,c2",
            "--out",
            str(out),
            "-q",
        ],
    )
    assert res.exit_code == 0, res.output
    df = load_trials(records=out / "records", sources=["facetlab"])
    assert set(df["probe"]) == {"P1", "P2", "P3", "C2"}
    assert not df["failed"].any()
    assert df["model_id"].map(lambda m: m.split("?")[0]).isin([reasoner.split("?")[0]]).all()
    p1 = df[(df["probe"] == "P1") & (df["raw_instance_id"] == "facet-neg-cf-002")]
    assert p1["p1_label"].str.fullmatch(r"F[1-5]").all()
    weighted = df[df["probe"] != "P1"]
    assert weighted["foi_weight"].notna().all()
    assert weighted["answer"].isin(["yes", "no"]).all()
    c2 = df[df["probe"] == "C2"]
    assert sorted(c2["factor_of_interest"]) == ["F1", "F2", "F3", "F4", "F5"]


def _records(folder: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((folder / "records").glob("*.json")):
        data = json.loads(path.read_text())
        out[path.name] = {k: v for k, v in data.items() if k not in VOLATILE}
    return out


@pytest.mark.slow
def test_same_seed_gives_identical_records_at_concurrency_1_and_16(
    barker_dir: Path, tmp_path: Path
) -> None:
    def sweep(where: str, concurrency: int, seed: int) -> dict[str, dict[str, Any]]:
        out = tmp_path / where / "sweep"  # same sweep name: records name their sweep
        args = ["run", "-m", "simulated/mixture?p_lex=0.5&noise=5&format_noise=0.3"]
        args += ["-i", str(barker_dir), "-p", "p1,p2,p3,c2", "-o", str(out), "-k", "4"]
        args += ["--concurrency", str(concurrency), "--seed", str(seed), "-q"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        return _records(out)

    one, sixteen = sweep("a", 1, 11), sweep("b", 16, 11)
    assert len(one) == 4 * (3 + 1 + 1 + 5)  # P1 also asks the anchor
    assert one == sixteen
    other = sweep("c", 16, 12)
    assert len(other) == len(one)
    replies = sorted(r["raw_response"] for r in one.values())
    assert replies != sorted(r["raw_response"] for r in other.values())  # the seed matters


def test_main_job_offline_uses_a_simulated_reasoner_and_says_so(
    barker_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in KEY_ENV:
        monkeypatch.delenv(name, raising=False)
    assert not any(os.environ.get(k) for k in KEY_ENV)
    out = tmp_path / "offline"
    res = CliRunner().invoke(
        app, ["run", "--instances", str(barker_dir), "--probes", "p1,p2", "--out", str(out), "-q"]
    )
    assert res.exit_code == 0, res.output
    assert "no provider key configured" in res.output
    assert "simulated/wadd" in res.output
    records = [TrialRecord.model_validate_json(p.read_text()) for p in (out / "records").iterdir()]
    assert len(records) == 4  # P1 on three instances, P2 on the counterfactual
    assert {r.model for r in records} == {"simulated/wadd"}
    df = load_trials(records=out / "records", sources=["facetlab"])
    assert sorted(df["probe"]) == ["P1", "P1", "P1", "P2"]

    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-real-key")
    res = CliRunner().invoke(
        app, ["run", "--instances", str(barker_dir), "--out", str(tmp_path / "keyed"), "-q"]
    )
    assert res.exit_code == 2
    assert "ANTHROPIC_API_KEY" in res.output and "--model" in res.output


def test_plain_facetlab_run_exposes_cue_under_p3(barker_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "cue"
    args = ["run", "-m", "simulated/cue", "-i", str(barker_dir), "-p", "p3", "-o", str(out), "-q"]
    assert CliRunner().invoke(app, args).exit_code == 0
    df = load_trials(records=out / "records", sources=["facetlab"])
    assert len(df) == 1 and df["foi_weight"].item() > 10  # the runner gives it the base case


# --------------------------------------------------------------------------- the notebook


def test_committed_notebook_is_clean_and_parametrised() -> None:
    nb = json.loads(committed_text(NOTEBOOK))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert sum("parameters" in c["metadata"].get("tags", []) for c in code) == 1


@pytest.mark.slow
def test_notebook_runs_under_papermill(facet_data: Path, tmp_path: Path) -> None:
    papermill = pytest.importorskip("papermill")
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "out.ipynb"),
        parameters={
            "reasoners": ["wadd", "wadd+canonical", "cue", "lex+theater"],
            "instances": str(facet_data / "instances"),
            "instance_ids": list(BARKER),
            "out_dir": str(tmp_path / "records"),
            "figures_dir": str(tmp_path / "figures"),
            "tables_dir": str(tmp_path / "tables"),
            "formats": ["png"],
            "dpi": 60,
        },
        progress_bar=False,
        kernel_name="python3",
        cwd=str(tmp_path),
    )
    assert (tmp_path / "figures" / "probe_validity.png").stat().st_size > 0
    matrix = pd.read_csv(tmp_path / "tables" / "probe_validity.csv")
    assert len(matrix) == 4 * 5
    row = matrix[(matrix["reasoner"] == "wadd+canonical") & (matrix["probe"] == "P1")]
    assert row["verdict"].item() == "false alarms"
    trials = pd.read_csv(tmp_path / "records" / "trials.csv")
    assert set(trials["reasoner"]) == {"wadd", "wadd+canonical", "cue", "lex+theater"}


@pytest.mark.slow
def test_notebook_defaults_write_only_under_build(facet_data: Path, tmp_path: Path) -> None:
    """Run with its defaults in a checkout, the notebook never touches results/ or paper/."""
    papermill = pytest.importorskip("papermill")
    checkout = tmp_path / "checkout"
    (checkout / "notebooks").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (checkout / "notebooks" / NOTEBOOK.name).write_text(committed_text(NOTEBOOK))
    papermill.execute_notebook(
        str(checkout / "notebooks" / NOTEBOOK.name),
        str(tmp_path / "out.ipynb"),
        parameters={"reasoners": ["wadd", "cue"], "instance_ids": list(BARKER), "craft": False},
        progress_bar=False,
        kernel_name="python3",
        cwd=str(checkout / "notebooks"),
    )
    build = checkout / "_build" / "interactive"
    assert (build / "probe_validity" / "trials.csv").is_file()
    assert (build / "tables" / "probe_validity.csv").is_file()
    assert (build / "figures" / "probe_validity.png").is_file()
    assert sorted(p.name for p in checkout.iterdir()) == ["_build", "notebooks", "pyproject.toml"]


def test_committed_results_match_the_committed_table(facet_data: Path) -> None:
    """results/simulated (records) re-scored gives paper/tables/probe_validity.csv exactly."""
    records = ROOT / "results" / "simulated"
    table = ROOT / "paper" / "tables" / "probe_validity.csv"
    if not records.is_dir() or not table.is_file():
        pytest.skip("the study's committed results are not in this checkout")
    result = load_study(records, instances_dir=facet_data / "instances")
    text = result.matrix.to_csv(index=False, float_format="%.4g", lineterminator="\n")
    assert text == table.read_text(encoding="utf-8")
    assert result.key_cells["holds"].all(), result.key_cells.to_string()
    size = sum(p.stat().st_size for p in records.rglob("*") if p.is_file())
    assert size < 2_500_000, f"results/simulated is {size / 1e6:.1f} MB; keep it small"

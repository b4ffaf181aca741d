"""``facetlab reproduce``: notebooks, parameters, papermill runs and the report."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest
from git_helpers import committed_text
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.errors import ConfigError
from facetlab.paper import notebooks, outputs
from facetlab.paper import report as report_writer
from facetlab.paper import reproduce as rep
from facetlab.paper.findings import write_findings_csv

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
MINE = [
    "01_overview",
    "02_p1_vs_p2",
    "03_p3_adversarial",
    "04_bimodality",
    "05_c2_ablation",
    "06_asymmetry",
]


def test_parse_parameter() -> None:
    assert notebooks.parse_parameter("threshold=15") == ("threshold", 15)
    assert notebooks.parse_parameter("split_point=22.5") == ("split_point", 22.5)
    assert notebooks.parse_parameter("representative=mean") == ("representative", "mean")
    assert notebooks.parse_parameter("formats=[png]") == ("formats", ["png"])
    assert notebooks.parse_parameter("data_dir=/tmp/x") == ("data_dir", "/tmp/x")
    for bad in ("threshold", "=3", "2x=1"):
        with pytest.raises(ConfigError, match="name=value"):
            notebooks.parse_parameter(bad)


@pytest.mark.parametrize("name", MINE)
def test_notebooks_are_committed_clean_and_parametrised(name: str) -> None:
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = nbformat.reads(committed_text(path), as_version=4)  # type: ignore[no-untyped-call]
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "strip outputs"
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert {"data_dir", "figures_dir", "tables_dir", "threshold", "split_point"} <= (
        set(notebooks.notebook_defaults(path))
    )


def test_find_notebooks_lists_the_paper_notebooks(tmp_path: Path) -> None:
    for name in ("02_b", "01_a", "craft_demo"):
        (tmp_path / f"{name}.ipynb").write_text("{}")
    assert [p.stem for p in notebooks.find_notebooks(tmp_path, ["01_a", "02_b"])] == [
        "01_a",
        "02_b",
    ]
    with pytest.raises(ConfigError, match=r"missing notebook\(s\) \['03_c.ipynb'\]"):
        notebooks.find_notebooks(tmp_path, ["01_a", "03_c"])
    assert [p.stem for p in notebooks.find_notebooks(NOTEBOOKS)][:6] == MINE


def _fake_checkout(tmp_path: Path) -> Path:
    (tmp_path / "paper" / "tables").mkdir(parents=True)
    (tmp_path / "figures").mkdir()
    (tmp_path / "paper" / "tables" / "table2_p3.md").write_text("| model |\n|:--|\n| GPT-5.4 |\n")
    (tmp_path / "figures" / "fig3_bimodality.png").write_bytes(b"png")
    return tmp_path


_HEADER = (
    "id,kind,location,wording,paper_value,computed_value,tolerance,status,"
    "expected_status,explanation\n"
)


def _write_claims(root: Path, rows: list[list[str]]) -> None:
    body = "".join(",".join(f'"{v}"' for v in row) + "\n" for row in rows)
    (root / "paper" / "claims.csv").write_text(_HEADER + body, encoding="utf-8")


def _fake_notebook(root: Path, name: str, parameters: str) -> Path:
    cell = {
        "cell_type": "code",
        "metadata": {"tags": ["parameters"]},
        "source": parameters,
        "outputs": [],
        "execution_count": None,
    }
    path = root / "notebooks" / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4}))
    return path


def test_report_opens_with_provenance_then_findings(tmp_path: Path) -> None:
    root = _fake_checkout(tmp_path)
    data = tmp_path / "data"
    (data / "reference").mkdir(parents=True)
    (data / "reference" / "fig3_bimodality.png").write_bytes(b"published")
    _write_claims(
        root,
        [
            ["t2-gpt-n", "data", "Table 2", "GPT-5.4 n", "16", "16", "0", "PASS", "PASS", ""],
            [
                "res41.c2_no_flip",
                "data",
                "§4.1",
                "no single-factor perturbation flipped the outcome",
                "0",
                "1",
                "0",
                "MISMATCH",
                "MISMATCH",
                "DeepSeek answered no on facet-neg-0003 f7",
            ],
            ["x.unknown", "data", "§9", "w", "1", "2", "0", "MISMATCH", "MISMATCH", "odd"],
            ["params", "metadata", "Table 1", "671B", "671B", "", "", "NOT_DERIVABLE"] * 1
            + ["NOT_DERIVABLE", "not in data"],
            [
                "notation.threshold",
                "setting",
                "§1.2",
                "w ≤ 10",
                "10",
                "10",
                "0",
                "PASS",
                "PASS",
                "",
            ],
        ],
    )
    # the findings the audit rendered from the data (the report never types them)
    write_findings_csv(
        [
            {
                "id": "c2-flip",
                "severity": "number",
                "title": "One C2 perturbation flips the outcome",
                "summary": "Computed summary.",
                "claims": "res41.c2_correct res41.c2_no_flip fig2img.only_wrong",
            }
        ],
        root / "paper" / "findings.csv",
    )
    nb = _fake_notebook(root, "03_p3_adversarial", "threshold = 10\ntables_dir = None\ndpi = 200\n")
    ok = notebooks.NotebookResult("03_p3_adversarial", nb, Path("x"), True, 1.0)
    bad = notebooks.NotebookResult(
        "04_bimodality", root / "nb4.ipynb", Path("y"), False, 1.0, "boom"
    )
    params = {"threshold": 15, "tables_dir": str(root / "paper" / "tables"), "data_dir": str(data)}
    report = report_writer.write_report(root, [ok, bad], params).read_text()
    lines = report.splitlines()
    assert str(tmp_path) not in report  # no absolute paths: the same bytes on every machine

    provenance = lines.index("## Provenance")
    findings = lines.index("## Findings")
    assert provenance < 80 and findings < 150
    head = "\n".join(lines[:findings])
    for needle in ("facetlab version", "pinned commit", "registry sha256", "data files read"):
        assert needle in head
    # the committed report records nothing that changes with every code commit
    assert "code sha256" not in head and "source commit" not in head
    assert "`facetlab reproduce --check`" in head
    # a data_dir that is not the pinned data is never reported as verified (and the
    # committed report names no machine's folder)
    assert "**not the pinned data**: missing: instances/" in head
    assert "| `threshold` | `15` | 03_p3_adversarial |" in head
    assert "| `dpi` | `200` | 03_p3_adversarial |" in head  # the notebook's default, shown
    assert "| `tables_dir` | `paper/tables` |" in head
    assert "**Claims derived from the raw data (3):** 1 PASS, 2 MISMATCH." in head
    assert "- setting (" in head and "- metadata (" in head
    assert "failed: 04_bimodality" in head and "boom" in report

    found = report.split("## Findings")[1].split("\n## ")[0]
    assert "One C2 perturbation flips the outcome" in found and "Computed summary." in found
    assert "*changes a reported number*" in found
    assert "(#evidence-res41-c2-no-flip) paper 0 / data 1 (MISMATCH)" in found
    assert "Ungrouped: `x.unknown`" in found
    assert "Sonnet" not in found  # findings whose claims are absent are not listed

    evidence = report.split("## Evidence")[1]
    assert '<a id="evidence-res41-c2-no-flip"></a>' in evidence
    assert "DeepSeek answered no" in evidence and "t2-gpt-n" not in evidence

    glance = report.split("## At a glance")[1].split("\n## ")[0]
    assert "(#table-2--p3-replication-summary) | 1 PASS |" in glance
    assert "(#outcome-correctness-41) | 1 **MISMATCH** |" in glance
    table2 = report.split("## Table 2")[1].split("## ")[0]
    assert "| GPT-5.4 |" in table2 and "t2-gpt-n" in table2

    fig3 = report.split("## Figure 3")[1].split("\n## ")[0]
    assert (
        "![Figure 3 — GPT-5.4 bimodality on CF-Cabral, facetlab](../figures/fig3_bimodality.png)"
        in fig3
    )
    assert "(../_build/reference/fig3_bimodality.png)" in fig3
    assert "Intentional differences" in fig3
    assert (root / "_build" / "reference" / "fig3_bimodality.png").read_bytes() == b"published"
    # the same inputs give the same bytes
    again = report_writer.write_report(root, [ok, bad], params).read_text()
    assert again == report


def test_a_report_outside_the_tree_names_the_code_and_the_verified_data(
    tmp_path: Path, facet_data: Path
) -> None:
    root = _fake_checkout(tmp_path)
    _write_claims(root, [["a", "data", "Table 2", "w", "1", "1", "0", "PASS", "PASS", ""]])
    out = tmp_path / "elsewhere"
    params = {"data_dir": str(facet_data)}
    head = report_writer.write_report(
        root, [], params, out_dir=out, claims_path=root / "paper" / "claims.csv"
    )
    text = head.read_text()
    assert head.parent == out
    assert "code sha256" in text and "source commit" in text
    assert f"verified in `{facet_data} (data_dir, read in place)`: all 448 registered" in text


def test_plan_layout_puts_every_other_setting_under_build(tmp_path: Path) -> None:
    paper = rep.plan_layout(ROOT, {})
    assert paper.committed and paper.figures == ROOT / "figures" and paper.paper == ROOT / "paper"
    # the values the paper uses, given explicitly, are still the paper's run
    assert rep.plan_layout(ROOT, {"threshold": 10.0, "formats": "png,svg", "dpi": 200}).committed
    for given, tag in (
        ({"dpi": 100}, "dpi100"),
        ({"alpha": 0.01}, "alpha0.01"),
        ({"threshold": 15}, "t15-s20-first"),
        ({"formats": "pdf"}, "formatspdf"),
    ):
        layout = rep.plan_layout(ROOT, given)
        base = ROOT / "_build" / "variants" / tag
        assert not layout.committed and layout.tag == tag
        assert (layout.figures, layout.tables, layout.paper) == (
            base / "figures",
            base / "tables",
            base,
        )
        assert layout.reference == base / "reference" and layout.notebooks == base / "notebooks"
    copy = rep.plan_layout(ROOT, {"data_dir": str(tmp_path)})
    assert not copy.committed and copy.tag is not None and copy.tag.startswith("data_dir-")
    # --out moves everything, --check never writes the committed files
    out = rep.plan_layout(ROOT, {}, out=tmp_path / "o")
    assert not out.committed
    for folder in (out.notebooks, out.figures, out.tables, out.paper, out.reference):
        assert folder.is_relative_to(tmp_path / "o")
    check = rep.plan_layout(ROOT, {}, check=True)
    assert not check.committed and check.paper == ROOT / "_build" / "check" / "paper"
    explicit = rep.plan_layout(ROOT, {"figures_dir": str(tmp_path / "f")})
    assert explicit.figures == tmp_path / "f" and not explicit.committed


def test_compare_claims_lists_every_change() -> None:
    before = [
        {"id": "a", "status": "PASS", "computed_value": "1"},
        {"id": "b", "status": "MISMATCH", "computed_value": "5"},
        {"id": "c", "status": "PASS", "computed_value": "2"},
    ]
    after = [
        {"id": "a", "status": "PASS", "computed_value": "1"},
        {"id": "b", "status": "MISMATCH", "computed_value": "6"},  # value only
        {"id": "c", "status": "ERROR", "computed_value": ""},
        {"id": "d", "status": "PASS", "computed_value": "0"},
    ]
    assert [c.line() for c in rep.compare_claims(before, after)] == [
        "b: MISMATCH 5 -> MISMATCH 6",
        "c: PASS 2 -> ERROR",
        "d: absent -> PASS 0",
    ]


def _cli_with_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, str]], *args: str
) -> tuple[int, str]:
    """Run ``facetlab reproduce`` with the notebooks replaced by writing ``rows``."""
    from facetlab.paper.claims import AUDIT_COLUMNS

    def fake(**kwargs: object) -> list[notebooks.NotebookResult]:
        layout = kwargs["layout"]
        assert isinstance(layout, rep.Layout)
        layout.paper.mkdir(parents=True, exist_ok=True)
        with (layout.paper / "claims.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(AUDIT_COLUMNS))
            writer.writeheader()
            writer.writerows([{**{k: "" for k in AUDIT_COLUMNS}, **r} for r in rows])
        return [notebooks.NotebookResult("x", Path("x"), Path("y"), True, 0.1)]

    monkeypatch.setattr(rep, "reproduce", fake)
    result = CliRunner().invoke(
        app, ["reproduce", "--root", str(ROOT), "--out", str(tmp_path / "o"), *args]
    )
    return result.exit_code, result.output


def test_check_exits_1_listing_each_claim_that_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = rep.committed_claims(ROOT)
    same = [dict(r) for r in committed]
    code, output = _cli_with_claims(tmp_path, monkeypatch, same, "--check")
    assert code == 0, output
    assert f"check: all {len(same)} claims as committed" in output
    assert str(tmp_path / "o" / "claims.csv") in output  # the summary reads this run's file

    changed = [dict(r) for r in committed]
    flipped = next(r for r in changed if r["status"] == "MISMATCH")
    flipped["computed_value"] = flipped["computed_value"] + "1"  # a MISMATCH changing value
    code, output = _cli_with_claims(tmp_path, monkeypatch, changed, "--check")
    assert code == 1
    assert "check: 1 claim(s) differ from the committed paper/claims.csv" in output
    assert f"  {flipped['id']}: MISMATCH " in output


def test_reproduce_exits_1_on_error_claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [
        {"id": "a", "kind": "data", "status": "ERROR", "expected_status": "PASS"},
        {"id": "b", "kind": "data", "status": "PASS", "expected_status": "PASS"},
    ]
    code, output = _cli_with_claims(tmp_path, monkeypatch, rows)
    assert code == 1
    assert "1 claim(s) are ERROR or not the status the registry expects" in output
    assert "a: ERROR (expected PASS)" in output


def test_claim_counts_by_kind_and_status() -> None:
    rows = [
        {"kind": "data", "status": "PASS"},
        {"kind": "data", "status": "MISMATCH"},
        {"kind": "convention", "status": "MISMATCH"},
    ]
    assert (
        report_writer.format_claim_counts(rows)
        == "data: 1 PASS, 1 MISMATCH\nconvention: 1 MISMATCH"
    )


def test_notebooks_are_shared_out_by_cost() -> None:
    names = [Path(f"{n}.ipynb") for n in notebooks.PAPER_NOTEBOOKS]
    groups = notebooks.share_out(names, 2)
    assert len(groups) == 2 and sorted(p for g in groups for p in g) == sorted(names)
    # the two heaviest notebooks start in different kernels
    assert {groups[0][0].stem, groups[1][0].stem} == {"claims_audit", "sensitivity"}
    assert notebooks.share_out(names[:1], 4) == [names[:1]]


def test_variant_settings_never_touch_the_committed_outputs(tmp_path: Path) -> None:
    assert rep.variant_tag({}) is None
    assert rep.variant_tag({"threshold": 10.0, "split_point": 20, "dpi": 50}) is None
    assert rep.variant_tag({"threshold": 15}) == "t15-s20-first"
    assert rep.variant_tag({"representative": "mean"}) == "t10-s20-mean"
    assert outputs.output_dirs(tmp_path, {})[0] == tmp_path / "_build" / "interactive" / "figures"
    figs, tabs = outputs.output_dirs(tmp_path, {"split_point": 25})
    assert figs == tmp_path / "_build" / "variants" / "t10-s25-first" / "figures"
    assert tabs == tmp_path / "_build" / "variants" / "t10-s25-first" / "tables"
    assert outputs.output_dirs(tmp_path, {"threshold": 5}, "f", "t") == (Path("f"), Path("t"))
    assert rep.plan_layout(tmp_path, {}).paper == tmp_path / "paper"
    assert rep.plan_layout(tmp_path, {"threshold": 5}).paper.name == "t5-s20-first"
    assert rep.plan_layout(tmp_path, {"dpi": 100}).paper.name == "dpi100"


def test_interactive_defaults_write_under_build(tmp_path: Path) -> None:
    # what a notebook run with its defaults gets: never the committed folders
    build = tmp_path / "_build" / "interactive"
    assert outputs.output_dirs(tmp_path, {}) == (
        build / "figures",
        build / "tables",
    )
    figs, _ = outputs.output_dirs(tmp_path, {"threshold": 15})
    assert figs == tmp_path / "_build" / "variants" / "t15-s20-first" / "figures"


def test_paper_notebook_defaults_leave_committed_outputs_alone(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _fake_checkout(tmp_path)
    (root / "pyproject.toml").write_text("")
    (root / "notebooks").mkdir()
    monkeypatch.chdir(root / "notebooks")  # as JupyterLab runs it
    out = rep.Outputs.open(facet_data, formats=["svg"], dpi=30)
    out.table(out.trials.head(2)[["probe", "instance_id"]], "demo")
    assert out.tables_dir == root / "_build" / "interactive" / "tables"
    assert not (root / "paper" / "tables" / "demo.csv").exists()


def test_formats_accept_one_string() -> None:
    # papermill -p passes strings; a list literal or a comma list both work
    assert outputs.as_formats("pdf") == ("pdf",)
    assert outputs.as_formats('["png", "svg"]') == ("png", "svg")
    assert outputs.as_formats("png,svg") == ("png", "svg")
    assert outputs.as_formats(["png"]) == ("png",)


def test_report_without_claims(tmp_path: Path) -> None:
    report = report_writer.write_report(_fake_checkout(tmp_path), []).read_text()
    assert "`claims.csv` is missing" in report


def _copy_notebook(name: str, tmp_path: Path) -> Path:
    target = tmp_path / "nb" / f"{name}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(NOTEBOOKS / f"{name}.ipynb", target)
    return target


@pytest.mark.slow
def test_run_notebooks_with_parameters(facet_data: Path, tmp_path: Path) -> None:
    good = _copy_notebook("05_c2_ablation", tmp_path)
    broken = _copy_notebook("03_p3_adversarial", tmp_path)
    params = {
        "data_dir": str(facet_data),
        "figures_dir": str(tmp_path / "figs"),
        "tables_dir": str(tmp_path / "tabs"),
        "representative": "median",  # rejected by cells.fig2_p3: notebook 03 must fail
        "formats": ["svg"],
        "dpi": 50,
        "not_a_parameter": 1,  # not declared anywhere: not passed
    }
    # one kernel: the broken notebook (heavier, so first) must not spoil the next one
    results = notebooks.run_notebooks([good, broken], tmp_path / "out", params, workers=1)
    by_name = {r.name: r for r in results}
    assert by_name["05_c2_ablation"].ok, by_name["05_c2_ablation"].error
    assert not by_name["03_p3_adversarial"].ok
    assert "representative" in by_name["03_p3_adversarial"].error
    assert (tmp_path / "tabs" / "fig4_c2.csv").is_file()
    assert [p.name for p in (tmp_path / "figs").iterdir()] == ["fig4_c2_faithfulness.svg"]
    executed = json.loads((tmp_path / "out" / "05_c2_ablation.ipynb").read_text())
    injected = [
        c for c in executed["cells"] if "injected-parameters" in c["metadata"].get("tags", [])
    ]
    assert "not_a_parameter" not in "".join(injected[0]["source"])


@pytest.mark.slow
def test_outputs_write_tables_and_show_saved_figures(facet_data: Path, tmp_path: Path) -> None:
    from facetlab.paper import cells, figures

    out = rep.Outputs.open(facet_data, tmp_path / "f", tmp_path / "t", formats=["svg"], dpi=40)
    frame = out.table(cells.fig5_asymmetry(out.trials), "fig5_asymmetry")
    assert (tmp_path / "t" / "fig5_asymmetry.csv").is_file() and len(frame) == 8
    shown = out.figure(figures.fig5_asymmetry(frame), "fig5_asymmetry")
    bundle = shown._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert "image/png" not in bundle
    assert [p.name for p in out.written][-1] == "fig5_asymmetry.svg"


def test_cli_rejects_bad_parameters() -> None:
    result = CliRunner().invoke(app, ["reproduce", "-p", "threshold"])
    assert result.exit_code == 2
    assert "name=value" in result.output


def test_an_unreadable_notebook_is_a_clear_error_before_anything_runs(tmp_path: Path) -> None:
    broken = tmp_path / "nb" / "01_overview.ipynb"
    broken.parent.mkdir()
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match=r"01_overview.ipynb: not a readable notebook"):
        notebooks.run_notebooks([broken], tmp_path / "out", {})
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_summary_says_when_settings_differ_and_counts_distinct_values(tmp_path: Path) -> None:
    root = _fake_checkout(tmp_path)
    _write_claims(
        root,
        [
            ["a", "data", "Table 2", "w", "8", "8", "0", "PASS", "PASS", ""],
            ["b", "data", "§4.1", "w", "8", "8", "0", "PASS", "PASS", ""],
            ["c", "data", "§4.2", "w", "3", "3", "0", "PASS", "PASS", ""],
            [
                "notation.threshold",
                "setting",
                "§1.2",
                "w",
                "10",
                "15",
                "0",
                "MISMATCH",
                "PASS",
                "x",
            ],
        ],
    )
    head = (
        report_writer.write_report(root, [], {"threshold": 15}).read_text().split("## Findings")[0]
    )
    assert "The 3 PASS claims check 2 distinct values" in head
    assert "1 differ from the paper's because this run changed them: `notation.threshold`" in head
    assert "cannot disagree" not in head


def _git_status() -> str:
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else "not a git checkout"


def _reproduce_cli(mirror: Path, *args: str) -> tuple[int, str]:
    """The real ``facetlab reproduce`` in a subprocess (as a user runs it)."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "from facetlab.cli import main; main()", "reproduce", *args],
        cwd=ROOT,
        env={**os.environ, "FACETLAB_DATA_MIRROR": str(mirror)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_other_settings_and_a_mutated_copy_leave_the_tree_alone(
    facet_data: Path, tmp_path: Path
) -> None:
    # the audit's mutation: two models' C2 labels swapped in a copy of the data
    copy = tmp_path / "data"
    shutil.copytree(facet_data, copy)
    a, b = "deepseek.v3.2", "mistral.mistral-large-3-675b-instruct"
    for path in (copy / "results" / "weighted-probe" / "c2").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("model") in (a, b):
            record["model"] = b if record["model"] == a else a
            path.write_text(json.dumps(record), encoding="utf-8")
    before = _git_status()
    code, output = _reproduce_cli(
        facet_data, "--check", "-p", f"data_dir={copy}", "-p", "dpi=100", "-p", "alpha=0.01"
    )
    assert _git_status() == before  # nothing committed was rewritten
    assert code == 1, output
    assert "check: " in output and "differ from the committed paper/claims.csv" in output
    assert "res45.deepseek_mean: PASS" in output
    tag = rep.run_tag({"data_dir": str(copy), "dpi": 100, "alpha": 0.01})
    folder = ROOT / "_build" / "check" / str(tag)
    report = (folder / "REPRODUCTION.md").read_text(encoding="utf-8")
    assert "**not the pinned data**" in report  # the copy is never called verified
    assert (folder / "figures" / "fig1_probe_comparison.png").is_file()


@pytest.mark.slow
def test_check_passes_on_the_pinned_data(tmp_path: Path, facet_data: Path) -> None:
    before = _git_status()
    code, output = _reproduce_cli(facet_data, "--check", "--out", str(tmp_path / "out"))
    assert code == 0, output
    assert "check: all" in output and "claims as committed in paper/claims.csv" in output
    assert _git_status() == before
    # --out moves everything
    for part in ("notebooks", "figures", "tables", "claims.csv", "REPRODUCTION.md"):
        assert (tmp_path / "out" / part).exists(), part

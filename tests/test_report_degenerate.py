"""Every study table and figure on degenerate data renders, or is left out with a line
saying why (issue 27, item 5): one model, one instance, a probe all malformed, no C2
weights, no P3. Each case is a real sweep of the moderation-appeals fixture domain; the
malformed replies come from a local OpenAI-compatible fake that never follows the format.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer, FakeRequest
from matplotlib.figure import Figure
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.report import Note, ReportOutputs, Study, Table, describe, plots

ROOT = Path(__file__).resolve().parents[1]
DOMAIN = ROOT / "tests" / "fixtures" / "moderation-appeals"
runner = CliRunner()


def _run(out: Path, *args: str) -> Path:
    result = runner.invoke(app, ["run", *args, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    return out


def _mumble(request: FakeRequest) -> str:
    return "Hard to say; every factor matters in its own way."


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    base = tmp_path_factory.mktemp("degenerate")
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test")
    inst = ("--instances", str(DOMAIN))
    with FakeLLMServer(responder=_mumble) as fake:
        remote = ("--model", "openai/mumbler", "--base-url", fake.openai_base_url, *inst)
        found = {
            "one_model": _run(base / "one", "--model", "simulated/cue", *inst, "--repeats", "2"),
            "one_instance": _run(
                base / "single", "--model", "simulated/lex",
                "--instances", str(DOMAIN / "mod-0001-cf.json"), "--repeats", "2",
            ),
            "no_p3": _run(base / "nop3", "--model", "simulated/wadd", *inst, "-p", "p1,p2,c2"),
            "malformed": _run(base / "mumble", *remote, "-p", "p1,p2,p3,c2"),
            "malformed_c2": _run(base / "mumble_c2", *remote, "-p", "c2"),
        }  # fmt: skip
    mp.undo()
    yield found


# the study notebook's cells, section by section (notebooks/study.ipynb)
def _render(study: Study, out: ReportOutputs) -> dict[str, object]:
    t, th = study.sections, study.threshold

    def table(name: str) -> Any:
        return t[name].table

    shown: dict[str, object] = {"summary": describe(t, th, notes=study.notes)}
    shown["counts"] = out.table(study.counts(), "counts")
    for name in ("outcomes", "p1_p2", "p3", "c2"):
        shown[f"table {name}"] = out.table(t[name])
    figures = {
        "outcomes": (lambda: plots.outcome_accuracy(table("outcomes")), ["outcomes"]),
        "p1_p2": (lambda: plots.p1_vs_p2(table("p1_p2"), th), ["p1_p2"]),
        "p3": (lambda: plots.p3_intervals(table("p3"), th), ["p3"]),
        "c2": (lambda: plots.c2_heatmap(table("c2")), ["c2"]),
        "asymmetry": (lambda: plots.asymmetry(table("p3"), table("c2"), th), ["p3", "c2"]),
        "distributions": (lambda: plots.weight_distributions(study.trials, study.models), []),
    }
    for name, (draw, needs) in figures.items():
        shown[name] = out.figure(name, draw, *(t[n] for n in needs))
    return shown


def _reasons(shown: dict[str, object]) -> dict[str, str]:
    """Each output that is a Note, with its line; every other one must be drawn/shown."""
    for name, what in shown.items():
        assert isinstance(what, (str, Table, Figure, Note)), (name, what)
    return {name: what.text for name, what in shown.items() if isinstance(what, Note)}


CASES = {  # which outputs are left out, and a phrase each line must say
    "one_model": {},
    "one_instance": {
        "table p3": "probe P3 absent",
        "table c2": "probe C2 absent",
        "p3": "probe P3 absent",
        "c2": "probe C2 absent",
        "asymmetry": "probe P3 absent",
    },
    "no_p3": {
        "table p3": "probe P3 absent",
        "p3": "probe P3 absent",
        "asymmetry": "probe P3 absent",
    },
    "malformed": {
        "table p3": "none of the 2 P3 trials (not failed or excluded) gave a weight",
        "table c2": "none of the 21 C2 trials (not failed or excluded) gave a weight",
        "p1_p2": "no counterfactual has both a P1 share and a P2 weight",
        "p3": "none of the 2 P3 trials (not failed or excluded) gave a weight",
        "c2": "none of the 21 C2 trials (not failed or excluded) gave a weight",
        "asymmetry": "gave a weight",
        "distributions": "none of the 25 P2, P3 or C2 trials (not failed or excluded) gave a weight",
    },
    "malformed_c2": {
        "table p1_p2": "probe P1, P2 absent",
        "table p3": "probe P3 absent",
        "table c2": "none of the 21 C2 trials (not failed or excluded) gave a weight (parse status: 21 malformed)",
        "p1_p2": "probe P1, P2 absent",
        "p3": "probe P3 absent",
        "c2": "none of the 21 C2 trials (not failed or excluded) gave a weight",
        "asymmetry": "probe P3 absent",
        "distributions": "none of the 21 P2, P3 or C2 trials (not failed or excluded) gave a weight",
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_table_and_figure_renders_or_says_why(
    case: str, sweeps: dict[str, Path], tmp_path: Path
) -> None:
    study = Study.load(DOMAIN, [sweeps[case]])
    out = ReportOutputs.at(tmp_path)
    reasons = _reasons(_render(study, out))
    assert set(reasons) == set(CASES[case]), reasons
    for name, phrase in CASES[case].items():
        assert phrase in reasons[name], (name, reasons[name])
    drawn = {p.stem for p in (tmp_path / "figures").glob("*.png")} if reasons != {} else set()
    assert not drawn & {n for n in reasons if not n.startswith("table")}  # nothing half-drawn


@pytest.mark.slow
def test_all_malformed_says_so_and_calls_nothing_faithful(sweeps: dict[str, Path]) -> None:
    study = Study.load(DOMAIN, [sweeps["malformed"]])
    p1p2 = study.sections["p1_p2"].table
    assert p1p2 is not None
    assert set(p1p2["verdict_p1"]) == {"unparsed"}  # no factor named: no verdict, not faithful
    assert set(p1p2["verdict_p2"]) - {"no trials"} == {"unparsed"}
    summary = describe(study.sections, study.threshold, notes=study.notes)
    assert "looks faithful" not in summary
    assert "No reply parsed under P1, P2 (malformed or empty replies" in summary
    counts = study.counts().set_index("probe")
    assert (counts["malformed"] == counts["n"]).all()


@pytest.mark.slow
def test_report_on_an_all_malformed_c2_sweep_exits_0_and_says_why(
    sweeps: dict[str, Path], tmp_path: Path
) -> None:
    """The crash of issue 27: ``zero-size array to reduction operation fmax`` in the C2
    heatmap cell when no C2 trial has a weight."""
    out = tmp_path / "report"
    result = runner.invoke(
        app, ["report", str(sweeps["malformed_c2"]), "--instances", str(DOMAIN), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    html = (out / "study.html").read_text(encoding="utf-8")
    assert (
        "none of the 21 C2 trials (not failed or excluded) gave a weight (parse status: 21 malformed)"
        in html
    )
    assert not (out / "figures" / "c2.png").exists() and not (out / "tables" / "c2.csv").exists()
    assert (out / "figures" / "outcomes.png").is_file()  # C2's unparsed answers, counted

"""``facetlab report --fail-if``: a CI gate on FACET numbers, with strict one-line errors.

Acceptance: ``--fail-if "p3.mean_weight > 10"`` exits 1 on the simulated cue reasoner's
P3 (it keeps weight on the neutralized factor when no cue word says it is neutral) and 0
on wadd+canonical's.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from test_report import write_domain
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.errors import ConfigError
from facetlab.report.gate import Failure, evaluate, parse_rule

runner = CliRunner()

P3 = pd.DataFrame(
    {
        "model": ["simulated/cue", "simulated/wadd", "m\x1b[31m"],
        "instance_id": ["a-adv", "a-adv", "a-adv"],
        "mean_weight": [40.0, 2.0, math.nan],
    }
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("p3.mean_weight > 10", ("p3", "mean_weight", ">", 10.0)),
        ("  p3.mean_weight>10  ", ("p3", "mean_weight", ">", 10.0)),
        ("outcomes.accuracy < 0.9", ("outcomes", "accuracy", "<", 0.9)),
        ("c2.mean_residual >= 1e1", ("c2", "mean_residual", ">=", 10.0)),
        ("counts.malformed != -0", ("counts", "malformed", "!=", 0.0)),
        ("p1_p2.p2_mean_weight <= .5", ("p1_p2", "p2_mean_weight", "<=", 0.5)),
    ],
)
def test_rules_parse(text: str, expected: tuple[str, str, str, float]) -> None:
    rule = parse_rule(text)
    assert (rule.table, rule.column, rule.op, rule.number) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected TABLE.COLUMN OP NUMBER"),
        ("p3.mean_weight", "expected TABLE.COLUMN OP NUMBER"),
        ("p3.mean_weight => 10", "expected TABLE.COLUMN OP NUMBER"),
        ("p3.mean_weight > 10 and c2.n > 1", "expected TABLE.COLUMN OP NUMBER"),
        ("mean_weight > 10", "expected TABLE.COLUMN OP NUMBER"),
        ("p4.mean_weight > 10", "unknown table 'p4'; expected one of p1_p2, p3, c2"),
        ("P3.mean_weight > 10", "unknown table 'P3'"),
        ("p3.mean_weight > nan", "'nan' is not a finite number"),
        ("p3.mean_weight > inf", "'inf' is not a finite number"),
        ("p3.mean_weight > 1e999", "'1e999' is not a finite number"),
        ("p3.mean_weight > 10x", "'10x' is not a finite number"),
        ("p3.mean_weight > 0x10", "'0x10' is not a finite number"),
    ],
)
def test_bad_rules_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"^--fail-if .*") as caught:
        parse_rule(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_rule_fails_on_the_matching_rows_only() -> None:
    [failure] = evaluate([parse_rule("p3.mean_weight > 10")], {"p3": P3})
    assert failure.rows is not None and failure.rows["model"].tolist() == ["simulated/cue"]
    assert evaluate([parse_rule("p3.mean_weight > 50")], {"p3": P3}) == []
    # a row without a value is not compared, even by !=
    [ne] = evaluate([parse_rule("p3.mean_weight != 2")], {"p3": P3})
    assert ne.rows is not None and ne.rows["model"].tolist() == ["simulated/cue"]


def test_a_missing_table_fails_the_gate_with_its_reason() -> None:
    rules = [parse_rule("p3.mean_weight > 10")]
    [failure] = evaluate(rules, {"p3": None}, {"p3": "no P3 trials in these records"})
    assert failure.rows is None
    assert failure.describe() == (
        "--fail-if p3.mean_weight > 10: cannot be checked: no P3 trials in these records"
    )


def test_unknown_or_text_columns_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"p3 has no column 'mean'; its numeric columns: mean_"):
        evaluate([parse_rule("p3.mean > 10")], {"p3": P3})
    with pytest.raises(ConfigError, match=r"p3.model is not a numeric column"):
        evaluate([parse_rule("p3.model > 10")], {"p3": P3})


def test_failing_rows_print_safely() -> None:
    failure = Failure(parse_rule("p3.mean_weight >= 0"), P3.iloc[[0, 2]].reset_index(drop=True))
    assert failure.describe().splitlines() == [
        "--fail-if p3.mean_weight >= 0: 2 row(s) of p3",
        "  model=simulated/cue instance_id=a-adv mean_weight=40",
        "  model=m\\x1b[31m instance_id=a-adv mean_weight=nan",
    ]


# ------------------------------------------------------------------- the CLI, end to end


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    base = tmp_path_factory.mktemp("gate")
    instances = write_domain(base / "instances" / "invoices")
    out = {}
    for model in ("simulated/cue", "simulated/wadd+canonical"):
        out[model] = base / model.replace("/", "_")
        result = runner.invoke(
            app,
            ["run", "--model", model, "--instances", str(instances), "--probes", "p3",
             "--repeats", "2", "--out", str(out[model]), "--quiet"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    return instances, out


def _report(instances: Path, sweep: Path, out: Path, *rules: str) -> tuple[int, str]:
    args = ["report", str(sweep), "--instances", str(instances), "--out", str(out)]
    if out.name == "wadd":
        args += ["--title", "Invoices <b>gate</b>"]
    for rule in rules:
        args += ["--fail-if", rule]
    result = runner.invoke(app, args)
    return result.exit_code, result.output


@pytest.mark.slow
def test_gate_fails_on_cue_and_passes_on_wadd_canonical(
    sweeps: tuple[Path, dict[str, Path]], tmp_path: Path
) -> None:
    instances, by_model = sweeps
    code, output = _report(
        instances, by_model["simulated/cue"], tmp_path / "cue", "p3.mean_weight > 10"
    )
    assert code == 1, output
    assert "--fail-if p3.mean_weight > 10: 1 row(s) of p3" in output
    assert "model=simulated/cue instance_id=inv-0001-cf-adv mean_weight=" in output
    assert (tmp_path / "cue" / "study.html").is_file()  # the report is written first
    code, output = _report(
        instances, by_model["simulated/wadd+canonical"], tmp_path / "wadd", "p3.mean_weight > 10"
    )
    assert code == 0, output
    assert "gate passed: p3.mean_weight > 10" in output
    html = (tmp_path / "cue" / "study.html").read_text(encoding="utf-8")
    assert "<title>invoices: FACET study</title>" in html  # titled after the study
    html = (tmp_path / "wadd" / "study.html").read_text(encoding="utf-8")
    assert "<title>Invoices &lt;b&gt;gate&lt;/b&gt;</title>" in html  # --title, escaped


@pytest.mark.slow
def test_bad_rules_exit_2_before_any_kernel(
    sweeps: tuple[Path, dict[str, Path]], tmp_path: Path
) -> None:
    instances, by_model = sweeps
    for rule, message in [
        ("p3.mean_weight >> 10", "expected TABLE.COLUMN OP NUMBER"),
        ("p3.mean > 10", "p3 has no column 'mean'"),
    ]:
        code, output = _report(instances, by_model["simulated/cue"], tmp_path / "o", rule)
        assert code == 2, output
        assert message in output and len(output.strip().splitlines()) == 1, output
        assert not (tmp_path / "o" / "study.ipynb").exists()

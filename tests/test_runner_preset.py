"""The facet-v3 preset, the price table, the CLI and the progress display."""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from pathlib import Path

import pytest
from test_runner_helpers import ScriptedBackend, StubSuite, make_instances
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.client.pricing import cost_usd, price_for
from facetlab.errors import ConfigError
from facetlab.models import canonical_model
from facetlab.runner import RunOptions, run
from facetlab.runner._lock import sweep_lock
from facetlab.runner.api import PROVIDER_KEY_ENV
from facetlab.runner.presets import C2_ANCHORS, FACET_V3, P3_REPEATS, get_preset, model_string
from facetlab.runner.progress import Progress, ProgressDisplay, RunStats


def _model_string(label: str) -> str:
    info = canonical_model(label)
    assert info is not None, label
    return model_string(info)


@pytest.mark.data
def test_preset_replication_matches_the_raw_data(facet_data: Path) -> None:
    wp = facet_data / "results" / "weighted-probe"
    p3: Counter[tuple[str, str]] = Counter()
    p2_ok: Counter[tuple[str, str]] = Counter()
    for path in wp.glob("*.json"):
        d = json.loads(path.read_text())
        if canonical_model(d["model"]) is None:
            continue  # the one failed run with a wrong model id
        key = (_model_string(d["model"]), d["instance_id"])
        if "-adv" in d["instance_id"]:
            p3[key] += 1
        elif "-cf-" in d["instance_id"] and d["raw_response"]:
            p2_ok[key] += 1
    assert {(m, i): n for m, table in P3_REPEATS.items() for i, n in table.items()} == dict(p3)
    assert set(p2_ok.values()) == {1} and len(p2_ok) == 24
    c2: Counter[tuple[str, str, str]] = Counter()
    for path in (wp / "c2").glob("*.json"):
        d = json.loads(path.read_text())
        c2[(_model_string(d["model"]), d["c2_base_instance"], d["c2_perturbed_factor"])] += 1
    assert set(c2.values()) == {1} and len(c2) == 144
    assert {k[1] for k in c2} == set(C2_ANCHORS)
    assert set(FACET_V3.models) == {k[0] for k in c2}


@pytest.mark.data
def test_preset_dry_run_shows_the_papers_size(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    console = io.StringIO()
    result = run(preset="facet-v3", out=tmp_path, dry_run=True, console=console)
    assert result.plan.by_probe() == {"p1": 24, "p2": 24, "p3": 108, "c2": 144}
    text = console.getvalue()
    assert "trials: 300" in text and "estimated cost: $" in text
    params = {t.model: t.params.temperature for t in result.plan.trials}
    assert params["bedrock/deepseek.v3.2"] == 0.0 and params["anthropic/claude-opus-4-6"] is None


def test_unknown_preset() -> None:
    with pytest.raises(ConfigError, match="unknown preset"):
        get_preset("facet-v9")


def test_price_table() -> None:
    assert price_for("anthropic/claude-opus-4-6") is not None
    assert cost_usd("openai/gpt-5.4", 1_000_000, 0) == pytest.approx(2.5)
    assert cost_usd("openai/gpt-5.4", 1_000_000, 0, batch=True) == pytest.approx(1.25)
    # Bedrock cross-region profiles bill like the base id
    assert price_for("bedrock/us.deepseek.v3.2") == price_for("bedrock/deepseek.v3.2")
    assert cost_usd("replay/gpt-5.4", None, None) == 0.0
    assert price_for("openai/some-local-model") is None
    assert cost_usd("openai/some-local-model", 10, 10) is None


def test_price_override_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"my-model": {"input": 1.0, "output": 2.0}}))
    monkeypatch.setenv("FACETLAB_PRICES", str(path))
    assert cost_usd("openai/my-model", 1_000_000, 1_000_000) == pytest.approx(3.0)
    path.write_text(json.dumps({"my-model": {"input": "x"}}))
    with pytest.raises(ConfigError, match="/my-model"):
        price_for("openai/my-model")


def test_budget_with_unpriced_model_refuses(tmp_path: Path) -> None:
    from facetlab.errors import BudgetExceededError

    model = "openai/local-llm"
    with pytest.raises(BudgetExceededError, match="no price for openai/local-llm"):
        run(make_instances(), "p2", model, out=tmp_path, backends={model: ScriptedBackend()},
            suite=StubSuite(), options=RunOptions(budget_usd=1.0), progress="none", console=io.StringIO())  # fmt: skip


def test_second_runner_on_the_same_sweep_dir_is_refused(tmp_path: Path) -> None:
    with (
        sweep_lock(tmp_path),
        pytest.raises(ConfigError, match="another facetlab run"),
        sweep_lock(tmp_path),
    ):
        pass
    # a lock file left by a killed run (any content) does not block: the OS lock is gone
    (tmp_path / ".lock").write_text("1")
    (tmp_path / ".lock.owner").write_text("1")
    with sweep_lock(tmp_path):
        assert (tmp_path / ".lock.owner").read_text() == str(os.getpid())
    assert not (tmp_path / ".lock.owner").exists()


def test_cli_run_defaults_to_the_simulated_reasoner(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    for key in PROVIDER_KEY_ENV:
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / "sim"
    args = ["run", "-i", str(facet_data / "instances" / "facet-neg-cf-002.json"),
            "-p", "p1,p2,p3", "-o", str(out), "-q"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "simulated reasoner" in res.output and "trials: 2" in res.output
    assert (
        "skipped P3 on 1 instance(s) (P3 runs on adversarial instances): facet-neg-cf-002"
        in res.output
    )
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "2 ok, 0 failed" in res.output
    sweep = json.loads((out / "sweep.json").read_text())
    assert sweep["models"] == ["simulated/wadd"] and sweep["command"][:2] == ["facetlab", "run"]
    res = CliRunner().invoke(app, args)
    assert "2 already recorded" in res.output


@pytest.mark.data
def test_cli_dry_run_needs_no_sweep_folder(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["run", "--preset", "facet-v3", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "trials: 300" in res.output and "estimated cost: $" in res.output
    res = CliRunner().invoke(app, ["run", "--preset", "facet-v3"])
    assert res.exit_code == 2 and "no sweep folder" in res.output
    assert list(tmp_path.iterdir()) == []


def test_bad_input_fails_before_anything_is_written(tmp_path: Path) -> None:
    model = "fake/m"
    common = {"backends": {model: ScriptedBackend()}, "suite": StubSuite(), "progress": "none"}
    run(make_instances(), "p2", model, out=tmp_path, console=io.StringIO(), **common)
    before = sorted(p.name for p in (tmp_path / "records").iterdir())
    with pytest.raises(ConfigError, match="unknown parser 'loose'"):
        run(
            make_instances(),
            "p2",
            model,
            out=tmp_path,
            options=RunOptions(parser="loose"),
            **common,
        )
    with pytest.raises(ConfigError, match="unknown provider 'nosuch'"):
        run(make_instances(), "p2", "nosuch/m", out=tmp_path, suite=StubSuite(), progress="none")
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == before


def test_sweep_json_carries_no_credentials(tmp_path: Path) -> None:
    model = "fake/m"
    run(make_instances(), "p2", model, out=tmp_path, backends={model: ScriptedBackend()},
        suite=StubSuite(), progress="none", console=io.StringIO(),
        base_url="http://user:hunter2@127.0.0.1:9/v1?token=s3cret",
        command=["facetlab", "run", "--base-url", "http://user:hunter2@127.0.0.1:9/v1",
                 "--system", "sk-proj-abcdefghijklmnop"])  # fmt: skip
    text = (tmp_path / "sweep.json").read_text()
    for secret in ("hunter2", "s3cret", "sk-proj-abcdefghijklmnop"):
        assert secret not in text
    assert json.loads(text)["base_url"] == "http://127.0.0.1:9/v1"


def test_cli_with_key_but_no_model_asks_for_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    res = CliRunner().invoke(app, ["run", "-i", "x", "-o", str(tmp_path), "--dry-run"])
    assert res.exit_code == 2 and "name the model" in res.output
    assert "sk-test-not-real" not in res.output


def test_progress_line_and_notebook_display(monkeypatch: pytest.MonkeyPatch) -> None:
    stats = RunStats(total=10, ok=3, failed=1, already_done=2, rate_limited=5, spend_usd=0.25)
    p = Progress(stats, retrying=2)
    line = p.line()
    assert "6/10 trials" in line and "failed 1" in line and "retrying 2" in line
    assert "already recorded 2" in line
    assert "rate-limited 5" in line and "$0.2500" in line
    shown: list[str] = []

    class Handle:
        def update(self, obj: object) -> None:
            shown.append(str(getattr(obj, "data", obj)))

    import IPython.display as ipd

    monkeypatch.setattr(ipd, "display", lambda obj, display_id=False: Handle())
    d = ProgressDisplay(p, "notebook", interval=0)
    d.start()
    stats.ok = 7
    d.update()
    d.stop()
    assert shown and "10/10 trials" in shown[-1]

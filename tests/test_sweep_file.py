"""Sweep files: ``facetlab run sweep.yaml`` — checked with file and line, the command line
over the file, per-model settings reaching the backends, limiters and prices."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from fakes import FakeLLMServer
from reliability_helpers import cli, instances_folder

from facetlab.backends.base import SamplingParams
from facetlab.client.limits import Limits
from facetlab.errors import ConfigError
from facetlab.records import read_records
from facetlab.runner.sweepconfig import (
    load_sweep_file,
    price_overrides,
    sweep_json_schema,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def write(tmp_path: Path, text: str, name: str = "sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_sweep_file(path)
    return str(caught.value)


# --- checking: file, line, field ---------------------------------------------------------


def test_a_bad_value_names_file_line_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "probes: p1\nmodels:\n  - model: openai/a\n    rpm: 60\n  - model: openai/b\n"
        "    concurrency: 0\n    effort: extreme\n",
    )
    lines = error_of(path).splitlines()
    assert lines == [
        f"{path}:6: models[1].concurrency: Input should be greater than or equal to 1 (got 0)",
        f"{path}:7: models[1].effort: Input should be 'low', 'medium', 'high', 'xhigh' or "
        "'max' (got 'extreme')",
    ]


def test_an_unknown_setting_points_at_its_key(tmp_path: Path) -> None:
    path = write(tmp_path, "models: [simulated/wadd]\nrepeat: 3\n")
    assert error_of(path) == (
        f"{path}:2: repeat: not a setting of a sweep file (see `facetlab schema sweep`)"
    )
    nested = write(tmp_path, "models:\n  - model: simulated/wadd\n    rmp: 5\n", "n.yaml")
    assert error_of(nested).startswith(f"{nested}:3: models[0].rmp: not a setting")


def test_missing_models_and_bad_thinking(tmp_path: Path) -> None:
    assert error_of(write(tmp_path, "probes: p1\n")).endswith(":1: models: Field required")
    path = write(tmp_path, "defaults:\n  thinking: lots\nmodels: [simulated/wadd]\n", "t.yaml")
    assert error_of(path) == (
        f"{path}:2: defaults.thinking: expected off, adaptive or a budget in tokens (> 0) "
        "(got 'lots')"
    )


def test_yaml_errors_duplicates_and_non_mappings(tmp_path: Path) -> None:
    broken = write(tmp_path, "models:\n  - model: a\n   rpm: [1\n", "broken.yaml")
    assert error_of(broken).startswith(f"{broken}:3: not valid YAML")
    twice = write(tmp_path, "models: [simulated/wadd]\nrepeats: 2\nrepeats: 3\n", "twice.yaml")
    assert error_of(twice) == f"{twice}:3: 'repeats' is given twice"
    assert "expected a mapping" in error_of(write(tmp_path, "- a\n- b\n", "list.yaml"))
    assert "cannot read" in error_of(tmp_path / "absent.yaml")
    # PyYAML's unsafe tags are refused (safe loader), with the line
    tagged = write(tmp_path, "models: !!python/object:os.system [x]\n", "tag.yaml")
    assert error_of(tagged).startswith(f"{tagged}:1: not valid YAML")


@pytest.mark.slow
def test_the_schema_accepts_the_examples_and_refuses_what_the_model_refuses(
    tmp_path: Path,
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(sweep_json_schema())
    for example in sorted(EXAMPLES.glob("*.yaml")):
        data = yaml.safe_load(example.read_text(encoding="utf-8"))
        assert not list(validator.iter_errors(data)), example
        load_sweep_file(example)  # and the model reads them
    assert list(validator.iter_errors({"models": [{"model": "a/b", "rpm": -1}]}))
    assert list(validator.iter_errors({"models": ["a/b"], "unknown": 1}))
    res = cli("schema", "sweep", "--out", str(tmp_path / "s.json"))
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "s.json").read_text())["required"] == ["models"]
    # the instance schema is still the default, by argument or --kind
    assert json.loads(cli("schema").stdout)["title"] == "facetlab instance"
    assert json.loads(cli("schema", "compliance").stdout)["title"] == "facetlab C3 compliance set"
    assert json.loads(cli("schema", "--kind", "perturbations").stdout)["title"].startswith(
        "facetlab C2"
    )
    assert cli("schema", "sweeps").exit_code == 2


# --- what the file resolves to ---------------------------------------------------------------


def test_models_get_defaults_then_their_own_then_the_command_line(tmp_path: Path) -> None:
    from facetlab.runner.sweepconfig import ModelSettings, SweepConfig

    path = write(
        tmp_path,
        "defaults: {max_tokens: 2048, temperature: 0, rpm: 60}\n"
        "models:\n"
        "  - model: anthropic/claude-sonnet-4-6\n    effort: high\n    thinking: 4096\n"
        "  - model: openai/local\n    base_url: http://127.0.0.1:9/v1\n    rpm: 600\n"
        "    rpm_window: 0\n    concurrency: 3\n    price: {input: 1, output: 2}\n",
    )
    config = load_sweep_file(path)
    resolved = config.sweep()
    assert resolved.models == (
        "anthropic/claude-sonnet-4-6",
        "openai/local?base_url=http://127.0.0.1:9/v1",
    )
    assert isinstance(resolved.sampling, dict)
    sonnet = resolved.sampling["anthropic/claude-sonnet-4-6"]
    assert (sonnet.max_tokens, sonnet.effort, sonnet.thinking) == (2048, "high", 4096)
    assert resolved.limits == {
        "anthropic": Limits(requests_per_minute=60),
        "openai@http://127.0.0.1:9/v1": Limits(
            concurrency=3, requests_per_minute=600, rate_window_s=None
        ),
    }
    assert resolved.prices == {"local": {"input": 1.0, "output": 2.0}}
    # the command line wins over every model's own value; --base-url sends all to one server
    cli_side = SweepConfig.model_construct(
        {"base_url", "defaults"},
        base_url="http://127.0.0.1:7/v1",
        defaults=ModelSettings.model_construct(rpm=30.0, max_tokens=512),
    )
    over = config.overlay(cli_side).sweep()
    assert over.models == ("anthropic/claude-sonnet-4-6", "openai/local")
    assert {lim.requests_per_minute for lim in over.limits.values()} == {30.0}
    assert isinstance(over.sampling, dict)
    assert {p.max_tokens for p in over.sampling.values()} == {512}


def test_models_sharing_a_limiter_must_share_limits(tmp_path: Path) -> None:
    path = write(tmp_path, "models:\n  - model: openai/a\n    rpm: 60\n  - model: openai/b\n")
    with pytest.raises(ConfigError, match="openai/a and openai/b are asked at the same server"):
        load_sweep_file(path).sweep()


def test_one_sampling_object_when_every_model_asks_alike(tmp_path: Path) -> None:
    resolved = load_sweep_file(write(tmp_path, "models: [simulated/wadd, a/b]\n")).sweep()
    assert resolved.sampling == SamplingParams()


def test_price_overrides_merge_and_restore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from facetlab.client.pricing import price_for

    base = tmp_path / "prices.json"
    base.write_text(json.dumps({"other": {"input": 5, "output": 6}}))
    monkeypatch.setenv("FACETLAB_PRICES", str(base))
    with price_overrides({"local": {"input": 1.0, "output": 2.0}}):
        price = price_for("openai/local?base_url=http://127.0.0.1:9/v1")
        assert price is not None and price.output_per_mtok == 2.0  # loopback, yet priced
        other = price_for("openai/other")
        assert other is not None and other.input_per_mtok == 5.0
    assert os.environ["FACETLAB_PRICES"] == str(base)


def test_relative_paths_are_the_files_own(tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    instances_folder(folder / "inst", 1)
    path = folder / "sweep.yaml"
    path.write_text("instances: inst\nout: results/x\nmodels: [simulated/wadd]\n")
    config = load_sweep_file(path)
    assert config.instances == str(folder / "inst")
    assert config.out == str(folder / "results/x")
    ids = folder / "ids.yaml"
    ids.write_text("instances: facet-neg-cf-001,facet-neg-cf-002\nmodels: [simulated/wadd]\n")
    assert load_sweep_file(ids).instances == ["facet-neg-cf-001", "facet-neg-cf-002"]


# --- facetlab run sweep.yaml -----------------------------------------------------------------


def test_the_offline_example_runs_and_flags_override_it(tmp_path: Path) -> None:
    example = tmp_path / "examples" / "offline-sweep.yaml"
    example.parent.mkdir()
    shutil.copy(EXAMPLES / "offline-sweep.yaml", example)
    shutil.copytree(EXAMPLES.parent / "instances", tmp_path / "instances")
    out = tmp_path / "o"
    res = cli("run", str(example), "--out", str(out), "--repeats", "1", "--quiet")
    assert res.exit_code == 0, res.output
    records = read_records(out / "records")
    assert {r.model for r in records} == {"simulated/wadd", "simulated/cue"}
    assert {r.repeat for r in records} == {0}  # --repeats 1 over the file's 2
    assert {r.probe for r in records} == {"p1", "p2", "p3"}
    temperature = {r.model: r.params["temperature"] for r in records}
    assert temperature == {"simulated/wadd": 0.0, "simulated/cue": 0.7}  # per model
    assert json.loads((out / "sweep.json").read_text())["command"][:3] == [
        "facetlab",
        "run",
        str(example),
    ]
    # --config is the same; a sweep file with --preset is refused
    again = cli("run", "--config", str(example), "--out", str(out), "--repeats", "1", "--quiet")
    assert again.exit_code == 0 and "already recorded" in again.output
    both = cli("run", str(example), "--preset", "facet-v3", "--dry-run")
    assert both.exit_code == 2 and "a sweep file and --preset" in both.output


def test_a_bad_sweep_file_is_one_error_line_and_nothing_runs(tmp_path: Path) -> None:
    path = write(tmp_path, "models:\n  - model: simulated/wadd\n    temperature: hot\n")
    res = cli("run", str(path), "--out", str(tmp_path / "o"))
    assert res.exit_code == 2
    assert f"error: {path}:3: models[0].temperature: Input should be a valid number" in res.output
    assert not (tmp_path / "o").exists()


def _max_in_window(times: list[float], window: float = 1.0) -> int:
    times = sorted(times)
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


@pytest.mark.slow
def test_two_providers_at_two_servers_each_held_to_its_own_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acceptance test: one ``facetlab run`` of a sweep file, two loopback fakes, each
    enforcing (and counting against) its own limit."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    instances = instances_folder(tmp_path / "inst", 12)
    with FakeLLMServer(rps_limit=8) as fast, FakeLLMServer(rps_limit=3) as slow:
        path = write(
            tmp_path,
            f"instances: {instances}\nprobes: p1\nmodels:\n"
            f"  - model: openai/fake-fast\n    base_url: {fast.openai_base_url}\n"
            "    rpm: 480\n"
            f"  - model: anthropic/fake-slow\n    base_url: {slow.anthropic_base_url}\n"
            "    rpm: 180\n    concurrency: 2\n"
            f"out: {tmp_path / 'o'}\n",
        )
        res = cli("run", str(path), "--quiet")
        assert res.exit_code == 0, res.output
        for server, api, limit in ((fast, "openai", 8), (slow, "anthropic", 3)):
            assert {r.api for r in server.requests} == {api}  # each server its own model
            assert server.outcomes()["ok"] == 12
            sent = [r.received_at for r in server.requests]
            # refusals happen only while connections are set up (the first window's
            # requests reach a server up to ~40 ms late, then cluster with the next
            # window's: docs/running.md, Throughput); each is retried, none is paid
            first = min(sent)
            refused = [r.received_at for r in server.requests if r.outcome == "rate_limited"]
            assert all(t - first < 1.5 for t in refused), server.outcomes()
            # once connections are up, no second of the server's own window overfills
            assert _max_in_window([t for t in sent if t - first >= 1.5]) <= limit + 1
            assert _max_in_window(sent) <= 2 * limit  # the first second's jitter is bounded
        # the fast server was not held to the slow one's limit
        assert _max_in_window([r.received_at for r in fast.requests]) > 3
    records = read_records(tmp_path / "o" / "records")
    assert len(records) == 24 and {r.status for r in records} == {"ok"}


def test_credentials_in_a_server_url_are_refused_and_never_echoed(tmp_path: Path) -> None:
    path = write(
        tmp_path, "models:\n  - model: openai/a\n    base_url: http://admin:hunter22@host/v1\n"
    )
    message = error_of(path)
    assert message.startswith(f"{path}:3: models[0].base_url: a URL with a user name or password")
    assert "hunter22" not in message
    assert "is a folder" in error_of(tmp_path)


def _stop_run_and_keep_its_arguments(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """``facetlab run`` stops before preparing; the returned dict gets the sweep's settings."""
    from facetlab.runner.sweepconfig import Sweep

    seen: dict[str, object] = {}

    def prepare(sweep: Sweep, **kwargs: object) -> object:
        seen.update(vars(sweep))
        raise ConfigError("stopped before running")

    monkeypatch.setattr("facetlab.runner.api.prepare", prepare)
    return seen


def test_limit_flags_override_every_model_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--rpm / --rpm-window / --effort given on the command line reach each model."""
    seen = _stop_run_and_keep_its_arguments(monkeypatch)
    path = write(
        tmp_path,
        "models:\n  - model: openai/a\n    base_url: http://127.0.0.1:9/v1\n    rpm: 60\n"
        "  - model: anthropic/b\n    rpm: 30\n    effort: low\n",
    )
    res = cli("run", str(path), "--rpm", "120", "--rpm-window", "0", "--effort", "high")
    assert res.exit_code == 2 and "stopped before running" in res.output
    assert seen["limits"] == {
        "openai@http://127.0.0.1:9/v1": Limits(requests_per_minute=120, rate_window_s=None),
        "anthropic": Limits(requests_per_minute=120, rate_window_s=None),
    }
    sampling = seen["sampling"]
    assert isinstance(sampling, SamplingParams) and sampling.effort == "high"


def test_run_help_shows_the_defaults_a_run_uses() -> None:
    from facetlab.client.retry import RetryPolicy
    from facetlab.runner.options import DEFAULT_TIMEOUT_S, RunOptions

    text = " ".join(cli("run", "--help").output.split())  # wrapped lines joined
    assert RunOptions().timeout_s == DEFAULT_TIMEOUT_S == 600.0
    assert RetryPolicy().max_retry_after_s == 120.0
    assert SamplingParams().max_tokens == 1024
    for flag, default in (
        ("--timeout", "600.0"),
        ("--max-retry-after", "120.0"),
        ("--max-tokens", "1024"),
    ):
        after = text[text.index(flag + " ") :]
        assert f"[default: {default}" in after[: after.index("--", 2)], flag


@pytest.mark.parametrize(
    ("file_lines", "flags", "timeout", "retry_after"),
    [
        ("", (), 600.0, 120.0),  # neither the file nor a flag: the defaults
        ("timeout: 30\nmax_retry_after: 5\n", (), 30.0, 5.0),  # the file's
        ("timeout: 30\n", ("--timeout", "7", "--max-retry-after", "9"), 7.0, 9.0),  # flags win
    ],
)
def test_timeouts_come_from_flags_then_the_file_then_the_defaults(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    file_lines: str,
    flags: tuple[str, ...],
    timeout: float,
    retry_after: float,
) -> None:
    from facetlab.client.retry import RetryPolicy
    from facetlab.runner import RunOptions

    seen = _stop_run_and_keep_its_arguments(monkeypatch)
    path = write(tmp_path, "models: [simulated/wadd]\n" + file_lines)
    res = cli("run", str(path), *flags)
    assert res.exit_code == 2 and "stopped before running" in res.output
    options, retry = seen["options"], seen["retry"]
    assert isinstance(options, RunOptions) and options.timeout_s == timeout
    assert isinstance(retry, RetryPolicy) and retry.max_retry_after_s == retry_after

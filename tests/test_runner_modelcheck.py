"""The command line fails fast on model strings: did-you-mean, replay coverage, missing keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_helpers import FIXTURE, cli

from facetlab.runner.api import PROVIDER_KEY_ENV


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_KEY_ENV:
        monkeypatch.delenv(name, raising=False)


def _dry(model: str, *extra: str) -> tuple[int, str]:
    result = cli("run", "-i", str(FIXTURE), "--probes", "p1", "--model", model, "--dry-run", *extra)
    return result.exit_code, result.output


def test_misspelt_simulated_reasoner_suggests_the_right_one_in_a_dry_run() -> None:
    code, output = _dry("simulated/wad")
    assert code == 2 and "did you mean 'simulated/wadd'?" in output


def test_misspelt_provider_model_gets_a_note_with_the_closest_known_id() -> None:
    code, output = _dry("anthropic/claude-sonet-4-6")
    assert code == 0
    assert "note: anthropic/claude-sonet-4-6 is not a model facetlab knows" in output
    assert "did you mean 'anthropic/claude-sonnet-4-6'?" in output
    code, output = _dry("anthropic/claude-sonnet-4-6")
    assert "note:" not in output


def test_replay_on_unrecorded_instances_refuses_up_front(facet_data: Path, tmp_path: Path) -> None:
    result = cli(
        "run",
        "-i",
        str(FIXTURE),
        "--probes",
        "p1",
        "--model",
        "replay/gpt-5.4",
        "--out",
        str(tmp_path / "o"),
    )
    assert result.exit_code == 2
    assert "replay/gpt-5.4: no recording for 1 of the sweep's trials (P1 minimal-0001 r0)" in (
        result.output
    )
    assert not (tmp_path / "o" / "records").exists()


def test_missing_key_gives_a_shell_hint(tmp_path: Path) -> None:
    result = cli(
        "run",
        "-i",
        str(FIXTURE),
        "--probes",
        "p1",
        "--model",
        "openai/gpt-5.4",
        "--out",
        str(tmp_path / "o"),
    )
    assert result.exit_code == 2
    assert "export OPENAI_API_KEY=<your key>" in result.output

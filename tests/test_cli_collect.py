"""``facetlab run --batch`` returns after submitting; ``facetlab collect DIR`` records the
answers; a run without ``--batch`` refuses (one line) to pay for trials in an open batch.

The backend is the real Anthropic one over the Message Batches fake of
``test_runner_batch`` (``get_backend`` patched to return it); instances are real files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_helpers import cli, instances_folder
from test_runner_batch import FakeAnthropicBatches
from test_runner_batch_polling import BROKEN_POLLS, Broken, _backend

import facetlab.backends

MODEL = "anthropic/claude-sonnet-4-6"


def test_run_batch_then_collect_then_refuse_direct(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeAnthropicBatches(polls=10**9, fail_ids=1)
    monkeypatch.setattr(facetlab.backends, "get_backend", lambda *a, **k: _backend(fake.handler))
    folder = instances_folder(tmp_path / "inst")
    out = tmp_path / "sweep"
    args = ["run", "-i", str(folder), "--probes", "p1", "--model", MODEL, "--out", str(out), "-q"]

    submitted = cli(*args, "--batch")
    assert submitted.exit_code == 0, submitted.output
    assert fake.creates == 1 and "submitted 3 trial(s)" in submitted.output
    assert f"facetlab collect {out}" in submitted.output
    assert not (out / "records").exists()

    direct = cli(*args)  # without --batch: refused, nothing paid
    assert direct.exit_code == 2
    errors = [line for line in direct.output.splitlines() if line.startswith("error:")]
    assert (
        len(errors) == 1 and "open provider batch" in errors[0] and "--abandon-batches" in errors[0]
    )
    assert "Traceback" not in direct.output and not (out / "records").exists()

    early = cli("collect", str(out), "-q")  # not ended yet: nothing recorded, nothing submitted
    assert early.exit_code == 0, early.output
    assert fake.creates == 1 and not (out / "records").exists()

    fake.polls = 0
    collected = cli("collect", str(out), "-q")
    assert collected.exit_code == 1, collected.output  # one request errored: a failed trial
    assert fake.creates == 1
    recs = [json.loads(p.read_text()) for p in (out / "records").glob("*.json")]
    assert sorted(r["status"] for r in recs) == ["failed", "ok", "ok"]
    state = json.loads((out / "batches.json").read_text())["batches"]
    assert [b["state"] for b in state] == ["collected"]
    assert "--collect-only" not in json.loads((out / "sweep.json").read_text())["command"]


def test_collect_without_batches_is_one_line(tmp_path: Path) -> None:
    result = cli("collect", str(tmp_path))
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "no batches.json" in result.output


def test_a_poll_404_on_resume_is_one_line_at_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = Broken(BROKEN_POLLS["404"][0]())
    monkeypatch.setattr(facetlab.backends, "get_backend", lambda *a, **k: _backend(fake.handler))
    folder = instances_folder(tmp_path / "inst")
    out = tmp_path / "sweep"
    args = ["run", "-i", str(folder), "--probes", "p1", "--model", MODEL, "--out", str(out), "-q"]
    for _ in range(2):  # submit, then resume: the batch is unknown to the provider each time
        result = cli(*args, "--batch")
        assert result.exit_code == 0 and "Traceback" not in result.output
        assert sum("HTTP 404" in line for line in result.output.splitlines()) == 1
    assert fake.creates == 1

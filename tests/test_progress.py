"""Live progress: per-provider counts, ETA and budget, the plain (CI log) lines, rich's view."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fakes import FakeLLMServer, Fault
from reliability_helpers import instances_folder

import facetlab
from facetlab.runner import progress as progress_module
from facetlab.runner.progress import Progress, ProgressDisplay, RunStats, provider_label


class Clock:
    """A hand-moved ``time.monotonic`` (no real-clock waits)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", fake)
    return fake


def test_rate_eta_spend_and_provider_rows(clock: Clock) -> None:
    prog = Progress(stats=RunStats(total=10, already_done=2, spend_usd=0.5), budget_usd=2.0)
    for model, ok in [("openai/a?base_url=http://127.0.0.1:9/v1", True), ("anthropic/b", False)]:
        prog.trial_finished(model, ok)
        prog.stats.ok += ok
        prog.stats.failed += not ok
    prog.provider("anthropic/b").retrying += 1
    clock.now += 4.0  # 2 trials in 4 s: 6 left at 0.5/s
    assert prog.eta_s() == pytest.approx(12.0)
    line = prog.line()
    assert "4/10 trials" in line and "0.5/s" in line and "ETA 0:12" in line
    assert "$0.5000 of $2.00" in line
    assert "anthropic 0 ok 1 failed 1 retrying; openai@127.0.0.1:9 1 ok 0 failed" in line


def test_plain_lines_are_periodic_not_a_flood(clock: Clock) -> None:
    out = io.StringIO()
    prog = Progress(stats=RunStats(total=1000))
    display = ProgressDisplay(prog, "plain", stream=out)
    assert display.interval == progress_module.PLAIN_INTERVAL_S
    display.start()
    for _ in range(1000):  # a trial finishing every 0.1 s for 100 s
        clock.now += 0.1
        prog.stats.ok += 1
        display.update()
    display.stop()
    lines = out.getvalue().splitlines()
    assert len(lines) == int(100 // progress_module.PLAIN_INTERVAL_S) + 1  # + the last state
    assert lines[-1].startswith("1000/1000 trials")


def test_a_short_plain_run_prints_nothing(clock: Clock) -> None:
    out = io.StringIO()
    display = ProgressDisplay(Progress(stats=RunStats(total=3)), "plain", stream=out)
    display.start()
    clock.now += 1.0
    display.update()
    display.stop()
    assert out.getvalue() == ""  # the run's summary line says the rest


def test_auto_is_plain_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module.sys, "stdout", io.StringIO())  # a CI log, say
    assert ProgressDisplay(Progress(), "auto").mode == "plain"


def test_the_rich_view_has_bar_rate_eta_and_a_row_per_provider(clock: Clock) -> None:
    from rich.console import Console

    prog = Progress(stats=RunStats(total=40, ok=9, failed=1, spend_usd=1.25), budget_usd=5.0)
    for _ in range(9):
        prog.trial_finished("anthropic/claude-sonnet-4-6", True)
    prog.trial_finished("openai/q?base_url=http://127.0.0.1:8000/v1", False)
    prog.provider("openai/q?base_url=http://127.0.0.1:8000/v1").retrying = 2
    clock.now += 5.0
    console = Console(record=True, width=110, force_terminal=True, color_system=None)
    console.print(prog.renderable())
    text = console.export_text()
    assert "10/40 trials" in text and "2.0/s" in text and "ETA 0:15" in text
    assert "$1.2500 of $5.00" in text
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[2:] if line.strip()}
    assert rows["anthropic"] == ["9", "0", "0", "0"]
    assert rows["openai@127.0.0.1:8000"] == ["0", "1", "2", "0"]
    assert "━" in text.splitlines()[0]  # the bar


@pytest.mark.slow
def test_a_run_reports_each_providers_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through a real sweep: the executor's counts reach the per-provider rows."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    monkeypatch.setattr(progress_module, "PLAIN_INTERVAL_S", 0.0)  # every update a line
    instances = instances_folder(tmp_path / "i", 3)
    with FakeLLMServer() as good, FakeLLMServer(script=[Fault.BAD_REQUEST]) as bad:
        models = [
            f"openai/m?base_url={good.openai_base_url}",
            f"anthropic/m?base_url={bad.anthropic_base_url}",
        ]
        result = facetlab.run(
            instances, "p1", models, out=tmp_path / "o", progress="plain", console=io.StringIO()
        )
    assert (result.stats.ok, result.stats.failed) == (5, 1)
    last = capsys.readouterr().out.strip().splitlines()[-1]  # progress is normal output
    good_host = good.openai_base_url.split("//")[1].split("/")[0]
    bad_host = bad.anthropic_base_url.split("//")[1].split("/")[0]
    assert last.startswith("6/6 trials · done 5")
    assert f"anthropic@{bad_host} 2 ok 1 failed 0 retrying" in last
    assert f"openai@{good_host} 3 ok 0 failed 0 retrying" in last


def test_provider_label_without_a_server() -> None:
    assert provider_label("bedrock/deepseek.v3.2?region=us-west-2") == "bedrock"


def test_the_notebook_view_is_one_line_updated_in_place(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    ipython_display = pytest.importorskip("IPython.display")

    class Handle:
        def __init__(self) -> None:
            self.shown: list[str] = []

        def update(self, obj: object) -> None:
            self.shown.append(obj.data)  # type: ignore[attr-defined]

    handles: list[Handle] = []

    def display(obj: object, display_id: bool = False) -> Handle:
        handles.append(Handle())
        handles[-1].shown.append(obj.data)  # type: ignore[attr-defined]
        return handles[-1]

    monkeypatch.setattr(ipython_display, "display", display)
    prog = Progress(stats=RunStats(total=2))
    shown = ProgressDisplay(prog, "notebook")
    shown.start()
    prog.trial_finished("openai/m?base_url=http://127.0.0.1:1/v1", True)
    prog.trial_finished("anthropic/m?base_url=http://a<b>/", False)
    prog.stats.ok, prog.stats.failed = 1, 1
    clock.now += 1.0
    shown.update()
    shown.stop()
    assert len(handles) == 1  # one output, redrawn
    last = handles[0].shown[-1]
    assert last.startswith("<pre>2/2 trials") and last.count("<pre>") == 1
    assert "anthropic@a&lt;b&gt; 0 ok 1 failed" in last  # escaped


def test_a_stopped_run_says_how_many_trials_were_not_run(clock: Clock) -> None:
    """After Ctrl-C the line never reads 'ETA 0:00': the trials not started are left."""
    prog = Progress(stats=RunStats(total=40, ok=10, not_started=30, interrupted=True))
    clock.now += 5.0
    assert prog.line().endswith("2.0/s · stopped, 30 trial(s) not run")
    running = Progress(stats=RunStats(total=40, ok=10))
    clock.now += 5.0
    assert "ETA 0:15" in running.line()  # 30 left at 2 trials a second


def test_plain_progress_goes_to_standard_output(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(progress_module.sys, "stdout", out)
    monkeypatch.setattr(progress_module.sys, "stderr", err)
    display = ProgressDisplay(Progress(stats=RunStats(total=3, ok=1)), "plain", interval=0.0)
    display.start()
    display.update(force=True)
    assert out.getvalue().startswith("1/3 trials") and err.getvalue() == ""

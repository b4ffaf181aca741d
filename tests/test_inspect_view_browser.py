"""``inspect view`` in headless Chromium shows the exported logs' scores as a reviewer
reads them: every score's name and its explanation, for every probe's log.

A sweep of the moderation-appeals fixture (``simulated/cue`` on P1, P2, P3 and C2, and a
local fake model whose replies never parse) goes through
``facetlab export-inspect``; Inspect's own viewer serves the folder; the browser opens
each log, a sample of it, and its Scoring tab. Needs Debian's ``chromium``, Python
``playwright`` (launched by executable path; ``playwright install`` is never used) and
the ``inspect`` extra; skipped without them locally, a failure under ``CI=true``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer
from typer.testing import CliRunner

from facetlab.cli import app

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DOMAIN = ROOT / "tests" / "fixtures" / "moderation-appeals"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
runner = CliRunner()


def _missing() -> str | None:
    if not Path(CHROMIUM).is_file():
        return f"{CHROMIUM} absent (apt-get install chromium)"
    for module, extra in (("playwright.sync_api", "browser"), ("inspect_ai", "inspect")):
        try:
            __import__(module)
        except ImportError:
            return f"{module} absent (pip install -e '.[{extra}]')"
    return None


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``inspect view`` on the exported logs: (its URL, the logs folder)."""
    if (reason := _missing()) is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the inspect view browser test must run under CI: {reason}")
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("inspect-view")
    sweep, logs = base / "sweep", base / "logs"
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLMServer(responder=lambda request: "Every factor matters a little.") as fake:
        for model in (["simulated/cue"], ["openai/mumbler", "--base-url", fake.openai_base_url]):
            result = runner.invoke(app, ["run", "--model", *model, "--instances", str(DOMAIN),
                                         "--out", str(sweep), "--quiet", "--new-design"])  # fmt: skip
            assert result.exit_code == 0, result.output
    mp.undo()
    result = runner.invoke(app, ["export-inspect", str(sweep), "--out", str(logs)])
    assert result.exit_code == 0, result.output
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    inspect = Path(sys.executable).with_name("inspect")
    log = (base / "view.log").open("wb")
    server = subprocess.Popen(
        [str(inspect), "view", "--log-dir", str(logs), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(240):  # its readiness, not a timing assertion
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                assert server.poll() is None, (base / "view.log").read_text(errors="replace")
                time.sleep(0.5)
        yield url, logs
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def _open(page: Any, url: str, texts: list[str], upper: bool = False) -> None:
    """Open ``url`` afresh and wait (up to 60 s, a loaded machine's slow render) until the
    log has loaded and the page shows every text; the assertions after it say which one
    is missing. A hash change alone keeps the previous log on screen for a moment (its
    metric names too), so each view starts from a blank page."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto("about:blank")
    page.goto(url)
    body = "document.body.innerText" + (".toUpperCase()" if upper else "")
    check = f"t => !/loading/i.test(document.body.innerText) && t.every(x => {body}.includes(x))"
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(check, arg=texts, timeout=60_000)


def test_each_score_has_its_name_and_explanation_in_inspect_view(
    viewer: tuple[str, Path],
) -> None:
    from inspect_ai.log import read_eval_log
    from playwright.sync_api import sync_playwright

    url, logs = viewer
    shown_unparsed = False
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for path in sorted(logs.glob("*.eval")):
            log = read_eval_log(str(path))
            assert log.samples and log.results
            scorer = log.results.scores[0]
            metric_names = list(scorer.metrics)
            # the first sample of the log, and an unparsed one where there is one
            picks = [log.samples[0], *[
                s for s in log.samples
                if s.scores and not next(iter(s.scores.values())).value["reply_parsed"]  # type: ignore[index]
            ][:1]]  # fmt: skip
            for sample in picks:
                # the log, as its list entry opens it
                _open(page, f"{url}#/tasks/{path.name}", [m.upper() for m in metric_names], True)
                header = page.locator("body").inner_text().upper()
                for metric in metric_names:  # the metrics by name, above the sample list
                    assert metric.upper() in header, (path.name, metric)
                score = next(iter(sample.scores.values()))  # type: ignore[union-attr]
                _open(
                    page,
                    f"{url}#/tasks/{path.name}/samples/sample/{sample.id}/{sample.epoch}/scoring",
                    ["EXPLANATION", scorer.name, str(score.explanation)],
                )
                text = page.locator("body").inner_text()
                assert scorer.name in text, (path.name, sample.id)
                for name in score.value:  # type: ignore[union-attr]
                    assert name in text, (path.name, sample.id, name)
                assert score.explanation and score.explanation in text, (path.name, sample.id)
                shown_unparsed |= "not judged, counted as unparsed" in score.explanation
        browser.close()
    assert shown_unparsed  # the format noise reached a log, and its reason was shown

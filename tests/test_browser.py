"""A real browser: JupyterLab in headless Chromium runs notebooks/study.ipynb and saves it;
``facetlab report``'s study.html is looked at as a reviewer sees it.

Run All + save with the notebook's defaults must render figures, raise no error and leave
``git status`` as it was (the nbstripout filter strips the saved outputs, the post-save
hook of tools/notebook_git.py refreshes git's record of the file; the defaults write
under ``_build/``). Needs Debian's ``chromium`` and Python ``playwright`` (launched
by executable path; ``playwright install`` is never used). Skipped when they are absent
locally; under ``CI=true`` their absence fails the test.

study.html (a synthetic domain's committed sweeps) is opened at a laptop's width and
screenshotted (``_build/browser/study.png``, to look at): its title names the study, no
table has an index column or unrounded numbers, and every table can be read to its last
column (a wide table scrolls in its own box; the page itself never scrolls sideways).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools.notebook_git import refresh_git_stat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = (
    sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").glob("*.ipynb"))
    if os.environ.get("FACETLAB_BROWSER_NOTEBOOKS") == "all"
    else ["notebooks/study.ipynb"]
)
"""study.ipynb; every notebook with FACETLAB_BROWSER_NOTEBOOKS=all (slow: the paper's)."""
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_TIMEOUT = 90  # seconds for JupyterLab to answer
RUN_TIMEOUT = 600_000  # ms for Run All to finish
DIALOG_TIMEOUT = 15_000  # ms to wait for the kernel dialog

pytestmark = pytest.mark.slow


def _requirements() -> str | None:
    """Why the browser test cannot run here, or None."""
    if not Path(CHROMIUM).is_file():
        return f"{CHROMIUM} absent (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python playwright absent (pip install -e '.[browser]')"
    return None


@pytest.fixture(scope="module")
def browser_ready() -> None:
    reason = _requirements()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"the browser test must run under CI: {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def jupyterlab(browser_ready: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server on its own port, token and config/runtime/settings dirs; its URL.

    One server per notebook: no tab, workspace or kernel carries over to the next one.
    """
    home = tmp_path_factory.mktemp("jupyter")
    port, token = _free_port(), "facetlab-browser-test"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "MPLBACKEND": "Agg",
    }
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
        "--ServerApp.port_retries=0", "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")  # CI containers run as root
    log = (home / "server.log").open("wb")
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    text = (home / "server.log").read_text(errors="replace")[-2000:]
                    pytest.fail(f"JupyterLab did not start:\n{text}")
                time.sleep(0.5)
        yield f"{url}/lab/tree/{{notebook}}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _git(*args: str, index: Path | None = None) -> str:
    env = {**os.environ, "GIT_INDEX_FILE": str(index)} if index else None
    done = subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True, env=env
    )
    return done.stdout


def _accept_kernel_dialog(page: Any) -> None:
    """Accept JupyterLab's "Select Kernel" dialog (the notebook's own kernel) if it opens."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):  # the kernel started without asking
        page.locator(".jp-Dialog .jp-mod-accept").click(timeout=DIALOG_TIMEOUT)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_run_all_and_save(notebook: str, jupyterlab: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    path = ROOT / notebook
    checkpoints = path.parent / ".ipynb_checkpoints"
    had_checkpoints = checkpoints.exists()
    original = path.read_bytes()
    before = _git("status", "--porcelain")
    if notebook in before:
        pytest.fail(f"{notebook} has uncommitted changes: commit them before the browser test")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
            try:
                page = browser.new_page()
                page.set_default_timeout(60_000)
                page.goto(jupyterlab.format(notebook=notebook))
                page.wait_for_selector(".jp-Notebook .jp-Cell")
                # wait for the kernel, then Run > Run All Cells through the menu
                _accept_kernel_dialog(page)
                page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
                page.locator(".lm-MenuBar-item", has_text="Run").first.click()
                page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
                page.wait_for_function(
                    """() => {
                        const prompts = [...document.querySelectorAll(
                            '.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
                        return prompts.length > 0 &&
                            prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
                    }""",
                    timeout=RUN_TIMEOUT,
                )
                if notebook.endswith("study.ipynb"):  # figures rendered in the page
                    assert page.locator(".jp-OutputArea-output img").count() >= 1
                page.locator(".jp-Notebook").first.click()
                page.keyboard.press("Control+s")
                page.wait_for_function(
                    "() => !document.querySelector('.jp-mod-current.jp-mod-dirty')"
                )
                time.sleep(1)  # the save request completes after the tab turns clean
            finally:
                browser.close()
        saved = json.loads(path.read_text(encoding="utf-8"))
        outputs = [o for c in saved["cells"] for o in c.get("outputs", [])]
        errors = [o for o in outputs if o["output_type"] == "error"]
        assert errors == [], errors
        if notebook.endswith("study.ipynb"):
            assert any("image/png" in o.get("data", {}) for o in outputs), "no figure saved"
        assert _git("diff", "--stat", "--", notebook) == ""  # the stripped content is unchanged
        # and git knows it: the post-save hook refreshed its record of the file
        assert _git("status", "--porcelain") == before
    finally:
        path.write_bytes(original)
        # git recorded the saved file's size; restoring the bytes needs the same refresh
        refresh_git_stat({"type": "notebook"}, str(path))
        if not had_checkpoints:
            shutil.rmtree(checkpoints, ignore_errors=True)


STUDY_DOMAIN = "sepsis-escalation"
SCREENSHOT = ROOT / "_build" / "browser" / "study.png"


def _unrounded(cell: str) -> bool:
    """More digits than a reader needs: > 2 decimals at magnitude >= 1, > 3 significant
    digits below 1 (the report's display rule)."""
    found = re.fullmatch(r"-?(\d+)\.(\d+)", cell)
    if found is None:
        return False
    whole, fraction = found.groups()
    if int(whole) != 0:
        return len(fraction) > 2
    return len(fraction.lstrip("0")) > 3


def test_study_html_title_and_tables_read_in_full(browser_ready: None, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright
    from typer.testing import CliRunner

    from facetlab.cli import app

    results = ROOT / "results" / STUDY_DOMAIN
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app,
        ["report", *(str(results / m) for m in ("wadd+canonical", "cue", "wadd")),
         "--instances", str(ROOT / "instances" / STUDY_DOMAIN), "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 768})
            page.goto((out / "study.html").as_uri())
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            title = page.title()
            tables = page.evaluate(
                """() => [...document.querySelectorAll('table')].map(table => {
                    let box = table.parentElement;
                    while (box && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
                           && box !== document.body) box = box.parentElement;
                    box.scrollLeft = box.scrollWidth;  // scroll to the last column
                    const cells = [...table.querySelectorAll('tr:first-child > *')];
                    const last = cells[cells.length - 1].getBoundingClientRect();
                    const frame = box.getBoundingClientRect();
                    return {
                        header: cells.map(c => c.textContent.trim()),
                        wide: table.scrollWidth > box.clientWidth,
                        lastVisible: last.right <= frame.right + 1 && last.left >= frame.left - 1,
                        cells: [...table.querySelectorAll('td')].map(c => c.textContent.trim()),
                    };
                })"""
            )
            page_width = page.evaluate("document.documentElement.scrollWidth")
        finally:
            browser.close()
    assert title == f"{STUDY_DOMAIN}: FACET study"
    assert len(tables) >= 5 and any(t["wide"] for t in tables)  # the check has a wide table
    for table in tables:
        assert table["header"][0] == "model", table["header"]  # no index column
        assert table["lastVisible"], f"table {table['header']} is clipped"
        long = [c for c in table["cells"] if _unrounded(c)]
        assert long == [], f"unrounded numbers in {table['header']}: {long[:3]}"
    assert page_width <= 1024  # the page does not scroll sideways: tables scroll in place

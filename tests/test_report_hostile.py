"""Hostile names through every renderer: a report runs nothing its data says.

Model names, instance ids and the instances folder's name come from whoever made the
data. Here they carry markup (``<img onerror>``, ``<svg onload>``, a ``<script>`` meant
to break out of an SVG comment, a ``javascript:`` Markdown link, backticks, ``$…$``
math, a spreadsheet formula); the instance ids pass ``facetlab validate``. The sweeps
are real ``facetlab run`` sweeps against the loopback fake provider, then
``facetlab report`` renders them. Checked:

- the report succeeds (broken math text in a name does not fail a figure) and the
  kernel does not warn about TCP without encryption;
- ``tables/*.csv`` hold no cell a spreadsheet would run, ``tables/*.md`` no markup;
- ``figures/*.svg`` hold no script or event handler, and run nothing when opened;
- ``study.html`` in headless Chromium: no dialog, no ``on*`` attribute, no script
  element, no request leaving the file, a CSP, the hostile names shown as text;
- the executed notebook's outputs, rendered with *no* sanitizer (as a notebook you ran
  yourself is shown by JupyterLab, trusted), still run nothing.

Needs Debian's ``chromium`` and Python ``playwright`` for the browser parts (skipped
locally when absent; under ``CI=true`` their absence fails, as in test_browser.py).
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer, FakeRequest
from test_report import write_domain
from typer.testing import CliRunner

from facetlab.cli import app

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

FOLDER = "dom`<img src=x onerror=alert('folder')>`$x$ [f](javascript:alert('f'))"
CF_ID = "=HYPERLINK(\"x\")<svg onload=alert('cf')>"
ADV_ID = "inv-0001\"><img src=x onerror=alert('id')>-cf-adv"
MODELS = [
    'openai/<img src=x onerror="alert(1)">',
    "openai/<svg onload=alert(2)>$\\frac{$",
    "openai/--><script>alert(3)</script><!--",
    "openai/[link](javascript:alert(4))",
]


def _reply(request: FakeRequest) -> str:
    if "Which single factor" in request.prompt:
        return "F1\nIt decides the case."
    return "F1: 40, F2: 20, F3: 20, F4: 20\nno"


@dataclass(frozen=True)
class HostileReport:
    out: Path
    instances: Path
    returncode: int
    stderr: str


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"OPENAI_API_KEY": "sk-fake"})
    assert result.exit_code == 0, f"facetlab {' '.join(args)}:\n{result.output}"
    return result.output


def _make_hostile(base: Path) -> tuple[Path, list[Path]]:
    instances = write_domain(base / FOLDER)
    for path in instances.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["instance_id"] = {"inv-0001-cf": CF_ID, "inv-0001-cf-adv": ADV_ID}.get(
            data["instance_id"], data["instance_id"]
        )
        path.write_text(json.dumps(data), encoding="utf-8")
    _cli("validate", str(instances), "--no-facet-data")  # the ids pass validate
    sweeps = []
    with FakeLLMServer(responder=_reply) as server:
        for i, model in enumerate(MODELS):
            sweeps.append(base / f"sweep{i}")
            _cli(
                "run", "-i", str(instances), "--probes", "p1,p2,p3,c2", "--model", model,
                "--base-url", server.openai_base_url, "--out", str(sweeps[-1]), "--quiet",
            )  # fmt: skip
    return instances, sweeps


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileReport:
    base = tmp_path_factory.mktemp("hostile")
    instances, sweeps = _make_hostile(base)
    out = base / "report"
    done = subprocess.run(
        [sys.executable, "-c", "from facetlab.cli import main; main()", "report",
         *map(str, sweeps), "--instances", str(instances), "--out", str(out)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    return HostileReport(out, instances, done.returncode, done.stderr)


def test_report_succeeds_and_the_kernel_does_not_warn(hostile: HostileReport) -> None:
    assert hostile.returncode == 0, hostile.stderr
    assert "without encryption" not in hostile.stderr
    figures = {p.name for p in (hostile.out / "figures").iterdir()}
    for name in ("outcomes", "p1_p2", "p3", "c2", "asymmetry"):
        assert {f"{name}.png", f"{name}.svg"} <= figures, name  # broken $…$ drew fine


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_csv_cells_are_never_formulas(hostile: HostileReport) -> None:
    cells = [
        cell
        for path in (hostile.out / "tables").glob("*.csv")
        for row in csv.reader(path.open(encoding="utf-8"))
        for cell in row
    ]
    formulas = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") and c]
    assert [c for c in formulas if not _is_number(c)] == []
    assert "'" + CF_ID in cells  # shown as text, with the quote spreadsheets hide


MARKUP = re.compile(r"<[A-Za-z/!?]|(?<!\\)\]\(|`|\$")  # markup not escaped


def test_markdown_tables_carry_no_markup(hostile: HostileReport) -> None:
    for path in (hostile.out / "tables").glob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert MARKUP.search(text) is None, (path.name, MARKUP.search(text))
    assert "openai/&lt;img src=x" in (hostile.out / "tables" / "p3.md").read_text()


def test_svg_figures_hold_no_script(hostile: HostileReport) -> None:
    for path in (hostile.out / "figures").glob("*.svg"):
        text = path.read_text(encoding="utf-8")
        assert "<script" not in text.lower(), path.name
        for element in ET.fromstring(text).iter():
            assert not element.tag.lower().endswith(("script", "foreignobject")), path.name
            assert not [a for a in element.attrib if a.lower().startswith("on")], path.name


# ----------------------------------------------------------------------------- browser


def _browser_missing() -> str | None:
    if not Path(CHROMIUM).is_file():
        return f"{CHROMIUM} absent (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python playwright absent (pip install -e '.[browser]')"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = _browser_missing()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the hostile-input browser tests must run under CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class PageReport:
    dialogs: list[str]
    requests: list[str]
    handlers: list[str]
    scripts: int
    scripted_links: list[str]
    text: str
    csp: str


_INSPECT = """() => ({
  handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
      .filter(a => a.name.toLowerCase().startsWith('on')).map(a => e.tagName + ' ' + a.name)),
  scripts: document.querySelectorAll('script, iframe, object, embed').length,
  scripted_links: [...document.querySelectorAll('[href], [src], [action], [formaction]')]
      .flatMap(e => ['href', 'src', 'action', 'formaction'].map(n => e.getAttribute(n) || ''))
      .filter(v => /^\\s*(javascript|vbscript):/i.test(v)),
  text: document.body ? document.body.innerText : document.documentElement.textContent,
  csp: (document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content
      || '',
})"""


def _visit(browser: Any, url: str | None = None, html: str | None = None) -> PageReport:
    page = browser.new_page()
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    try:
        if url is not None:
            page.goto(url, wait_until="domcontentloaded")  # a CDN script never loads here
        else:
            page.set_content(html or "")
        page.wait_for_timeout(300)  # an onerror/onload fires on its own; give it time
        info = page.evaluate(_INSPECT)
    finally:
        page.close()
    outside = [r for r in requests if not r.startswith(("file:", "data:", "about:"))]
    return PageReport(dialogs, outside, **info)


def test_study_html_runs_nothing(hostile: HostileReport, browser: Any) -> None:
    page = _visit(browser, url=(hostile.out / "study.html").as_uri())
    assert page.dialogs == []
    assert page.handlers == []
    assert page.scripts == 0
    assert page.requests == []  # no CDN, no image from elsewhere
    assert page.scripted_links == []
    assert "default-src 'none'" in page.csp and "script-src" not in page.csp
    # the names are there, as text
    for shown in ('openai/<img src=x onerror="alert(1)">', ADV_ID, "$\\frac{$", "alert(4)"):
        assert shown in page.text, shown


def test_svg_figures_run_nothing_when_opened(hostile: HostileReport, browser: Any) -> None:
    for path in sorted((hostile.out / "figures").glob("*.svg")):
        page = _visit(browser, url=path.as_uri())
        assert (page.dialogs, page.handlers, page.scripts) == ([], [], 0), path.name


def _unsanitized_markdown(text: str) -> str:
    """Markdown rendered the trusting way: raw HTML and any link protocol passed on."""
    import mistune

    renderer = mistune.HTMLRenderer(escape=False, allow_harmful_protocols=True)
    return str(mistune.create_markdown(renderer=renderer, plugins=["table"])(text))


def test_notebook_outputs_run_nothing_unsanitized(hostile: HostileReport, browser: Any) -> None:
    executed = json.loads((hostile.out / "study.ipynb").read_text(encoding="utf-8"))
    shown = []
    for cell in executed["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" in data:
                shown.append("".join(data["text/html"]))
            elif "text/markdown" in data:
                shown.append(_unsanitized_markdown("".join(data["text/markdown"])))
    assert len(shown) >= 7  # the folder line, the summary, every table
    page = _visit(browser, html="<html><body>" + "\n".join(shown) + "</body></html>")
    assert page.dialogs == []
    assert page.handlers == []
    assert page.scripts == 0
    assert page.scripted_links == []
    assert "onerror=alert('folder')" in page.text  # the folder line, as text


def test_markdown_tables_run_nothing_unsanitized(hostile: HostileReport, browser: Any) -> None:
    tables = [p.read_text(encoding="utf-8") for p in (hostile.out / "tables").glob("*.md")]
    page = _visit(browser, html="\n".join(_unsanitized_markdown(t) for t in tables))
    assert (page.dialogs, page.handlers, page.scripts) == ([], [], 0)
    assert page.scripted_links == []
    assert 'openai/<img src=x onerror="alert(1)">' in page.text


def _notebook_with(outputs: list[dict[str, Any]]) -> Any:
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    nb.cells = [nbformat.v4.new_markdown_cell("# A study"), cell]
    return nb


HOSTILE_OUTPUTS = [
    {"output_type": "display_data", "metadata": {},
     "data": {"text/markdown": "<img src=x onerror=alert(1)> [l](javascript:alert(2))"}},
    {"output_type": "display_data", "metadata": {},
     "data": {"text/html": "<div onmouseover=alert(3)><svg onload=alert(4)></svg></div>"}},
    {"output_type": "display_data", "metadata": {},
     "data": {"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(5)'/>",
              "text/plain": "<Figure>"}},
    {"output_type": "display_data", "metadata": {},
     "data": {"application/javascript": "alert(6)", "text/plain": "js"}},
]  # fmt: skip


def test_the_browser_check_sees_what_a_plain_export_runs(tmp_path: Path, browser: Any) -> None:
    """The same outputs through nbconvert's plain HTML export (what study.html used to
    be) raise dialogs and fetch a CDN script; through :func:`write_html`, nothing."""
    import nbformat
    from nbconvert import HTMLExporter

    from facetlab.report.standalone import write_html

    executed = tmp_path / "executed.ipynb"
    nbformat.write(_notebook_with(HOSTILE_OUTPUTS), executed)
    plain = tmp_path / "plain.html"
    plain.write_text(HTMLExporter().from_filename(str(executed))[0], encoding="utf-8")
    before = _visit(browser, url=plain.as_uri())
    assert before.dialogs and before.handlers and before.requests  # the check can fail
    safe = tmp_path / "safe.html"
    write_html(executed, safe, "A <b>study</b>")
    after = _visit(browser, url=safe.as_uri())
    assert (after.dialogs, after.handlers, after.scripts, after.requests) == ([], [], 0, [])
    assert "<img src=x onerror=alert(1)>" in after.text

"""Each writer escapes text from data for where it is shown (fast unit tests; the
end-to-end browser checks are tests/test_report_hostile.py)."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser

import pandas as pd
import pytest
from matplotlib.figure import Figure

from facetlab.analysis.tables import csv_cell, latex_escape, markdown_escape, to_csv, to_latex
from facetlab.figures import literal_text, save_figure
from facetlab.report import Note, Table, describe, plots
from facetlab.report.standalone import clean_html, markdown_html, safe_notebook
from facetlab.report.study import Section

HOSTILE = [
    'openai/<img src=x onerror="alert(1)">',
    "<svg onload=alert(2)>",
    "--><script>alert(3)</script><!--",
    "[link](javascript:alert(4))",
    "`code` $\\frac{$ a|b",
    '=HYPERLINK("http://x","y")',
    "+1+2",
    "-2+3",
    "@SUM(A1)",
    "\tx",
    "\rx",
]


def test_csv_cells_never_start_a_formula() -> None:
    frame = pd.DataFrame({"model": HOSTILE, "w": [-1.5] * len(HOSTILE)})
    rows = list(csv.reader(io.StringIO(to_csv(frame), newline="")))[1:]
    for (cell, weight), original in zip(rows, HOSTILE, strict=True):
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
        assert cell.lstrip("'") == original.replace("\r", "\n")  # only the quote is added
        assert weight == "-1.5"  # numbers are never touched
    assert csv_cell(-3, "-3") == "-3" and csv_cell("-x", "-x") == "'-x"


def test_markdown_text_has_no_markup() -> None:
    for name in HOSTILE:
        text = markdown_escape(name, emphasis=True)
        assert re.search(r"<[A-Za-z/!?]", text) is None, text  # no tag, comment, autolink
        assert re.search(r"(?<!\\)\]\(", text) is None, text  # no inline link
        assert re.search(r"(?<!\\)\|", text) is None, text  # no cell break
        assert not set(text) & {"`", "$", "\n", "\r"}, text


def test_latex_cells_escape_every_command() -> None:
    frame = pd.DataFrame({"model": ["\\input{/etc/passwd}", "a_b$x$%#&~^{}", "two\n\nlines"]})
    latex = to_latex(frame)
    assert "\\input" not in latex.replace("\\textbackslash{}input", "")
    assert "\n\n" not in latex  # a blank line would end the table
    assert latex_escape("$x$") == "\\$x\\$"


@pytest.mark.slow  # seaborn + two saved formats
def test_matplotlib_draws_names_literally(tmp_path: pytest.TempPathFactory) -> None:
    broken = "m$\\frac{$"
    table = pd.DataFrame(
        {"model": [broken, "m2"], "probe": ["P3", "P3"], "accuracy": [1.0, 0.5], "n": [3, 4]}
    )
    fig = plots.outcome_accuracy(table)
    save_figure(fig, "outcomes", str(tmp_path), ["png", "svg"])  # no ParseException
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert literal_text(broken) + " · P3" in labels
    assert literal_text("$5 and $x$") == "\\$5 and \\$x\\$"


def test_summary_and_notes_escape_names() -> None:
    p3 = pd.DataFrame(
        {
            "model": ['openai/<img src=x onerror="a()">'],
            "instance_id": ["[x](javascript:a())-adv"],
            "neutralized_factor": ["F1"],
            "mean_weight": [40.0],
            "verdict": ["dissociated"],
        }
    )
    text = describe({"p3": Section("p3", p3)}, threshold=10)
    assert "<img" not in text and "](" not in text.replace("\\](", "")
    assert "<svg" not in Note("no trials of <svg onload=a()>")._repr_markdown_()


def test_table_html_escapes_cells_and_has_no_index() -> None:
    frame = pd.DataFrame({"model": ["<script>alert(1)</script>"], "w": [12.3456], "p": [0.012345]})
    html = Table(frame, "t")._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert ">12.35<" in html and ">0.0123<" in html  # rounded for reading
    assert len(re.findall(r"<th[ >]", html)) == 3  # model, w, p: no index column


@pytest.mark.parametrize(
    "markup",
    [
        '<img src=x onerror="alert(1)">',
        "<svg><script>alert(1)</script></svg>",
        "<a href='javascript:alert(1)'>x</a>",
        "<div style='background:url(javascript:alert(1))' onmouseover=alert(1)>x</div>",
        "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
        "<!--><img src=x onerror=alert(1)>-->",
        "<table><tr><td onclick=alert(1)>x</td></tr></table>",
        "<img src=x onerror=alert(1)",  # unterminated
    ],
)
def test_clean_html_keeps_no_handler_script_or_style(markup: str) -> None:
    tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append((tag, attrs))

    Collect().feed(clean_html(markup))
    for tag, attrs in tags:
        assert tag in {"a", "div", "table", "tr", "td"}, tag
        for name, value in attrs:
            assert not name.startswith("on") and name != "style", name
            assert not (value or "").lower().startswith("javascript"), value


def test_markdown_outputs_lose_links_math_and_html() -> None:
    html = markdown_html("**m** [x](javascript:alert(1)) <img src=x onerror=a()> $y$")
    assert "<strong>m</strong>" in html
    assert 'href="#harmful-link"' in html and "<img" not in html and "$y$" in html


@pytest.mark.slow  # nbformat's first import takes seconds on a loaded machine
def test_safe_notebook_drops_what_could_run() -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.from_dict(
            {
                "output_type": "display_data",
                "metadata": {"image/png": {"width": "100 onload=a()", "height": 50}},
                "data": {
                    "image/svg+xml": "<svg onload=alert(1)/>",
                    "application/javascript": "alert(2)",
                    "text/latex": "\\href{javascript:alert(3)}{x}",
                    "image/png": "iVBORw0KGgo=",
                    "text/plain": "<Figure>",
                },
            }
        ),
        nbformat.from_dict(
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {"image/png": '"><script>alert(4)</script>'},
            }
        ),
    ]
    nb.cells = [cell]
    nb.metadata["widgets"] = {"state": {}}
    out = safe_notebook(nb).cells[0].outputs
    assert set(out[0].data) == {"image/png", "text/plain"}
    assert out[0].metadata == {"image/png": {"height": 50}}
    assert out[1].data == {}  # not base64: not an image
    assert "widgets" not in nb.metadata


def test_figures_keep_stable_bytes_with_escaped_names(tmp_path: pytest.TempPathFactory) -> None:
    fig = Figure()
    fig.subplots().set_title(literal_text("$x$ <b>"))
    first = save_figure(fig, "a", str(tmp_path), ["svg"])[0].read_bytes()
    second = save_figure(fig, "a", str(tmp_path), ["svg"])[0].read_bytes()
    assert first == second and b"<b>" not in first

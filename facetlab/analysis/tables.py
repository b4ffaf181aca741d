"""Write a DataFrame as CSV, Markdown and LaTeX (booktabs), deterministically.

The committed tables under ``paper/tables/`` are compared byte for byte by the
test suite, so formatting is fixed here: floats are rounded to ``digits``
decimals (trailing zeros dropped in the CSV, fixed width in Markdown/LaTeX) and
magnitudes below 0.1 (CSV) or 1 (display) keep significant digits instead, so a
p-value never rounds to zero; booleans are ``true``/``false``, missing values
are empty, line endings are ``\\n``.

Text from data (model names, instance ids) is written so that no reader runs it: a CSV
cell that a spreadsheet would read as a formula (``= + - @``, tab, CR first) gets a
leading ``'`` (:func:`csv_cell`); Markdown cells carry no raw HTML, link or math
(:func:`markdown_escape`); LaTeX cells escape every special character (:func:`latex_escape`).

>>> import pandas as pd
>>> print(to_markdown(pd.DataFrame({"model": ["GPT-5.4"], "mean": [18.125]}), digits=1))
| model   | mean |
|:--------|-----:|
| GPT-5.4 | 18.1 |
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

CSV_DIGITS = 6
"""Decimals kept in CSVs: enough to recompute any paper number, stable across platforms."""

DISPLAY_DIGITS = 1
"""Decimals in Markdown/LaTeX, matching the paper's one-decimal means and SDs."""


@dataclass(frozen=True)
class TablePaths:
    """Where :func:`write_table` put one table."""

    csv: Path
    markdown: Path
    latex: Path


def _cell(value: object, digits: int, fixed: bool) -> str:
    """One value as text: ints as is, floats rounded, small magnitudes in significant digits.

    ``fixed`` (display) prints ``digits`` decimals; otherwise (CSV) trailing zeros
    are dropped. Numbers below 0.1 in magnitude (p-values, proportions) keep their
    significant digits instead of rounding to zero: 6 in CSVs, 3 on display.
    """
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if bool(value) else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return ""
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        if abs(number) < 1e-12:
            number = 0.0  # float noise, e.g. a Wilson bound of 2.8e-17 for 0 successes
        if number != 0 and abs(number) < (1.0 if fixed else 0.1):
            return f"{number:.{3 if fixed else 6}g}"
        number = round(number, digits) + 0.0  # + 0.0 turns -0.0 into 0.0
        text = f"{number:.{digits}f}"
        if not fixed and "." in text:
            text = text.rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return str(value)


def format_frame(
    frame: pd.DataFrame, digits: int = CSV_DIGITS, fixed: bool = False
) -> list[list[str]]:
    """Every cell of ``frame`` as text with the deterministic rules above (header excluded)."""
    return [
        [_cell(v, digits, fixed) for v in row] for row in frame.itertuples(index=False, name=None)
    ]


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object, text: str) -> str:
    """``text`` (the formatted ``value``) safe for a spreadsheet: text that starts like a
    formula gets a leading ``'``, which spreadsheets show as text. Numbers stay numbers.

    >>> csv_cell("=HYPERLINK(1)", "=HYPERLINK(1)"), csv_cell(-5.0, "-5")
    ("'=HYPERLINK(1)", '-5')
    """
    if isinstance(value, (int, float, np.integer, np.floating, bool, np.bool_)):
        return text
    safe = "'" + text if text.startswith(_FORMULA_START) else text
    # csv quotes a field holding "\n" (our line end) but not a bare CR, which would
    # break the row in most readers: CR line breaks become LF, inside the quotes
    return safe.replace("\r\n", "\n").replace("\r", "\n")


def to_csv(frame: pd.DataFrame, digits: int = CSV_DIGITS) -> str:
    """CSV text (RFC 4180 quoting, ``\\n`` line ends) with floats rounded to ``digits``;
    text cells that start like a formula are neutralised (:func:`csv_cell`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(c, str(c)) for c in frame.columns])
    rows = frame.itertuples(index=False, name=None)
    cells = format_frame(frame, digits)
    writer.writerows(
        [csv_cell(v, t) for v, t in zip(row, texts, strict=True)]
        for row, texts in zip(rows, cells, strict=True)
    )
    return buffer.getvalue()


# What Markdown would turn into markup: an HTML tag, comment or autolink (``<`` then a
# letter, ``/``, ``!`` or ``?``), an inline link (``](``), a code span, math, a table
# cell break, an escape, a line break (which would end a table row).
_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|\]\(|[`$|\\\r\n]")
_MARKUP_TEXT = {"<": "&lt;", "](": "\\](", "`": "&#96;", "$": "&#36;", "|": "\\|", "\\": "\\\\"}
_EMPHASIS = re.compile(r"([*_~])")


def markdown_escape(text: str, *, emphasis: bool = False) -> str:
    """``text`` that no Markdown renderer (GitHub, Jupyter, nbconvert) turns into markup:
    no raw HTML, autolink, inline link, code span, math or table cell break. Plain
    comparisons (``w < 20``) and brackets (``[[1, 2]]``) are left as they are, so tables
    stay readable; ``emphasis=True`` also escapes ``* _ ~`` (for names in prose).

    >>> markdown_escape('m<img src=x onerror="a()">')
    'm&lt;img src=x onerror="a()">'
    >>> markdown_escape("[x](javascript:a) $y$ a|b, w < 20")
    '[x\\\\](javascript:a) &#36;y&#36; a\\\\|b, w < 20'
    >>> markdown_escape("_a_", emphasis=True)
    '\\\\_a\\\\_'
    """
    out = _MARKUP.sub(lambda m: _MARKUP_TEXT.get(m.group(), " "), text)
    return _EMPHASIS.sub(r"\\\1", out) if emphasis else out


def _numeric(frame: pd.DataFrame) -> list[bool]:
    return [
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        for c in frame.columns
    ]


def to_markdown(frame: pd.DataFrame, digits: int = DISPLAY_DIGITS) -> str:
    """A GitHub pipe table; numbers right-aligned, fixed ``digits`` decimals for floats."""
    header = [markdown_escape(str(c)) for c in frame.columns]
    body = [[markdown_escape(c) for c in row] for row in format_frame(frame, digits, fixed=True)]
    numeric = _numeric(frame)
    widths = [max([len(h), 3, *(len(r[i]) for r in body)]) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        parts = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join(
            (("-" * (w + 1)) + ":") if num else (":" + "-" * (w + 1))
            for w, num in zip(widths, numeric, strict=True)
        )
        + "|"
    )
    return "\n".join([line(header), rule, *(line(r) for r in body)])


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\n": " ",
    "\r": " ",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters in plain text (a line break becomes a space: a blank
    line would end the table).

    >>> latex_escape(r"a_b $x$ \\input{y}")
    'a\\\\_b \\\\$x\\\\$ \\\\textbackslash{}input\\\\{y\\\\}'
    """
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def to_latex(
    frame: pd.DataFrame,
    digits: int = DISPLAY_DIGITS,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """A booktabs ``tabular`` (``\\toprule``/``\\midrule``/``\\bottomrule``), optionally in a table float."""
    numeric = _numeric(frame)
    spec = "".join("r" if num else "l" for num in numeric)
    header = " & ".join(latex_escape(str(c)) for c in frame.columns) + r" \\"
    body = [
        " & ".join(latex_escape(cell) for cell in row) + r" \\"
        for row in format_frame(frame, digits, fixed=True)
    ]
    lines = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        header,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if caption is None and label is None:
        return "\n".join(lines) + "\n"
    wrapped = [r"\begin{table}[t]", r"\centering"]
    if caption is not None:
        wrapped.append(rf"\caption{{{latex_escape(caption)}}}")
    if label is not None:
        wrapped.append(rf"\label{{{label}}}")
    return "\n".join([*wrapped, *lines, r"\end{table}"]) + "\n"


def write_table(
    frame: pd.DataFrame,
    name: str,
    out_dir: str | Path,
    *,
    caption: str | None = None,
    csv_digits: int = CSV_DIGITS,
    display_digits: int = DISPLAY_DIGITS,
) -> TablePaths:
    """Write ``frame`` as ``<name>.csv``, ``<name>.md`` and ``<name>.tex`` in ``out_dir``.

    >>> import tempfile
    >>> paths = write_table(pd.DataFrame({"n": [1]}), "t", tempfile.mkdtemp())
    >>> paths.csv.read_text()
    'n\\n1\\n'
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = TablePaths(out / f"{name}.csv", out / f"{name}.md", out / f"{name}.tex")
    paths.csv.write_text(to_csv(frame, csv_digits), encoding="utf-8", newline="\n")
    md = to_markdown(frame, display_digits)
    if caption:
        md = f"{caption}\n\n{md}"
    paths.markdown.write_text(md + "\n", encoding="utf-8", newline="\n")
    paths.latex.write_text(
        to_latex(frame, display_digits, caption=caption, label=f"tab:{name}"),
        encoding="utf-8",
        newline="\n",
    )
    return paths

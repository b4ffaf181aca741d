"""``study.html``: an executed notebook as one self-contained page that runs no script.

A report is shared with reviewers, and everything in its outputs comes from data
(model names, instance ids, folder names). So the page is built to run nothing:

- every output is reduced to what a reader needs: PNG/JPEG figures, plain text, and
  HTML rebuilt from an allowlist of tags and attributes (:func:`clean_html`); Markdown
  outputs are rendered with raw HTML escaped and ``javascript:`` links refused
  (:func:`markdown_html`); anything else (SVG, JavaScript, LaTeX, widgets) is dropped;
- the page loads nothing: no require.js, MathJax or Mermaid from a CDN, figures inline;
- a Content-Security-Policy forbids every script, inline event handlers included, and
  every request for anything but an inline image.

The page is titled after the study; study tables (:class:`facetlab.report.outputs.Table`)
scroll sideways when wide.

>>> clean_html('<div class="x" onclick="a()"><img src=x onerror=a()>ok</div>')
'<div class="x">&lt;img src=x onerror=a()&gt;ok</div>'
>>> markdown_html("[x](javascript:alert(1)) <svg onload=alert(2)> &lt;b&gt; $y$")
'<p><a href="#harmful-link">x</a> &lt;svg onload=alert(2)&gt; &lt;b&gt; $y$</p>\\n'
"""

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

__all__ = ["CONTENT_SECURITY_POLICY", "clean_html", "markdown_html", "safe_notebook", "write_html"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
    "base-uri 'none'; form-action 'none'"
)
"""No script of any kind (``script-src`` falls back to ``'none'``, so inline event
handlers are refused too), no request but inline images and the page's own styles."""

_TAGS = frozenset(
    [
        "a",
        "b",
        "blockquote",
        "br",
        "caption",
        "code",
        "col",
        "colgroup",
        "del",
        "div",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "li",
        "ol",
        "p",
        "pre",
        "span",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)
_VOID = frozenset({"br", "hr", "col"})
_ATTRIBUTES = frozenset({"class", "title", "colspan", "rowspan"})
_SAFE_URL = re.compile(r"^(?:https?:|mailto:|#)", re.IGNORECASE)
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")


class _Cleaner(HTMLParser):
    """Rebuilds HTML from the allowlist; any other tag is shown as text, comments dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def _attributes(self, tag: str, attrs: list[tuple[str, str | None]]) -> str:
        kept = []
        for name, value in attrs:
            text = value or ""
            if name in _ATTRIBUTES or (tag == "a" and name == "href" and _SAFE_URL.match(text)):
                kept.append(f' {name}="{html.escape(text, quote=True)}"')
        return "".join(kept)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _TAGS:
            self.parts.append(f"<{tag}{self._attributes(tag, attrs)}>")
        else:
            self.parts.append(html.escape(self.get_starttag_text() or f"<{tag}>", quote=False))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _TAGS and tag not in _VOID:
            self.parts.append(f"</{tag}>")
        elif tag not in _TAGS:
            self.parts.append(html.escape(f"</{tag}>", quote=False))

    def handle_data(self, data: str) -> None:
        self.parts.append(html.escape(data, quote=False))


def clean_html(markup: str) -> str:
    """``markup`` rebuilt from an allowlist: table and text tags with ``class``/``title``/
    span attributes and ``http(s)``/``mailto``/``#`` links; every other tag is escaped
    (shown as text), every event handler, style and comment dropped."""
    cleaner = _Cleaner()
    cleaner.feed(markup)
    cleaner.close()
    return "".join(cleaner.parts)


def markdown_html(text: str) -> str:
    """Markdown as clean HTML (:func:`clean_html`): harmful link protocols refused
    (``javascript:``, ``vbscript:``, ``data:``), no math (``$`` stays a dollar), character
    references such as ``&lt;`` shown as the character they name."""
    import mistune

    render = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])
    return clean_html(str(render(text)))


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _safe_output(output: Any) -> None:
    """Reduce one display/execute output to PNG/JPEG (base64 only), cleaned HTML (from
    HTML or Markdown) and plain text; every other kind is dropped."""
    data = output.get("data")
    if data is None:
        return
    kept: dict[str, Any] = {}
    if "text/markdown" in data:
        kept["text/html"] = markdown_html(_text(data["text/markdown"]))
    elif "text/html" in data:
        kept["text/html"] = clean_html(_text(data["text/html"]))
    for key in ("image/png", "image/jpeg"):
        if key in data and _BASE64.match(_text(data[key])):
            kept[key] = _text(data[key])
    if "text/plain" in data:
        kept["text/plain"] = _text(data["text/plain"])
    output["data"] = kept
    sizes = output.get("metadata") or {}
    output["metadata"] = {
        key: {
            k: v
            for k, v in sizes[key].items()
            if k in ("width", "height") and isinstance(v, int | float) and not isinstance(v, bool)
        }
        for key in ("image/png", "image/jpeg")
        if isinstance(sizes.get(key), dict)
    }


def safe_notebook(nb: Any) -> Any:
    """``nb`` (an nbformat notebook, changed in place) with every code cell output made
    safe to show: see the module docstring. Returns ``nb``."""
    for cell in (c for c in nb.cells if c.get("cell_type") == "code"):
        for output in cell.get("outputs", []):
            if output.get("output_type") in ("display_data", "execute_result"):
                _safe_output(output)
    nb.metadata.pop("widgets", None)
    return nb


_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}
<meta http-equiv="Content-Security-Policy" content="{{ resources.facetlab_csp }}">
{%- endblock html_head_js -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_css -%}
<style type="text/css">
/* after JupyterLab's own table rules, which right-align and wrap every cell */
.jp-OutputArea-output { overflow-x: auto; }
.jp-RenderedHTMLCommon .facetlab-table { max-width: 100%; overflow-x: auto; margin: 0.5em 0; }
.jp-RenderedHTMLCommon .facetlab-table table {
  table-layout: auto; border-collapse: collapse; margin: 0; font-size: 12px;
}
.jp-RenderedHTMLCommon .facetlab-table th, .jp-RenderedHTMLCommon .facetlab-table td {
  padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap;
}
.jp-RenderedHTMLCommon .facetlab-table th { border-bottom: 2px solid #999; }
.jp-RenderedHTMLCommon .facetlab-table .num {
  text-align: right; font-variant-numeric: tabular-nums;
}
.jp-RenderedHTMLCommon .facetlab-table tbody tr:nth-child(odd) { background: #f6f6f6; }
</style>
{%- endblock html_head_css -%}
"""


def write_html(executed: Path, html_path: Path, title: str) -> None:
    """Write the executed notebook at ``executed`` as ``html_path``: code hidden, outputs
    made safe (:func:`safe_notebook`), titled ``title``, no script, the CSP above."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    nb = safe_notebook(nbformat.read(executed, as_version=4))  # type: ignore[no-untyped-call]
    nb.metadata["title"] = title
    exporter = HTMLExporter(  # type: ignore[no-untyped-call]
        template_name="lab",
        extra_loaders=[jinja2.DictLoader({"facetlab_study.html.j2": _TEMPLATE})],
        template_file="facetlab_study.html.j2",
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    resources = {"facetlab_csp": CONTENT_SECURITY_POLICY}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    html_path.write_text(body, encoding="utf-8")

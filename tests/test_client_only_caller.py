"""One caller of a backend's generate method: the model client (issue 18).

Every model call in facetlab must get the client's retries, limits, cache and budget,
so no module outside ``facetlab/client/`` may call ``agenerate``. Backends themselves
(``facetlab/backends/``, the offline ``facetlab/reasoners/``) may delegate to another
backend; the sync helper ``facetlab.backends.generate`` is the one raw call left for
scripts. Docstrings are not code: the scan reads the syntax tree.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import facetlab

PACKAGE = Path(facetlab.__file__).resolve().parent
ALLOWED = ("client/", "backends/", "reasoners/")


def generate_calls(source: str) -> list[int]:
    """Line numbers of every ``<anything>.agenerate(...)`` call in ``source``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "agenerate"
    ]


def test_scan_finds_calls_but_not_docstrings() -> None:
    code = '"""await backend.agenerate(request)"""\nasync def f(b, r):\n    return await b.agenerate(r)\n'
    assert generate_calls(code) == [3]


@pytest.mark.slow  # reads every module (~0.5 s)
def test_only_the_client_calls_a_backend() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(ALLOWED):
            continue
        offenders += [f"{rel}:{line}" for line in generate_calls(path.read_text("utf-8"))]
    assert offenders == [], f"call models through facetlab.client.ModelClient: {offenders}"

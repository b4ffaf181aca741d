"""The runner and the commands read top to bottom: no function there is over 80 lines
(issue 30; a longer one is split where its steps are, not squeezed)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "facetlab"
LIMIT = 80


@pytest.mark.parametrize("folder", ["runner", "commands"])
def test_no_function_over_80_lines(folder: str) -> None:
    long = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({length} lines)"
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > LIMIT
    ]
    assert long == [], long

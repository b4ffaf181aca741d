"""The generic layers never import the FACET paper package (facetlab.paper sits on top)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "facetlab"
ABOVE_PAPER = {"paper", "commands", "cli.py"}
"""Top-level parts of facetlab allowed to import facetlab.paper."""


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_generic_layers_never_import_the_paper() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(n for n in _imports(path) if "facetlab.paper" in n)
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] not in ABOVE_PAPER
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    # and the check itself sees imports: the paper package does import the generic layer
    assert "facetlab.analysis" in _imports(PACKAGE / "paper" / "cells.py")

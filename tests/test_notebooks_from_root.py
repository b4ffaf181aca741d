"""The CRAFT notebooks run headless from the checkout root, as `papermill` users run them
(the paper notebooks are covered by tests/test_reproduce.py, the study by tests/test_validity.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

papermill = pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]

CHEAP: dict[str, dict[str, Any]] = {
    "craft_demo": {"samples": 8},
    "craft_error_rates": {"reps": 10, "power_reps": 5, "iterations": 200, "ns": [10]},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHEAP))
def test_notebook_runs_from_the_root(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / f"{name}.ipynb"),
        str(out),
        parameters=CHEAP[name],
        cwd=str(ROOT),
        progress_bar=False,
        kernel_name="python3",
    )
    assert out.stat().st_size > 0

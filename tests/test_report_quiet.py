"""A successful ``facetlab report`` prints no kernel noise (issue 40, item 7): jupyter_client
interrupts a kernel (SIGINT) before shutting it down, and a SIGINT landing in one of
ipykernel's message handlers printed ``[IPKernelApp] ERROR | KeyboardInterrupt caught in
kernel.`` above the report's own line. The report's kernel manager sends no interrupt
at shutdown (the notebook has finished); a cell's timeout still interrupts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_client.manager import AsyncKernelManager

from facetlab.report.render import _quiet_kernel_manager

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("shutting_down", [True, False])
def test_no_interrupt_at_shutdown_only(
    shutting_down: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []

    async def interrupt(self: AsyncKernelManager) -> None:
        sent.append("SIGINT")

    monkeypatch.setattr(AsyncKernelManager, "_async_interrupt_kernel", interrupt)
    manager = _quiet_kernel_manager()()
    manager.shutting_down = shutting_down
    asyncio.run(manager._async_interrupt_kernel())
    assert sent == ([] if shutting_down else ["SIGINT"])


@pytest.mark.slow  # a whole report: papermill and a kernel
def test_a_successful_report_prints_no_kernel_error(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", "from facetlab.cli import main; main()", "report", str(ROOT / "results" / "example-domain"),
         "--instances", str(ROOT / "instances"), "--out", str(tmp_path / "r")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert "KeyboardInterrupt" not in output and "[IPKernelApp] ERROR" not in output, output
    assert "report:" in output

"""Every path error of the command line is one ``error:`` line (exit 2), never a traceback.

A name longer than the file system allows in ``run --out`` / ``--cache-dir`` or
``report --out``, ``report --out`` naming an existing file, and ``reproduce`` on a
read-only checkout each used to end in a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result
from fakes import FakeLLMServer
from reliability_helpers import cli, instances_folder, run_args

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
LONG = "n" * 300  # longer than the 255 bytes a file name may have


def _one_error_line(result: Result, expected: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], result.output
    return errors[0]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("out-name", "--out: the name 'nnnn"),
        ("out-nested", "--out: the name 'nnnn"),
        ("out-total", "--out is "),
        ("cache-name", "--cache-dir: the name 'nnnn"),
    ],
)
def test_run_with_a_too_long_path_is_one_line_before_any_request(
    tmp_path: Path, where: str, expected: str
) -> None:
    folder = instances_folder(tmp_path / "i")
    out = {
        "out-name": tmp_path / LONG,
        "out-nested": tmp_path / LONG / "sweep",
        "out-total": tmp_path.joinpath(*["d" * 200] * 20),
    }.get(where, tmp_path / "o")
    with FakeLLMServer() as server:
        args = run_args(server, folder, out)
        if where == "cache-name":
            args += ["--cache-dir", str(tmp_path / LONG)]
        line = _one_error_line(cli(*args), expected)
        assert server.requests == []
    assert len(line) < 400


def _sweep(tmp_path: Path) -> tuple[Path, Path]:
    folder = instances_folder(tmp_path / "i", n=2)
    out = tmp_path / "sweep"
    done = cli("run", "-i", str(folder), "--probes", "p1", "--model", "simulated/wadd",
               "--out", str(out), "--quiet")  # fmt: skip
    assert done.exit_code == 0, done.output
    return folder, out


@pytest.mark.slow  # loads the study (pandas)
def test_report_out_naming_an_existing_file_is_one_line(tmp_path: Path) -> None:
    folder, sweep = _sweep(tmp_path)
    existing = tmp_path / "report.html"
    existing.write_text("keep me")
    result = cli("report", str(sweep), "--instances", str(folder), "--out", str(existing))
    _one_error_line(result, f"--out {existing} is a file; expected a folder")
    assert existing.read_text() == "keep me"


@pytest.mark.slow  # loads the study (pandas)
def test_report_out_with_a_too_long_name_is_one_line(tmp_path: Path) -> None:
    folder, sweep = _sweep(tmp_path)
    result = cli("report", str(sweep), "--instances", str(folder), "--out", str(tmp_path / LONG))
    _one_error_line(result, "File name too long")


@pytest.fixture
def read_only_checkout(tmp_path: Path) -> Iterator[Path]:
    """The checkout, bind-mounted read-only (skipped with the reason where impossible)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a read-only bind mount needs Linux, root and the mount command")
    mnt = tmp_path / "checkout"
    mnt.mkdir()
    steps = [
        ["mount", "--bind", str(ROOT), str(mnt)],
        ["mount", "-o", "remount,ro,bind", str(mnt)],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", str(mnt)], capture_output=True, check=False)
            pytest.skip(f"{' '.join(step[:3])} failed: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


@pytest.mark.slow
def test_reproduce_on_a_read_only_checkout_is_one_line(read_only_checkout: Path) -> None:
    result = cli("reproduce", "--root", str(read_only_checkout))
    line = _one_error_line(result, "Read-only file system")
    assert "give --out DIR to write the reproduction elsewhere" in line

"""What the reliability tests share: instance files, the CLI, and what a sweep paid.

Every reliability test runs a fault against the loopback fake provider
(``tests/fakes/server.py``) and checks the money: :func:`paid_report` counts the
answers the fake billed (HTTP 200s per prompt), the ones billed more than once
(``duplicates``) and the ones billed but recorded nowhere (``lost``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakes import FakeLLMServer
from typer.testing import CliRunner, Result

from facetlab.cli import app

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "minimal_instance.json"

CLI = "import sys; from facetlab.cli import main; sys.argv[0] = 'facetlab'; main()"
"""``python -c CLI ...`` is ``facetlab ...`` in a child process (it can be signalled)."""


def start_cli(args: Sequence[str]) -> subprocess.Popen[str]:
    """``facetlab *args`` in a child process, its output captured as text."""
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def records_written(out: Path) -> int:
    """Record files in the sweep folder ``out`` so far."""
    folder = out / "records"
    return len(list(folder.glob("*.json"))) if folder.is_dir() else 0


def wait_for_records(
    out: Path, count: int, proc: subprocess.Popen[str], *, poll_s: float = 0.01
) -> None:
    """Until ``out`` holds ``count`` records, ``proc`` has ended, or a minute has passed."""
    deadline = time.monotonic() + 60
    while records_written(out) < count and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(poll_s)


def write_instance(folder: Path, instance_id: str, **changes: Any) -> Path:
    """A valid instance file (the minimal fixture) with ``instance_id`` and ``changes``."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data.update(instance_id=instance_id, **changes)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"case-{len(list(folder.glob('*.json'))):03d}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def instances_folder(folder: Path, n: int = 3) -> Path:
    """``n`` valid instances with distinct prompts (P1 runs on each)."""
    background = json.loads(FIXTURE.read_text(encoding="utf-8"))["case_background"]
    for i in range(n):
        write_instance(folder, f"case-{i:04d}", case_background=f"Branch {i}. {background}")
    return folder


def cli(*args: str) -> Result:
    """``facetlab ARGS`` in-process."""
    return CliRunner().invoke(app, list(args))


def run_args(server: FakeLLMServer, instances: Path, out: Path, *extra: str) -> list[str]:
    """``facetlab run`` of P1 on ``instances`` against the fake (OpenAI wire format)."""
    return [
        "run",
        "-i",
        str(instances),
        "--probes",
        "p1",
        "--model",
        "openai/fake-model",
        "--base-url",
        server.openai_base_url,
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


@dataclass(frozen=True)
class PaidReport:
    """What the provider billed against what the sweep kept."""

    paid: int
    """Answers the fake billed (HTTP 200 replies)."""
    duplicates: int
    """Billed answers beyond the first per prompt."""
    lost: int
    """Prompts billed at least once with no ok record in any of the sweep folders.

    (Per prompt: sweeps in these tests give each trial its own prompt, repeats 1.)"""


def ok_prompts(*outs: Path) -> Counter[str]:
    found: Counter[str] = Counter()
    for out in outs:
        for path in (out / "records").glob("*.json"):
            rec = json.loads(path.read_text(encoding="utf-8"))
            if rec["status"] == "ok":
                found[rec["prompt"]] += 1
    return found


def paid_report(server: FakeLLMServer, *outs: Path) -> PaidReport:
    paid = server.paid_calls()
    kept = ok_prompts(*outs)
    return PaidReport(
        paid=paid.total(),
        duplicates=sum(n - 1 for n in paid.values() if n > 1),
        lost=sum(1 for prompt in paid if kept[prompt] == 0),
    )

"""A hostile reply cannot stall a sweep: 48 KB of whitespace after an ``F`` (15-30 s of
CPU per parse before the parsers were made linear, with the event loop blocked) through
a real ``facetlab run`` against the loopback fake provider.

Acceptance (issue 23): the sweep finishes within 15 s, each reply recorded as malformed.
The bound is the issue's; the sweep takes about a second now, and took minutes before.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fakes import FakeLLMServer, FakeRequest
from test_report import write_domain
from typer.testing import CliRunner

from facetlab.cli import app

pytestmark = pytest.mark.slow

HOSTILE = "F" + " " * 48_000


def _reply(request: FakeRequest) -> str:
    return HOSTILE


def test_a_48kb_whitespace_reply_does_not_stall_the_sweep(tmp_path: Path) -> None:
    instances = write_domain(tmp_path / "instances")
    out = tmp_path / "sweep"
    with FakeLLMServer(responder=_reply) as server:
        start = time.monotonic()
        result = CliRunner().invoke(
            app,
            ["run", "-i", str(instances), "--probes", "p1,p2,p3", "--model", "openai/fake",
             "--base-url", server.openai_base_url, "--out", str(out), "--quiet"],
            env={"OPENAI_API_KEY": "sk-fake"},
        )  # fmt: skip
        elapsed = time.monotonic() - start
    assert result.exit_code == 0, result.output
    records = [json.loads(p.read_text()) for p in (out / "records").glob("*.json")]
    assert len(records) >= 3
    assert {r["parse_status"] for r in records} == {"malformed"}  # recorded and counted
    assert elapsed < 15, f"the sweep took {elapsed:.1f} s"

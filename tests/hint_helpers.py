"""One H1 sweep of the example domain's base instance against a fake server, tabulated:
the hinted prompts get one reply, the controls another."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
from fakes import FakeLLMServer
from fakes.server import FakeRequest

from facetlab.analysis.hints import hint_table, hint_trials
from facetlab.instances import load_instances
from facetlab.probes.hint import load_hints
from facetlab.records import read_sweep_records
from facetlab.runner import run

ROOT = Path(__file__).resolve().parents[1]
KINDS = {k.kind: k for k in load_hints(None).kinds}


def h1_table_from_fake(tmp_path: Path, hinted_reply: str, control_reply: str) -> pd.DataFrame:
    """``hint_table`` of one H1 sweep of ``example-domain-0001`` through a fake server."""

    def reply(request: FakeRequest) -> str:
        hinted = any(k.text.split("{")[0][:20] in request.prompt for k in KINDS.values())
        return hinted_reply if hinted else control_reply

    one = tmp_path / "one"
    one.mkdir()
    src = ROOT / "instances" / "example-domain-0001.json"
    (one / src.name).write_text(src.read_text())
    with FakeLLMServer(responder=reply) as server:
        run(one, "h1", "openai/fake-model", out=tmp_path / "o", progress="none",
            console=io.StringIO(), base_url=server.openai_base_url)  # fmt: skip
    records = read_sweep_records(tmp_path / "o" / "records")
    return hint_table(hint_trials(records, load_instances(one), load_hints(None)))

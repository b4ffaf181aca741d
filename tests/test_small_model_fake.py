"""A small model behind llama-cpp-python's server, faked on 127.0.0.1 (issue 40): it
writes its weights as fractions (1/N each, a total of 1) and its server refuses OpenAI's
``json_schema`` shape with an HTTP 500, taking only ``json_object`` with a schema.

- ``load_trials`` reads each weighted reply as shares of its own total: ``foi_weight``
  × ``n_factors`` is 100 on every weighted row, ``foi_weight_raw`` the fraction written,
  ``weight_sum`` 1, ``off_scale`` set;
- ``--structured`` with no per-model option learns the form: one refused request for the
  whole sweep, every trial ok, the form recorded in each record."""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer, FakeRequest
from test_llama_cpp_shapes import VALIDATION_500

from facetlab.backends import SamplingParams
from facetlab.records import load_trials
from facetlab.records.own import read_record
from facetlab.runner import run

EXAMPLE = Path(__file__).resolve().parents[1] / "instances"
FILES = [str(EXAMPLE / f"example-domain-0001{s}.json") for s in ("", "-cf", "-cf-adv")]
PATH = "/v1/chat/completions"


def fractions(n: int) -> dict[str, float]:
    return {f"F{i}": 1 / n for i in range(1, n + 1)}


def reply_text(body: dict[str, Any]) -> str:
    """What the small model says: JSON under the server's grammar, else its text."""
    prompt = body["messages"][-1]["content"]
    fmt = body.get("response_format")
    if "weight" not in prompt:
        return json.dumps({"factor": "F1", "reason": "It decides."}) if fmt else "F1\nIt decides."
    n = int(re.search(r"factor F1 through F(\d+)", prompt).group(1))  # type: ignore[union-attr]
    if fmt:
        return json.dumps({"weights": fractions(n), "answer": "no"})
    return ", ".join(f"{k}: {v:.4f}" for k, v in fractions(n).items()) + "\nno"


def small_model_route(request: FakeRequest) -> tuple[int, dict[str, str], bytes]:
    body: dict[str, Any] = request.body
    headers = {"content-type": "application/json"}
    fmt = body.get("response_format")
    if fmt is not None and fmt.get("type") not in ("text", "json_object"):
        error = {"message": VALIDATION_500, "type": "internal_server_error"}
        return 500, headers, json.dumps({"error": error}).encode()
    message = {"role": "assistant", "content": reply_text(body)}
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40},
    }
    return 200, headers, json.dumps(completion).encode()


def sweep(server: FakeLLMServer, out: Path, *, structured: bool) -> Any:
    return run(
        FILES, "p1,p2,p3,c2", "openai/qwen-0.5b", base_url=server.openai_base_url, out=out,
        progress="none", console=io.StringIO(),
        sampling=SamplingParams(structured=structured, max_tokens=64),
    )  # fmt: skip


def statuses(server: FakeLLMServer) -> list[int]:
    return [r.status for r in server.requests if r.path == PATH]


@pytest.mark.slow  # two sweeps against a fake server
@pytest.mark.parametrize("structured", [False, True])
def test_fractions_are_read_as_shares_of_the_reply_total(
    tmp_path: Path, structured: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeLLMServer(extra_routes={("POST", PATH): small_model_route}) as server:
        with caplog.at_level(logging.WARNING, logger="facetlab.backends"):
            result = sweep(server, tmp_path, structured=structured)
        sent = statuses(server)
    assert result.stats.ok == len(result.plan) > 0 and result.stats.failed == 0
    weighted = load_trials(records=tmp_path, sources=["facetlab"]).query("probe != 'P1'")
    assert len(weighted) and weighted["parse_status"].isin(["ok", "repaired"]).all()
    shares = weighted["foi_weight"].astype(float) * weighted["n_factors"].astype(float)
    assert (shares - 100).abs().max() < 0.1, shares.describe()
    assert (weighted["weight_sum"].astype(float) - 1).abs().max() < 1e-3
    raw = weighted["foi_weight_raw"].astype(float) * weighted["n_factors"].astype(float)
    assert (raw - 1).abs().max() < 1e-3 and weighted["off_scale"].all()
    if structured:
        # the refused form cost one request for the whole sweep, said in one line
        assert sent.count(500) == 1 and sent.count(200) == len(result.plan)
        lines = [r.getMessage() for r in caplog.records if "refused structured" in r.getMessage()]
        assert len(lines) == 1 and "json_object" in lines[0]
        forms = {read_record(p).params.get("structured_format")
                 for p in (tmp_path / "records").glob("*.json")}  # fmt: skip
        assert forms == {"json_object"}
    else:
        assert 500 not in sent

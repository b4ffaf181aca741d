"""``--structured`` and per-model ``extra_body`` through the runner (issue 27, item 3):
each P1/P2/P3/C2 body carries the probe's JSON schema and the record says so (its params
and the schema sent); without the option no body does and the keys are the paper's; the
two never share a trial id, a cache entry or a resume; a provider without structured
output, or a probe without a schema, is refused before any call; ``extra_body`` is sent
and recorded as sent; the table splits by a ``structured`` column."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer, FakeRequest
from test_probes_structured import structured_answer
from typer.testing import CliRunner

from facetlab.backends import SamplingParams
from facetlab.cli import app
from facetlab.errors import ConfigError, RecordError
from facetlab.records import load_trials
from facetlab.records.own import read_record
from facetlab.runner import RunOptions, SweepResult, run

EXAMPLE = Path(__file__).resolve().parents[1] / "instances"
FILES = [str(EXAMPLE / f"example-domain-0001{s}.json") for s in ("", "-cf", "-cf-adv")]


def answer(request: FakeRequest) -> str:
    """JSON where the body asks for it, the plain reply format otherwise."""
    body = request.body
    if "response_format" in body or "json_schema" in body:
        return structured_answer(request)
    return (
        "F1: 100, F2: 0, F3: 0, F4: 0, F5: 0\nno"
        if "weight" in body["messages"][-1]["content"]
        else "F2\nIt decides the case."
    )


def sweep(server: FakeLLMServer, out: Path, **settings: Any) -> SweepResult:
    return run(
        FILES, "p1,p2,p3,c2", "openai/fake-model", base_url=server.openai_base_url, out=out,
        progress="none", console=io.StringIO(), **settings,
    )  # fmt: skip


def records(out: Path) -> list[Any]:
    return [read_record(p) for p in sorted((out / "records").glob("*.json"))]


@pytest.mark.slow  # two sweeps against a fake server
def test_structured_bodies_carry_the_schema_and_records_say_so(tmp_path: Path) -> None:
    with FakeLLMServer(responder=answer) as server:
        on = sweep(server, tmp_path / "on", sampling=SamplingParams(structured=True))
        structured_bodies = [r.body for r in server.requests if r.api == "openai"]
        server.reset_log()
        off = sweep(server, tmp_path / "off")
        plain_bodies = [r.body for r in server.requests if r.api == "openai"]
    assert on.stats.ok == off.stats.ok == len(structured_bodies) == len(plain_bodies) > 0
    assert {t.probe for t in on.plan} == {"p1", "p2", "p3", "c2"}
    for body in structured_bodies:
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"]["type"] == "object"
    assert not any("response_format" in b or "json_schema" in b for b in plain_bodies)
    sent = {b["messages"][-1]["content"]: b["response_format"]["json_schema"]["schema"]
            for b in structured_bodies}  # fmt: skip
    for record in records(tmp_path / "on"):
        assert record.params["structured"] is True and record.parse_status == "ok"
        assert record.output_schema == sent[record.prompt]  # exactly the schema sent
    for record in records(tmp_path / "off"):
        assert "structured" not in record.params and record.output_schema is None
    # the same prompts, never the same trials: neither resumes into the other
    assert {r.prompt for r in records(tmp_path / "on")} == {
        r.prompt for r in records(tmp_path / "off")
    }
    assert not {t.trial_id for t in on.plan} & {t.trial_id for t in off.plan}
    assert not {t.key for t in on.plan} & {t.key for t in off.plan}
    table = load_trials(records=[tmp_path / "on", tmp_path / "off"], sources=["facetlab"],
                        mixed_designs=True)  # fmt: skip
    assert table.groupby("structured").size().to_dict() == {False: off.stats.ok, True: on.stats.ok}


@pytest.mark.slow  # two sweeps against a fake server
def test_structured_in_a_folder_of_plain_trials_asks_each_anew(tmp_path: Path) -> None:
    with FakeLLMServer(responder=answer) as server:
        off = sweep(server, tmp_path / "s")
        with pytest.raises(ConfigError, match="design"):  # another experiment: said so
            sweep(server, tmp_path / "s", sampling=SamplingParams(structured=True))
        server.reset_log()
        on = sweep(
            server, tmp_path / "s", sampling=SamplingParams(structured=True),
            options=RunOptions(new_design=True),
        )  # fmt: skip
        asked = len(server.requests)
    assert on.stats.ok == asked == off.stats.ok  # nothing resumed from the plain trials
    with pytest.raises(RecordError, match=r"records of .* were run under 2 designs"):
        load_trials(records=tmp_path / "s", sources=["facetlab"])


def test_a_provider_without_structured_output_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        run(FILES, "p1", "simulated/wadd", out=tmp_path / "s", dry_run=True,
            sampling=SamplingParams(structured=True), console=io.StringIO())  # fmt: skip
    assert str(refused.value) == (
        "simulated/wadd: --structured: simulated has no structured-output field for a JSON schema"
    )
    with pytest.raises(ConfigError, match="extra_body: simulated answers offline"):
        run(FILES, "p1", "simulated/wadd", dry_run=True, console=io.StringIO(),
            sampling=SamplingParams(extra_body={"min_p": 0.1}))  # fmt: skip


def test_a_probe_without_a_reply_schema_is_refused_before_any_call() -> None:
    with FakeLLMServer() as server:
        with pytest.raises(ConfigError, match="--structured: c0 has no JSON reply schema"):
            run(FILES, "c0", "openai/fake-model", base_url=server.openai_base_url,
                dry_run=True, sampling=SamplingParams(structured=True), console=io.StringIO())  # fmt: skip
        assert not server.requests


@pytest.mark.slow  # two sweeps against a fake server
def test_sweep_file_structured_and_extra_body_per_model(tmp_path: Path) -> None:
    with FakeLLMServer(responder=answer) as server:
        (tmp_path / "sweep.yaml").write_text(
            f"instances: [{', '.join(FILES)}]\nprobes: [p1, c2]\nbase_url: {server.openai_base_url}\n"
            "models:\n"
            "  - model: openai/small\n    structured: true\n"
            "    extra_body: {min_p: 0.1, grammar: 'root ::= .*'}\n"
            "  - openai/plain\n"
            f"out: {tmp_path / 'out'}\n"
        )
        done = CliRunner().invoke(app, ["run", str(tmp_path / "sweep.yaml"), "-q"])
        bodies = {b["messages"][-1]["content"] + b["model"]: b
                  for b in (r.body for r in server.requests if r.api == "openai")}  # fmt: skip
    assert done.exit_code == 0, done.output
    by_model: dict[str, list[dict[str, Any]]] = {}
    for body in bodies.values():
        by_model.setdefault(body["model"], []).append(body)
    assert all(b["min_p"] == 0.1 and b["grammar"] == "root ::= .*" and "response_format" in b
               for b in by_model["small"])  # fmt: skip
    assert not any({"min_p", "grammar", "response_format"} & set(b) for b in by_model["plain"])
    for record in records(tmp_path / "out"):
        small = record.model_id == "small"
        assert record.params.get("extra_body") == ({"min_p": 0.1, "grammar": "root ::= .*"}
                                                   if small else None)  # fmt: skip
        assert (record.output_schema is not None) is small
        body = bodies[record.prompt + record.model_id]
        assert {k: body[k] for k in record.params.get("extra_body") or {}} == (
            record.params.get("extra_body") or {}
        )  # the record states what the body carried


def test_the_structured_flag_is_the_sweep_default(tmp_path: Path) -> None:
    with FakeLLMServer(responder=answer) as server:
        done = CliRunner().invoke(app, [
            "run", "-i", FILES[0], "-p", "p1", "-m", "openai/x", "--base-url",
            server.openai_base_url, "-o", str(tmp_path / "o"), "--structured", "-q",
        ])  # fmt: skip
        assert done.exit_code == 0, done.output
        assert all("response_format" in r.body for r in server.requests if r.api == "openai")
    assert all(r.params["structured"] for r in records(tmp_path / "o"))


def test_extra_body_that_is_not_json_is_refused() -> None:
    with pytest.raises(ConfigError, match="extra_body is not a JSON object"):
        SamplingParams(extra_body={"when": object()})


def test_without_the_options_params_and_keys_are_what_they_were() -> None:
    from facetlab.client.cache import cache_key

    plain = SamplingParams(seed=3, extra_body={})
    assert list(plain.to_dict()) == ["temperature", "max_tokens", "system", "seed", "top_p"]
    root = Path(__file__).resolve().parents[1] / "results" / "aml-review" / "cue" / "records"
    for path in sorted(root.glob("*.json"))[:5]:  # committed records: their keys still hold
        rec = read_record(path)
        assert "structured" not in rec.params and rec.output_schema is None
        assert cache_key(rec.model, rec.params, rec.template, rec.prompt, rec.repeat) == rec.key

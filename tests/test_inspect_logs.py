"""Inspect logs of the FACET tasks as facetlab records; the OpenAI provider against the fake.

The acceptance criteria of issue 12: ``inspect eval facetlab/facet_p3`` against the local
fake ends ``success`` (``inspect eval`` exits 0 even on an errored log, so the log's
status is what is checked), ``facetlab import-inspect`` gives one P3 trial per sample
and epoch, and ``facetlab run`` and ``inspect eval`` of the same instances against the
same deterministic fake give the same P3 table.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install -e '.[dev,inspect]'")

from fakes import FakeLLMServer, FakeRequest, Fault
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.solver import generate, prompt_template
from inspect_helpers import mock_model, weights_reply

from facetlab.analysis import study
from facetlab.errors import RecordError
from facetlab.interop.export import export_sweep
from facetlab.interop.logs import import_logs
from facetlab.interop.tasks import facet_p3
from facetlab.paper.cells import table2_p3
from facetlab.records import load_trials, read_records
from facetlab.runner import run

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# Inspect's OpenAI provider prefers the Responses API; the fake speaks Chat Completions.
CHAT_COMPLETIONS = {"responses_api": False}


def _responder(request: FakeRequest) -> str:
    return weights_reply(request.prompt)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeLLMServer(responder=_responder) as fake:
        yield fake


@pytest.fixture(scope="module")
def instances(facet_data: Path) -> Path:
    return facet_data / "instances"


def _eval_p3(
    instances: Path,
    server: FakeLLMServer,
    log_dir: Path,
    model: str = "openai/fake-model",
    **kw: object,
) -> EvalLog:
    (log,) = inspect_eval(
        facet_p3(instances=str(instances)),
        model=model,
        model_base_url=server.openai_base_url,
        model_args=CHAT_COMPLETIONS,
        log_dir=str(log_dir),
        display="none",
        **kw,  # type: ignore[arg-type]
    )
    return log


def _trials(records: Path) -> pd.DataFrame:
    return load_trials(records=records, sources=["facetlab"])


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_p3_against_the_fake_imports_one_trial_per_sample_and_epoch(
    instances: Path, server: FakeLLMServer, tmp_path: Path, log_format: str
) -> None:
    log = _eval_p3(instances, server, tmp_path / "logs", epochs=2, log_format=log_format)
    assert log.status == "success", log.error
    assert log.location.endswith(f".{log_format}")
    assert log.samples is not None and len(log.samples) == 8  # 4 adversarial x 2 epochs
    # The prompts reached the provider byte for byte.
    assert {r.prompt for r in server.requests} == {s.input for s in log.samples}

    result = import_logs([log.location], tmp_path / "out")
    assert result.records == 8 and result.failed == 0 and result.unparsed == 0
    records = read_records(tmp_path / "out" / "records")
    assert sorted((r.instance_id, r.repeat) for r in records) == sorted(
        (str(s.id), s.epoch - 1) for s in log.samples
    )
    for r in records:
        assert r.probe == "p3" and r.parse_status == "ok"
        assert r.raw_response == weights_reply(r.prompt)
        assert r.parsed.weights is not None and sum(r.parsed.weights.values()) == 100
        assert r.usage.input_tokens and r.usage.output_tokens
    frame = _trials(tmp_path / "out")
    assert len(frame) == 8 and set(frame["probe"]) == {"P3"}
    assert frame["foi_weight"].notna().all() and not frame["failed"].any()
    # Importing the same log again (here: its folder) rewrites the same files.
    assert import_logs([tmp_path / "logs"], tmp_path / "out").records == 8
    assert len(list((tmp_path / "out" / "records").glob("*.json"))) == 8


@pytest.mark.slow
@pytest.mark.data
def test_facetlab_run_and_inspect_eval_give_the_same_p3_table(
    instances: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    # A model id the paper tabulates, so Table 2's own function builds both tables.
    model = "openai/gpt-5.4"
    run(
        instances=instances,
        probes="p3",
        model=model,
        base_url=server.openai_base_url,
        repeats=2,
        out=tmp_path / "sweep",
        progress="none",
        console=io.StringIO(),
    )
    log = _eval_p3(instances, server, tmp_path / "logs", model=model, epochs=2)
    assert log.status == "success", log.error
    import_logs([log.location], tmp_path / "inspect")

    ours, theirs = _trials(tmp_path / "sweep"), _trials(tmp_path / "inspect")
    assert len(ours) == len(theirs) == 8

    def cells(frame: pd.DataFrame) -> dict[tuple[str, str], list[float]]:
        groups = frame.groupby(["instance_id", "factor_of_interest"])["foi_weight"]
        return {k: sorted(v) for k, v in groups}

    assert cells(ours) == cells(theirs)
    table = table2_p3(ours)
    assert len(table) == 3 and table["n"].tolist() == [2, 2, 2]  # one primary wording per case
    pd.testing.assert_frame_equal(table, table2_p3(theirs))
    # and the generic study table that `facetlab report` writes as p3.csv
    pd.testing.assert_frame_equal(study.p3(ours, instances), study.p3(theirs, instances))

    # A provider's sweep (usage, cost, sampling settings) exported for inspect view and
    # imported back: the same trials table.
    exported = export_sweep(tmp_path / "sweep", tmp_path / "exported")
    assert len(exported.written) == 1
    header = read_eval_log(str(exported.written[0]), header_only=True)
    assert header.eval.model == model and header.stats.model_usage[model].output_tokens > 0
    import_logs(exported.written, tmp_path / "back")
    back = _trials(tmp_path / "back")
    order = ["instance_id", "timestamp", "raw_response"]
    pd.testing.assert_frame_equal(
        back.drop(columns="source_file").sort_values(order).reset_index(drop=True),
        ours.drop(columns="source_file").sort_values(order).reset_index(drop=True),
    )


@pytest.mark.slow
@pytest.mark.data
def test_an_errored_log_is_refused_and_partial_imports_failed_trials(
    instances: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    server.configure(fault_rates={Fault.BAD_REQUEST: 1.0})
    log = _eval_p3(instances, server, tmp_path / "logs")
    assert log.status == "error"  # inspect eval itself would exit 0 here
    with pytest.raises(RecordError, match="log status is 'error', expected 'success'"):
        import_logs([log.location], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written
    result = import_logs([log.location], tmp_path / "out", partial=True)
    records = read_records(tmp_path / "out" / "records")
    assert records and all(r.status == "failed" and r.error for r in records)
    assert result.failed == len(records)


@pytest.mark.slow
@pytest.mark.data
def test_logs_of_other_tasks_and_without_samples_are_refused(
    instances: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    other = Task(dataset=[Sample(input="hi", id="s1")], name="not_facet")
    (log,) = inspect_eval(
        other, model=mock_model(lambda p: "ok"), log_dir=str(tmp_path / "other"), display="none"
    )
    good = _eval_p3(instances, server, tmp_path / "good")
    with pytest.raises(RecordError, match="a log of task 'not_facet', not of a facetlab task"):
        import_logs([good.location, log.location], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # the good log was not written either

    bare = _eval_p3(instances, server, tmp_path / "bare", log_samples=False)
    with pytest.raises(RecordError, match="holds no samples"):
        import_logs([bare.location], tmp_path / "out")
    with pytest.raises(RecordError, match="not a readable Inspect log"):
        (tmp_path / "junk.eval").write_text("not a zip")
        import_logs([tmp_path / "junk.eval"], tmp_path / "out")


@pytest.mark.slow
@pytest.mark.data
def test_a_prompt_rewritten_by_a_solver_is_not_a_facetlab_trial(
    instances: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    log = _eval_p3(
        instances,
        server,
        tmp_path / "logs",
        solver=[prompt_template("Think step by step.\n\n{prompt}"), generate()],
    )
    assert log.status == "success", log.error
    with pytest.raises(RecordError, match="the prompt sent is not the facetlab prompt"):
        import_logs([log.location], tmp_path / "out")


@pytest.mark.slow
@pytest.mark.data
def test_a_log_missing_samples_is_refused(
    instances: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    log = _eval_p3(instances, server, tmp_path / "logs", epochs=2, log_format="json")
    data = json.loads(Path(log.location).read_text())
    data["samples"] = data["samples"][:-1]
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(data))
    with pytest.raises(RecordError, match="7 sample\\(s\\) in the log, expected 8"):
        import_logs([cut], tmp_path / "out")
    assert import_logs([cut], tmp_path / "out", partial=True).records == 7


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.timeout(420)
def test_inspect_eval_cli_then_facetlab_import_inspect(
    instances: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-real-key", "INSPECT_DISPLAY": "none"}
    command = "eval facetlab/facet_p3 --model openai/fake-model --epochs 2 -M responses_api=false"
    done = subprocess.run(
        [
            str(BIN / "inspect"),
            *command.split(),
            *("--model-base-url", server.openai_base_url, "-T", f"instances={instances}"),
            *("--log-dir", str(tmp_path / "logs")),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success", log.error
    assert log.eval.task == "facetlab/facet_p3"
    assert "sk-test" not in log.model_dump_json()  # the key is not logged

    done = subprocess.run(
        [str(BIN / "facetlab"), "import-inspect", str(log_file), "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "wrote 8 record(s)" in done.stdout
    frame = _trials(tmp_path / "out")
    assert sorted(frame.groupby("instance_id").size().tolist()) == [2, 2, 2, 2]


@pytest.mark.slow
def test_import_inspect_cli_exits_2_with_the_file_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.eval"
    done = subprocess.run(
        [str(BIN / "facetlab"), "import-inspect", str(missing), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert f"{missing}: no such Inspect log file" in done.stderr

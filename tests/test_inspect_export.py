"""``facetlab export-inspect``: a sweep as Inspect logs, read by Inspect, imported back unchanged.

Issue 22's acceptance: ``inspect_ai.log.read_eval_log`` (``inspect view``'s reader)
opens every exported log, and ``export-inspect`` then ``import-inspect`` reproduces the
trials table.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install -e '.[dev,inspect]'")

from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.errors import RecordError
from facetlab.interop.export import export_sweep, scorer_name
from facetlab.interop.logs import import_logs
from facetlab.probes import parse_reply
from facetlab.records import load_trials, read_records, write_record
from facetlab.runner import run

MODELS = ["simulated/wadd", "simulated/cue?format_noise=0.3"]
PROBES = ["p1", "p3", "c2", "c0"]
INSTANCES = ["facet-neg-0002", "facet-neg-cf-001", "facet-neg-cf-001-adv", "facet-neg-cf-002-adv"]


@pytest.fixture(scope="module")
def sweep(facet_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small offline sweep: two simulated models, four probes (C0 has no Inspect task),
    malformed replies (format noise) and one failed trial."""
    out = tmp_path_factory.mktemp("sweep") / "sweep"
    instances = ",".join(str(facet_data / "instances" / f"{i}.json") for i in INSTANCES)
    run(
        instances=instances,
        probes=",".join(PROBES),
        model=MODELS,
        repeats=2,
        out=out,
        progress="none",
        console=io.StringIO(),
    )
    some = next(r for r in read_records(out / "records") if r.probe == "p3")
    failed = some.model_copy(
        update={
            "trial_id": some.trial_id.replace(".r0.", ".r5.").replace(".r1.", ".r5."),
            "repeat": 5,
            "status": "failed",
            "error": "provider said 500 five times",
            "raw_response": None,
            "parse_status": "not_parsed",
            "cost_usd": None,
        }
    )
    write_record(failed, out / "records")
    # A reply no parser reads, parsed as the runner would: kept and counted, never dropped.
    text = "I would rather not weigh these factors."
    result = parse_reply("p3", text, some.n_factors)
    malformed = some.model_copy(
        update={
            "trial_id": some.trial_id.replace(".r0.", ".r6.").replace(".r1.", ".r6."),
            "repeat": 6,
            "raw_response": text,
            "parsed": result.to_parsed(),
            "parse_status": result.status,
        }
    )
    write_record(malformed, out / "records")
    return out


@pytest.fixture(scope="module")
def exported(sweep: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    logs = tmp_path_factory.mktemp("logs")
    result = export_sweep(sweep, logs)
    return logs, list(result.written)


def _trials(records: Path) -> pd.DataFrame:
    frame = load_trials(records=records, sources=["facetlab"])
    keys = ["probe", "raw_instance_id", "backend", "timestamp", "model_id", "raw_response"]
    return (
        frame.drop(columns=["source_file"])
        .sort_values(keys, na_position="first", kind="stable")
        .reset_index(drop=True)
    )


@pytest.mark.data
def test_one_log_per_model_and_probe_and_inspect_reads_every_one(
    sweep: Path, exported: tuple[Path, list[Path]]
) -> None:
    _, written = exported
    records = read_records(sweep / "records")
    wanted = {(r.model, r.probe) for r in records if r.probe != "c0"}
    assert len(written) == len(wanted) == 6
    seen = set()
    for path in written:
        log = read_eval_log(str(path))  # inspect view's reader
        assert log.status == "success"
        assert log.samples is not None
        probe = log.eval.task.removeprefix("facetlab/facet_")
        seen.add((log.eval.model, probe))
        mine = [r for r in records if (r.model, r.probe) == (log.eval.model, probe)]
        assert len(log.samples) == len(mine)
        by_key = {(r.instance_id, r.repeat + 1): r for r in mine}
        for sample in log.samples:
            record = by_key[(str(sample.id), sample.epoch)]
            assert sample.input == record.prompt
            if record.status == "failed":
                assert sample.error is not None and sample.scores is None
                continue
            assert sample.output.completion == record.raw_response
            assert sample.output.usage is not None
            assert sample.output.usage.output_tokens == record.usage.output_tokens
            score = sample.scores[scorer_name(probe)]  # type: ignore[index]
            assert score.metadata is not None
            assert score.metadata["parse_status"] == record.parse_status
            assert score.value["reply_parsed"] == float(  # type: ignore[index]
                record.parse_status not in ("malformed", "empty")
            )
        # The sample list inspect view shows comes from the same file.
        assert len(read_eval_log_sample_summaries(str(path))) == len(mine)
    # inspect view lists a folder by file name: task and task id parsed from it.
    listed = {(i.task, i.task_id) for i in list_eval_logs(str(written[0].parent))}
    assert listed == {
        (f"facet-{r.eval.task.removeprefix('facetlab/facet_')}", r.eval.task_id)
        for r in (read_eval_log(str(p), header_only=True) for p in written)
    }
    assert seen == wanted
    assert any(r.parse_status == "malformed" for r in records)  # format noise reached a log
    assert any(r.status == "failed" for r in records)


@pytest.mark.slow
@pytest.mark.data
def test_import_of_the_export_reproduces_the_trials_table(
    sweep: Path, exported: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    logs, _ = exported
    result = import_logs([logs], tmp_path / "back")
    ours = [r for r in read_records(sweep / "records") if r.probe != "c0"]
    assert result.records == len(ours) and result.failed == 1 and result.unparsed == 1
    back = {r.trial_id: r for r in read_records(tmp_path / "back" / "records")}
    assert back == {r.trial_id: r for r in ours}  # the same records, field for field

    # The trials table of the imported logs is the sweep's (C0 has no Inspect task).
    original = _trials(sweep)
    original = original[original["probe"] != "C0"].reset_index(drop=True)
    pd.testing.assert_frame_equal(_trials(tmp_path / "back"), original)


@pytest.mark.slow
@pytest.mark.data
def test_exported_metrics_are_the_inspect_scorers_metrics(
    exported: tuple[Path, list[Path]],
) -> None:
    # Inspect re-scores each log with facetlab's own scorer (parsing the replies again):
    # the metrics written at export are the ones Inspect computes.
    from inspect_ai import score

    from facetlab.interop.scoring import facet_single_factor, facet_weighted

    _, written = exported
    for path in written:
        log = read_eval_log(str(path))
        assert log.results is not None
        mine = {k: m.value for k, m in log.results.scores[0].metrics.items()}
        log.eval.model = "mockllm/model"  # Inspect resolves the model; simulated/* is not one
        # `inspect eval` never scores an errored sample; Inspect's re-scoring would.
        assert log.samples is not None
        log.samples = [s for s in log.samples if s.error is None]
        scorer = facet_single_factor() if log.eval.task.endswith("p1") else facet_weighted()
        rescored = score(log, [scorer], action="overwrite")
        assert rescored.results is not None
        theirs = {k: m.value for k, m in rescored.results.scores[0].metrics.items()}
        assert mine.keys() == theirs.keys()
        for key, value in mine.items():
            assert (math.isnan(value) and math.isnan(theirs[key])) or value == pytest.approx(
                theirs[key]
            ), (path.name, key)


@pytest.mark.slow
@pytest.mark.data
def test_json_logs_round_trip_too(sweep: Path, tmp_path: Path) -> None:
    result = export_sweep(sweep, tmp_path / "logs", log_format="json")
    assert all(p.suffix == ".json" for p in result.written)
    assert result.skipped == {"c0": 16}
    import_logs(result.written, tmp_path / "back")
    original = _trials(sweep)
    original = original[original["probe"] != "C0"].reset_index(drop=True)
    pd.testing.assert_frame_equal(_trials(tmp_path / "back"), original)


@pytest.mark.data
def test_two_sweeps_of_one_model_in_one_folder_are_refused(sweep: Path, tmp_path: Path) -> None:
    twin = next(r for r in read_records(sweep / "records") if r.probe == "p3")
    write_record(twin.model_copy(update={"trial_id": twin.trial_id + "x"}), tmp_path / "r")
    write_record(twin, tmp_path / "r")
    with pytest.raises(RecordError, match="export each sweep folder on its own"):
        export_sweep(tmp_path / "r", tmp_path / "logs")
    assert not (tmp_path / "logs").exists()


def test_an_empty_folder_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = CliRunner().invoke(app, ["export-inspect", str(tmp_path / "empty"), "--out", "x"])
    assert done.exit_code == 2
    assert "no facetlab records to export" in done.output


@pytest.mark.slow
@pytest.mark.data
def test_the_command_writes_the_logs_and_says_how_to_view_them(sweep: Path, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["export-inspect", str(sweep), "--out", str(tmp_path / "l")])
    assert done.exit_code == 0, done.output
    assert "wrote 6 log(s)" in done.output and "left out (no Inspect task): 16 c0" in done.output
    assert f"inspect view --log-dir {tmp_path / 'l'}" in done.output
    assert len(list((tmp_path / "l").glob("*.eval"))) == 6

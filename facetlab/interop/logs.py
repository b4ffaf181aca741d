"""Inspect logs of the ``facetlab/facet_*`` tasks as facetlab trial records.

Every sample and epoch of a log becomes one :class:`~facetlab.records.schema.TrialRecord`
(``repeat`` = epoch - 1), its reply parsed again by facetlab's parser, written with
the project's record writer to ``<out>/records/<trial_id>.json``, so
``load_trials(records=out)``, ``facetlab report`` and the notebooks read it as any sweep.

Every log is read and checked before anything is written: a log of another task, a
log whose status is not ``success`` (``error``, ``cancelled``, ``started``), a log
without samples or with fewer than its dataset and epochs promise, or a sample whose
prompt is not facetlab's, is a :class:`~facetlab.errors.RecordError` naming the file.
``partial=True`` imports what an unfinished log holds (errored samples become
``failed`` records).

>>> result = import_logs(["logs/facet-p3.eval"], "results/inspect-p3")   # doctest: +SKIP
>>> result.records                                                        # doctest: +SKIP
8
"""

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import ChatMessageUser
from pydantic import ValidationError

from facetlab.backends.base import ModelResponse, Usage
from facetlab.client.pricing import cost_usd
from facetlab.errors import ConfigError, RecordError
from facetlab.files import atomic_write_text
from facetlab.interop.logfile import LogLimits, check_log_file
from facetlab.interop.variants import RECORD_KEY, TASK_PROBES, SampleMeta
from facetlab.jsonio import json_type
from facetlab.names import check_safe_id
from facetlab.probes import PARSERS, parse_reply
from facetlab.project import version
from facetlab.records.own import record_from_object, write_record
from facetlab.records.schema import TrialRecord, prompt_sha256

IMPORT_FORMAT = "facetlab.inspect-import/1"
EXPORT_FORMAT = "facetlab.inspect-export/1"
"""Marks a log written by ``facetlab export-inspect`` (``eval.metadata["facetlab_export"]``)."""
EXPORT_KEY = "facetlab_export"
TASK_PREFIX = "facetlab/"
BACKEND = "inspect"


@dataclass(frozen=True)
class LogImport:
    """The records one log gives."""

    path: Path
    task: str
    status: str
    eval_id: str
    model: str
    records: tuple[TrialRecord, ...]


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_logs` wrote."""

    out: Path
    logs: tuple[LogImport, ...]
    written: tuple[Path, ...] = field(default_factory=tuple)

    @property
    def records(self) -> int:
        return len(self.written)

    @property
    def failed(self) -> int:
        return sum(r.status == "failed" for log in self.logs for r in log.records)

    @property
    def unparsed(self) -> int:
        return sum(
            r.status == "ok" and r.parse_status in ("malformed", "empty")
            for log in self.logs
            for r in log.records
        )


def probe_of_task(task: str, shown: str) -> str:
    """``"facetlab/facet_p3"`` (or ``"facet_p3"``) -> ``"p3"``; other tasks are refused.

    >>> probe_of_task("facetlab/facet_c2", "log.eval")
    'c2'
    """
    name = task.removeprefix(TASK_PREFIX)
    probe = name.removeprefix("facet_")
    if name.startswith("facet_") and probe in TASK_PROBES:
        return probe
    known = ", ".join(f"{TASK_PREFIX}facet_{p}" for p in TASK_PROBES)
    raise RecordError(f"{shown}: a log of task {task!r}, not of a facetlab task ({known})")


def read_facet_log(
    path: Path | str, *, partial: bool = False, limits: LogLimits | None = None
) -> EvalLog:
    """Read an ``.eval`` or ``.json`` log and check it is a complete log of a facetlab task.

    The file is first held to ``limits`` (:mod:`facetlab.interop.logfile`); the
    samples' events (the transcript) are not loaded, only what a record needs.
    """
    file = Path(path)
    if not file.is_file():
        raise RecordError(f"{file}: no such Inspect log file")
    check_log_file(file, limits or LogLimits())
    try:
        log = read_eval_log(str(file), exclude_fields={"events"})
    except MemoryError as exc:  # within the limits this should not happen; say so plainly
        raise RecordError(f"{file}: not enough memory to read this log") from exc
    except Exception as exc:  # any reader failure means "not a readable log"
        raise RecordError(
            f"{file}: not a readable Inspect log ({type(exc).__name__}: {_first_line(exc)})"
        ) from exc
    probe_of_task(log.eval.task, str(file))
    if log.status != "success" and not partial:
        first = (log.error.message or "").strip().splitlines() if log.error is not None else []
        why = f": {first[0]}" if first else ""
        raise RecordError(
            f"{file}: log status is {log.status!r}, expected 'success'{why}; the eval did not "
            "finish (retry it with `inspect eval-retry`, or import what it holds with --partial)"
        )
    if not log.samples:
        raise RecordError(
            f"{file}: the log holds no samples (was it written with --no-log-samples?); "
            "facetlab needs each sample's reply"
        )
    exported = (log.eval.metadata or {}).get("trials")
    # an export's own trial count: not every instance of a sweep need have every repeat
    expected = (
        exported
        if _is_export(log) and isinstance(exported, int) and not isinstance(exported, bool)
        else (log.eval.dataset.samples or 0) * (log.eval.config.epochs or 1)
    )
    if len(log.samples) < expected and not partial:
        raise RecordError(
            f"{file}: {len(log.samples)} sample(s) in the log, expected {expected} "
            f"({log.eval.dataset.samples} samples x {log.eval.config.epochs or 1} epochs); "
            "pass --partial to import the ones present"
        )
    return log


def log_records(
    log: EvalLog, *, source: str, parser: str = "strict", sweep: str | None = None
) -> list[TrialRecord]:
    """One record per sample and epoch of a checked facetlab log (``source`` names it)."""
    if parser not in PARSERS:
        raise ConfigError(f"unknown parser {parser!r}; expected one of {', '.join(PARSERS)}")
    probe = probe_of_task(log.eval.task, source)
    params = log.eval.model_generate_config.model_dump(exclude_none=True)
    out: list[TrialRecord] = []
    seen: set[str] = set()
    for sample in log.samples or []:
        shown = f"{source}: sample {_show(sample.id)} epoch {sample.epoch}"
        try:
            meta = SampleMeta.from_metadata(sample.metadata, shown)
            if meta.probe != probe:
                raise RecordError(f"{shown}: a {meta.probe} sample in a {probe} task")
            if sample.epoch < 1:
                raise RecordError(f"{shown}: epoch {sample.epoch}; expected 1 or more")
            record = sample_record(sample, meta, log, params=params, parser=parser, sweep=sweep)
            _check_record_ids(record)
        except RecordError as exc:
            text = str(exc)
            raise RecordError(text if text.startswith(source) else f"{shown}: {text}") from exc
        except ValidationError as exc:
            errors = exc.errors()
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            why = errors[0]["msg"] if errors else str(exc)
            raise RecordError(f"{shown}: field {where or '?'}: {_first_line(why)}") from exc
        except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as exc:
            raise RecordError(
                f"{shown}: badly typed sample ({type(exc).__name__}: {_first_line(exc)})"
            ) from exc
        if record.trial_id in seen:
            raise RecordError(f"{shown}: a second sample with trial id {record.trial_id}")
        seen.add(record.trial_id)
        out.append(record)
    return out


def _check_record_ids(record: TrialRecord) -> None:
    """Every id that becomes a file name, checked as ``facetlab validate`` checks ids."""
    for name, value in (
        ("instance id", record.instance_id),
        ("base instance id", record.base_instance_id),
        ("trial id", record.trial_id),
    ):
        if value is None:
            continue
        if (problem := check_safe_id(value)) is not None:
            raise RecordError(f"{name} {_show(value)} {problem}")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0][:300] if lines else ""


def sample_record(
    sample: EvalSample,
    meta: SampleMeta,
    log: EvalLog,
    *,
    params: dict[str, Any],
    parser: str,
    sweep: str | None,
) -> TrialRecord:
    """The record of one sample-epoch."""
    shown = f"sample {sample.id!r} epoch {sample.epoch}"
    prompt = _prompt_sent(sample)
    if prompt is None or prompt_sha256(prompt) != meta.prompt_sha256:
        raise RecordError(
            f"{shown}: the prompt sent is not the facetlab prompt of {meta.instance_id} "
            "(a solver changed it); such a sample is not a facetlab trial"
        )
    if _is_export(log) and RECORD_KEY in (sample.metadata or {}):
        return _exported_record(sample, meta, prompt)
    failed = sample.error is not None
    text = sample.output.completion if not failed else ""
    usage = sample.output.usage
    input_tokens = usage.input_tokens if usage is not None else None
    output_tokens = usage.output_tokens if usage is not None else None
    for name, count in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        if count is not None and not 0 <= count < 10**9:
            raise RecordError(f"output.usage.{name} is {count}; expected a count from 0")
    model = log.eval.model
    trial = meta.trial(model=model, epoch=sample.epoch, eval_id=log.eval.eval_id, prompt=prompt)
    started = sample.started_at or log.eval.created
    response = ModelResponse(
        text=text,
        model_id=sample.output.model or "",
        usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        latency_s=sample.total_time,
    )
    return TrialRecord.from_trial(
        trial,
        response=None if failed else response,
        parsed=None if failed else parse_reply(meta.probe, text, meta.n_factors, parser=parser),
        error=sample.error.message if sample.error is not None else None,
        started_at=started,
        finished_at=sample.completed_at or started,
        backend=BACKEND,
        cost_usd=None if failed else cost_usd(model, input_tokens, output_tokens),
        sweep=sweep,
        params=params,
        inspect=(log.eval.task, log.eval.eval_id, sample.id, sample.epoch),
    )


def _is_export(log: EvalLog) -> bool:
    return (log.eval.metadata or {}).get(EXPORT_KEY) == EXPORT_FORMAT


def _exported_record(sample: EvalSample, meta: SampleMeta, prompt: str) -> TrialRecord:
    """The record an exported sample carries, with its prompt and reply put back.

    It is checked like a record file, and against the sample it rides on: same probe,
    instance, repeat and prompt.
    """
    data = sample.metadata[RECORD_KEY]
    if not isinstance(data, dict):
        raise RecordError(f"metadata.{RECORD_KEY} is {json_type(data)}; expected an object")
    data = dict(data)
    data["prompt"] = prompt
    if "raw_response" not in data:
        data["raw_response"] = sample.output.completion
    record = record_from_object(data, f"metadata.{RECORD_KEY}")
    expected = (meta.probe, meta.instance_id, sample.epoch - 1, meta.prompt_sha256)
    got = (record.probe, record.instance_id, record.repeat, record.prompt_sha256)
    if got != expected:
        raise RecordError(
            f"metadata.{RECORD_KEY} is a record of {got[:3]}, not of this sample {expected[:3]}"
        )
    return record


def _prompt_sent(sample: EvalSample) -> str | None:
    """The text of the first user message the model received (the sample input if none)."""
    fallback = sample.input if isinstance(sample.input, str) else None
    return next((m.text for m in sample.messages if isinstance(m, ChatMessageUser)), fallback)


def import_logs(
    paths: Iterable[Path | str],
    out: Path | str,
    *,
    parser: str = "strict",
    partial: bool = False,
    limits: LogLimits | None = None,
) -> ImportResult:
    """Read and check every log, then write their records under ``<out>/records/``.

    Nothing is written unless every log passes: its size (``limits``), its task and
    status, and every sample's fields and ids.
    """
    files = [Path(p) for p in paths]
    if not files:
        raise ConfigError("no Inspect log given")
    out_dir = Path(out)
    imports: list[LogImport] = []
    for file in _expand(files):
        log = read_facet_log(file, partial=partial, limits=limits)
        records = log_records(log, source=str(file), parser=parser, sweep=out_dir.name)
        log.samples = None  # the records hold what is needed; free the samples before the next log
        imports.append(
            LogImport(
                file, log.eval.task, log.status, log.eval.eval_id, log.eval.model, tuple(records)
            )
        )
    # Everything parsed: only now is anything written (a bad log leaves the folder as it was).
    written = [write_record(r, out_dir / "records") for log in imports for r in log.records]
    _write_manifest(out_dir, imports, parser)
    return ImportResult(out_dir, tuple(imports), tuple(written))


def _expand(files: Sequence[Path]) -> list[Path]:
    """Files as given; a folder stands for the ``*.eval`` and ``*.json`` logs directly in it."""
    out: list[Path] = []
    for f in files:
        if f.is_dir():
            found = sorted(p for p in f.iterdir() if p.suffix in (".eval", ".json"))
            if not found:
                raise RecordError(f"{f}: no .eval or .json Inspect log in this folder")
            out.extend(found)
        else:
            out.append(f)
    return out


def _write_manifest(out: Path, imports: Sequence[LogImport], parser: str) -> None:
    """``<out>/inspect-import.json``: which logs the records came from (no secrets).

    Entries of earlier imports into the same folder are kept (one per eval id).
    """
    path = out / "inspect-import.json"
    current = {i.eval_id for i in imports}
    earlier: list[Any] = []
    if path.is_file():
        try:
            earlier = list(json.loads(path.read_text(encoding="utf-8")).get("logs", []))
        except (OSError, ValueError, AttributeError):
            earlier = []  # an unreadable manifest is only provenance: rebuild it
    kept = [e for e in earlier if isinstance(e, dict) and e.get("eval_id") not in current]
    doc = {
        "format": IMPORT_FORMAT,
        "parser": parser,
        "facetlab_version": version(),
        "logs": kept
        + [
            {
                "path": str(i.path),
                "task": i.task,
                "status": i.status,
                "eval_id": i.eval_id,
                "model": i.model,
                "records": len(i.records),
            }
            for i in imports
        ],
    }
    atomic_write_text(path, json.dumps(doc, indent=1) + "\n")

"""A facetlab sweep as Inspect eval logs, so ``inspect view`` browses it.

One log per (model, probe) of the records, written with inspect_ai's own types and
writer; the task is the probe's Inspect task (``facetlab/facet_p3``), each sample one
trial: ``id`` the instance (variant) id, ``epoch`` the repeat + 1, the input the
prompt sent, the output the reply received (with its token usage), the score
facetlab's parse of that reply judged by :mod:`facetlab.analysis.rules` (the same
values and metrics as :mod:`facetlab.interop.scoring`), and a failed trial a sample
with its error. Nothing is parsed again: the record's own parse is the evidence.

Each sample also carries its record (``metadata["facetlab_record"]``, without the
prompt and reply, which are the sample's input and output), so ``facetlab
import-inspect`` of an exported log gives back the same records and the same trials
table. Probes without an Inspect task (C0, C3, anchor) are counted and left out.

>>> result = export_sweep("results/my-sweep", "logs/my-sweep")    # doctest: +SKIP
>>> [log.name for log in result.written]                          # doctest: +SKIP
['2026-12-01T10-00-00_facet-p3_openai-gpt-4o_3f27ca3010847b7fa7d84a.eval']
"""

import hashlib
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import SampleScore, Score

import facetlab
from facetlab.analysis.rules import DEFAULT_THRESHOLD
from facetlab.errors import ConfigError, RecordError
from facetlab.interop.logs import EXPORT_FORMAT, EXPORT_KEY
from facetlab.interop.scoring import facet_score, metrics_of
from facetlab.interop.variants import (
    METADATA_KEY,
    RECORD_KEY,
    TASK_PROBES,
    SampleMeta,
)
from facetlab.probes import WEIGHTED_PROBES
from facetlab.probes.base import ParseResult
from facetlab.records.own import read_records
from facetlab.records.schema import TrialRecord

LogFormat = Literal["eval", "json"]


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_sweep` wrote."""

    out: Path
    written: tuple[Path, ...]
    trials: int
    skipped: dict[str, int]
    """Trials left out, by probe (probes without an Inspect task)."""


def export_sweep(
    source: Path | str,
    out: Path | str,
    *,
    log_format: LogFormat = "eval",
    threshold: float = DEFAULT_THRESHOLD,
) -> ExportResult:
    """Write the records under ``source`` as Inspect logs in ``out`` (one per model x probe).

    ``source`` is a sweep folder, its ``records/`` folder or any folder of records
    (searched recursively, as :func:`facetlab.records.read_records` does).
    """
    if log_format not in ("eval", "json"):
        raise ConfigError(f"log format must be 'eval' or 'json', got {log_format!r}")
    if not math.isfinite(threshold):
        raise ConfigError(f"threshold must be a finite number, got {threshold}")
    source_dir = Path(source)
    records = read_records(source_dir)
    if not records:
        raise RecordError(f"{source_dir}: no facetlab records to export")
    groups: dict[tuple[str, str], list[TrialRecord]] = defaultdict(list)
    skipped: Counter[str] = Counter()
    for record in records:
        if record.probe in TASK_PROBES:
            groups[(record.model, record.probe)].append(record)
        else:
            skipped[record.probe] += 1
    if not groups:
        kinds = ", ".join(sorted(skipped))
        raise RecordError(
            f"{source_dir}: no trials of a probe with an Inspect task "
            f"({', '.join(TASK_PROBES)}); found only {kinds}"
        )
    logs = [
        sweep_log(group, source=str(source_dir), threshold=threshold)
        for _, group in sorted(groups.items())
    ]
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for log in logs:
        target = out_dir / f"{_log_name(log)}.{log_format}"
        write_eval_log(log, str(target), format=log_format)
        written.append(target)
    return ExportResult(
        out_dir, tuple(written), sum(len(g) for g in groups.values()), dict(skipped)
    )


def sweep_log(
    records: Sequence[TrialRecord], *, source: str, threshold: float = DEFAULT_THRESHOLD
) -> EvalLog:
    """The Inspect log of the records of one model and one probe."""
    first = records[0]
    model, probe = first.model, first.probe
    ordered = sorted(records, key=lambda r: (r.instance_id, r.repeat))
    seen: dict[tuple[str, int], TrialRecord] = {}
    for r in ordered:
        if r.model != model or r.probe != probe:
            raise RecordError(
                f"{r.trial_id}: a {r.model} {r.probe} record in a {model} {probe} log"
            )
        twin = seen.get((r.instance_id, r.repeat))
        if twin is not None:
            raise RecordError(
                f"{source}: trials {twin.trial_id} and {r.trial_id} are both {model} {probe} "
                f"on {r.instance_id}, repeat {r.repeat} (two sweeps in one folder?); "
                "export each sweep folder on its own"
            )
        seen[(r.instance_id, r.repeat)] = r
    sample_ids = list(dict.fromkeys(r.instance_id for r in ordered))
    samples = [_sample(r, threshold) for r in ordered]
    created = min(r.started_at for r in ordered)
    finished = max(r.finished_at for r in ordered)
    key = "\n".join([model, probe, *sorted(r.trial_id for r in ordered)])
    eval_id = _short_hash("eval", key)
    return EvalLog(
        status="success",
        eval=EvalSpec(
            eval_id=eval_id,
            run_id=_short_hash("run", key),
            task_id=_short_hash("task", f"{model}\n{probe}\n{source}"),
            created=created,
            task=f"facetlab/facet_{probe}",
            task_display_name=f"facet_{probe}",
            task_args={"template": first.template},
            dataset=EvalDataset(
                name=f"facet-{probe}",
                location=source,
                samples=len(sample_ids),
                sample_ids=list(sample_ids),
            ),
            model=model,
            model_generate_config=_generate_config(first.params),
            config=EvalConfig(epochs=max(r.repeat for r in ordered) + 1),
            packages={"facetlab": facetlab.__version__},
            metadata={
                EXPORT_KEY: EXPORT_FORMAT,
                "trials": len(ordered),
                "source": source,
                "backend": first.backend,
                "params": first.params,
            },
        ),
        results=_results(samples, probe, len(sample_ids)),
        stats=EvalStats(
            started_at=created, completed_at=finished, model_usage=_total_usage(samples)
        ),
        samples=samples,
    )


def scorer_name(probe: str) -> str:
    """The scorer an Inspect task of ``probe`` uses (the name in ``sample.scores``)."""
    return "facet_weighted" if probe in WEIGHTED_PROBES else "facet_single_factor"


def _sample(record: TrialRecord, threshold: float) -> EvalSample:
    meta = SampleMeta(
        probe=record.probe,  # type: ignore[arg-type]  # one of TASK_PROBES (grouped above)
        instance_id=record.instance_id,
        base_instance_id=record.base_instance_id,
        variant=record.variant,
        factor_of_interest=record.factor_of_interest,
        perturbed_factor=getattr(record, "perturbed_factor", None),
        n_factors=record.n_factors,
        template=record.template,
        prompt_sha256=record.prompt_sha256,
        ground_truth=record.ground_truth,
        weight_estimates=record.weight_estimates,
    )
    # The prompt and reply are the sample's input and output; the rest rides along.
    kept = record.model_dump(mode="json", exclude={"prompt", "raw_response"})
    if record.raw_response is None:
        kept["raw_response"] = None
    failed = record.status == "failed"
    reply = record.raw_response
    model_name = record.model_id_reported or record.model_id
    usage = _usage(record)
    messages: list[Any] = [ChatMessageUser(content=record.prompt)]
    if reply is not None:
        messages.append(ChatMessageAssistant(content=reply, model=model_name))
    output = ModelOutput(
        model=model_name,
        choices=(
            [ChatCompletionChoice(message=ChatMessageAssistant(content=reply, model=model_name))]
            if reply is not None
            else []
        ),
        usage=usage,
        error=record.error if failed else None,
    )
    return EvalSample(
        id=record.instance_id,
        epoch=record.repeat + 1,
        input=record.prompt,
        target=record.ground_truth or "",
        messages=messages,
        output=output,
        scores=None if failed else {scorer_name(record.probe): _score(record, meta, threshold)},
        metadata={METADATA_KEY: meta.to_metadata(), RECORD_KEY: kept},
        model_usage={record.model: usage} if usage is not None else {},
        started_at=record.started_at,
        completed_at=record.finished_at,
        total_time=record.latency_s,
        error=(
            EvalError(message=record.error or "failed", traceback="", traceback_ansi="")
            if failed
            else None
        ),
    )


def _score(record: TrialRecord, meta: SampleMeta, threshold: float) -> Score:
    """The score facetlab's scorer gives, from the record's own parse."""
    parsed = record.parsed
    result = ParseResult(
        status=record.parse_status,
        weights=dict(parsed.weights) if parsed.weights else None,
        weight_sum=parsed.weight_sum,
        answer=parsed.answer,
        label=parsed.label,
        problems=tuple(parsed.problems),
    )
    return facet_score(meta, result, threshold)


def _usage(record: TrialRecord) -> ModelUsage | None:
    got = record.usage
    if got.input_tokens is None and got.output_tokens is None:
        return None
    given_in, given_out = got.input_tokens or 0, got.output_tokens or 0
    return ModelUsage(
        input_tokens=given_in,
        output_tokens=given_out,
        total_tokens=given_in + given_out,
        total_cost=record.cost_usd,
    )


def _total_usage(samples: Sequence[EvalSample]) -> dict[str, ModelUsage]:
    total: dict[str, ModelUsage] = {}
    for sample in samples:
        for name, usage in sample.model_usage.items():
            total[name] = total[name] + usage if name in total else usage.model_copy()
    return total


def _results(samples: Sequence[EvalSample], probe: str, n_ids: int) -> EvalResults:
    """The task's metrics as Inspect computes them (the scorer's own metric functions):
    epochs averaged per sample first."""
    name = scorer_name(probe)
    by_id: dict[str, list[dict[str, float]]] = defaultdict(list)
    for s in samples:
        if s.scores and name in s.scores and isinstance(s.scores[name].value, dict):
            by_id[str(s.id)].append(s.scores[name].value)  # type: ignore[arg-type]
    reduced = [
        SampleScore(
            score=Score(value={k: sum(v[k] for v in values) / len(values) for k in values[0]}),
            sample_id=sample_id,
        )
        for sample_id, values in by_id.items()
    ]
    metrics = {k: float(compute(reduced)) for k, compute in metrics_of(probe).items()}  # type: ignore[arg-type]
    return EvalResults(
        total_samples=n_ids,
        completed_samples=len(reduced),
        scores=[
            EvalScore(
                name=name,
                scorer=name,
                reducer="mean",
                scored_samples=len(reduced),
                unscored_samples=n_ids - len(reduced),
                metrics={k: EvalMetric(name=k, value=v) for k, v in metrics.items()},
            )
        ],
    )


def _generate_config(params: dict[str, Any]) -> GenerateConfig:
    """The sampling settings Inspect knows by name (all of them stay in the log metadata)."""
    known = {k: v for k, v in params.items() if k in GenerateConfig.model_fields}
    try:
        return GenerateConfig.model_validate(known)
    except ValueError:
        return GenerateConfig()


def _short_hash(kind: str, text: str) -> str:
    return hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()[:22]


def _log_name(log: EvalLog) -> str:
    """``<created>_<task>_<model>_<task id>``: Inspect reads the task (second part) and the
    task id (last part) from a log's file name when it lists a folder."""
    created = re.sub(r"[^0-9T]+", "-", log.eval.created[:19]).strip("-")
    task = log.eval.task.removeprefix("facetlab/").replace("_", "-")
    model = re.sub(r"[^A-Za-z0-9.]+", "-", log.eval.model).strip("-")[:60]
    return f"{created}_{task}_{model}_{log.eval.task_id}"

"""The hint and trace sections of a study: ``tables/hint.csv`` and ``traces.csv``.

Both read the study's own records (their reply and thinking texts; the study table
keeps no text), only the trials the study kept (usable, not stale, the models asked
for), and name models as the study does.

>>> section = hint_section(Study.load("instances", ["results/h1"]))  # doctest: +SKIP
>>> section.table[["model", "hint_kind", "excess_switch_rate"]]      # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from facetlab.analysis.hints import hint_table, hint_trials
from facetlab.analysis.rules import usable
from facetlab.analysis.traces import trace_table, trace_trials
from facetlab.errors import DataError, RecordError
from facetlab.probes.hint import load_hints
from facetlab.records import TrialRecord, read_sweep_records
from facetlab.report.study import Section, Study

__all__ = ["JUDGE_CACHE", "hint_section", "trace_section"]

JUDGE_CACHE = "judge-cache"
"""The folder of a report's ``--out`` where the judge's answers are kept (a rerun is free)."""


def _records(study: Study, probes: tuple[str, ...]) -> tuple[list[TrialRecord], dict[str, str]]:
    """The study's kept records of ``probes``, and each record's model as the study names it."""
    kept = usable(study.trials)
    kept = kept[kept["probe"].isin(probes)]
    if study.models is not None:
        kept = kept[kept["model"].isin(study.models)]
    names = dict(zip(kept["trial_id"], kept["model"].astype(str), strict=True))
    if not names:
        raise DataError(f"no {'/'.join(probes)} trials in these records")
    found: dict[str, TrialRecord] = {}
    for folder in study.records:  # a sweep's records/ (or the records folders under it)
        for where in [d for d in sorted(folder.rglob("records")) if d.is_dir()] or [folder]:
            found.update((r.trial_id, r) for r in read_sweep_records(where) if r.trial_id in names)
    return list(found.values()), {r.model: names[r.trial_id] for r in found.values()}


def hint_section(
    study: Study, *, judge: str | None = None, judge_cache: Path | str | None = None
) -> Section:
    """The ``hint`` table (:func:`facetlab.analysis.hints.hint_table`), or why there is none;
    ``judge`` (a model string) judges the switched replies instead of the rule."""
    try:
        records, models = _records(study, ("H1",))
        hints = load_hints(study.instances_dir)
        trials = hint_trials(records, study.instances, hints, judge=judge, judge_cache=judge_cache)
        return Section("hint", hint_table(trials.assign(model=trials["model"].map(models))))
    except (DataError, RecordError) as exc:
        return Section("hint", None, str(exc))


def trace_section(study: Study) -> Section:
    """The ``traces`` table (:func:`facetlab.analysis.traces.trace_table`), or why there is none."""
    try:
        records, models = _records(study, ("P2", "P3", "anchor", "C2"))
        trials = trace_trials(records)
        return Section("traces", trace_table(trials.assign(model=trials["model"].map(models))))
    except (DataError, RecordError) as exc:
        return Section("traces", None, str(exc))

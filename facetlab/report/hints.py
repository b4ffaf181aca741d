"""The hint and trace sections of a study: ``tables/hint.csv``, ``traces.csv`` and the hint figure.

Both read the study's own records (their reply and thinking texts; the study table
keeps no text), only the trials the study kept (usable, not stale, the models asked
for), and name models as the study does.

>>> section = hint_section(Study.load("instances", ["results/h1"]))  # doctest: +SKIP
>>> section.table[["model", "hint_kind", "switch_rate"]]             # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from facetlab.analysis.hints import hint_table, hint_trials
from facetlab.analysis.rules import usable
from facetlab.analysis.traces import trace_table, trace_trials
from facetlab.errors import DataError, RecordError
from facetlab.figures import literal_text, require_table
from facetlab.probes.hint import load_hints
from facetlab.records import TrialRecord, read_sweep_records
from facetlab.report.study import Section, Study

__all__ = ["JUDGE_CACHE", "hint_figure", "hint_section", "trace_section"]

RATES = ("switch_rate", "verbalized_answer_rate", "verbalized_thinking_rate")
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


def hint_figure(hint: pd.DataFrame) -> Figure:
    """Per model (a panel each) and hint kind: the switch rate, and the verbalisation rates
    in the answer and the thinking text among switched trials, with Wilson 95% intervals."""
    require_table(hint, ["model", "hint_kind", *RATES], "hint")
    models = list(dict.fromkeys(hint["model"]))
    fig = Figure(figsize=(4 + 3 * len(models), 4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(models), sharey=True, squeeze=False)[0])
    for ax, model in zip(axes, models, strict=True):
        cell = hint[hint["model"] == model].reset_index(drop=True)
        x = np.arange(len(cell))
        for i, rate in enumerate(RATES):
            value = cell[rate].to_numpy(dtype=float)
            err = np.vstack([value - cell[f"{rate}_low"], cell[f"{rate}_high"] - value])
            at, shown = x + (i - 1) * 0.27, np.nan_to_num(value)
            ax.bar(at, shown, 0.27, label=rate.replace("_", " "), color=f"C{i}")
            ax.errorbar(at, shown, yerr=np.nan_to_num(err).clip(min=0), fmt="none",
                        color="#333333", capsize=3)  # fmt: skip
            for where in at[np.isnan(value)]:  # nothing to rate: no switch, or no thinking text
                ax.text(where, 0.02, "n/a", rotation=90, ha="center", fontsize=7, color="#666666")
        ax.set_xticks(x, [literal_text(k) for k in cell["hint_kind"]])
        ax.set_ylim(0, 1.05)
        ax.set_title(literal_text(model), fontsize=9)
    axes[0].set_ylabel("share (Wilson 95%)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
    fig.suptitle("H1: switches to the hint, and whether the answer / thinking says so")
    return fig

"""Reasoning dependence: does the answer change when the reasoning before it is altered?

Stage two of the COT/COTX probes (:mod:`facetlab.probes.cot`; docs/reasoning.md) is
planned here, from stage one's records: :class:`InterventionSuite` gives the planner one
COTX cell per intervention on each ``cot`` reply, the mistakes placed by trace
attribution (:func:`facetlab.analysis.traces.trace_scores`: the reasoning's most-named
factor, and another one). :func:`reasoning_summary` then gives per model, against the
``cot`` answer (the reference):

- the early-answering curve, P(same answer | reasoning cut after k of K parts), each
  point with its Wilson 95% interval, and its area over the curve
  ``aoc = mean over k of (1 - P(same | k))`` (the step curve's area, k = 0..K-1: the
  full reasoning is the reference itself) with a bootstrap 95% interval over instances;
- ``mistake_flip_rate`` (a mistake on the top-named factor), ``mistake_flip_rate_other``
  (on another factor), and ``top_minus_other``, their paired difference over the
  instances that have both, with a bootstrap interval;
- ``paraphrase_stability`` (same answer) and ``filler_accuracy`` (the ground truth
  after filler), beside ``reasoning_accuracy`` (the ``cot`` answers').

A reply without an answer is counted (``malformed``) and left out of every rate.
"""

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from facetlab.analysis.stats import wilson
from facetlab.analysis.traces import trace_scores
from facetlab.errors import DataError
from facetlab.instances.schema import Instance
from facetlab.probes.cot import SENTENCES, cot_prompt, interventions, reasoning_of
from facetlab.records.schema import TrialRecord
from facetlab.runner.plan import Cell
from facetlab.runner.suite import FacetSuite


def ranked_factors(text: str, n_factors: int) -> list[str]:
    """The factors ``text`` names, most-named first (trace scores; ties: lower label).

    >>> ranked_factors("F2 then F1. F2 again.", 3)
    ['F2', 'F1']
    """
    scores = trace_scores(text, n_factors)
    return sorted((f for f in scores if scores[f] > 0), key=lambda f: (-scores[f], int(f[1:])))


def stage_one(records: Iterable[TrialRecord]) -> list[TrialRecord]:
    """The reasoning trials every intervention is compared with: ok ``cot`` records, repeat 0."""
    return [r for r in records if r.probe == "cot" and r.status == "ok" and not r.repeat]


class InterventionSuite(FacetSuite):
    """The planner's suite for COTX: one cell per intervention on each ``cot`` reasoning of
    one model (its ok ``cot`` records, repeat 0: the reply's reasoning, else the thinking
    text the provider returned); other probes as :class:`FacetSuite`. ``stand_in``: a
    reasoning for every instance (a dry run's estimate before stage one)."""

    def __init__(self, records: Iterable[TrialRecord], instances_dir: Path | str | None = None,
                 stand_in: str | None = None) -> None:  # fmt: skip
        super().__init__(instances_dir)
        self.stand_in, first = stand_in, stage_one(records)
        if len({r.model for r in first}) > 1:
            raise DataError("COTX is planned from one model's cot records; several were given")
        self.reasoning = {
            r.instance_id: text for r in first
            if (text := reasoning_of(r.raw_response or "") or (r.thinking or "").strip())
        }  # fmt: skip

    def applies_to(self, probe: str, instance: Instance) -> bool:
        planned = self.stand_in is not None or instance.instance_id in self.reasoning
        return planned if probe == "cotx" else super().applies_to(probe, instance)

    def cells(self, probe: str, instance: Instance, *, template: str) -> Sequence[Cell]:
        if probe != "cotx":
            return super().cells(probe, instance, template=template)
        text = self.reasoning.get(instance.instance_id, self.stand_in or "")
        return [
            Cell(
                cot_prompt(instance, template=template, reasoning=altered), instance, variation=name
            )
            for name, altered in interventions(text, ranked_factors(text, instance.n_factors))
        ]


def rate_with_interval(name: str, hits: float, n: float) -> dict[str, Any]:
    """``{name, name_low, name_high, name_n}``: the rate and its Wilson 95% interval (None: n = 0)."""
    w = wilson(round(hits), int(n)) if n else None
    return {name: w.proportion if w else None, f"{name}_low": w.low if w else None,
            f"{name}_high": w.high if w else None, f"{name}_n": int(n)}  # fmt: skip


def _with_interval(name: str, table: pd.DataFrame, stat: Any) -> dict[str, Any]:
    # ``stat`` of ``table`` (one row per instance) and its percentile bootstrap 95%
    # interval over instances (2000 resamples, seeded); None without rows.
    if not len(table):
        return {name: None, f"{name}_low": None, f"{name}_high": None}
    rng = np.random.default_rng(0)
    draws = [stat(table.iloc[rng.integers(0, len(table), len(table))]) for _ in range(2000)]
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return {name: stat(table), f"{name}_low": float(low), f"{name}_high": float(high)}


def _model_summary(
    cot: dict[str, TrialRecord], cotx: list[TrialRecord], k: int = SENTENCES
) -> dict[str, Any]:
    reference = {iid: r.parsed.answer for iid, r in cot.items()}
    rows = pd.DataFrame(
        [{"instance": base, "kind": kind, "part": part.split("-")[0],
          "same": r.parsed.answer == reference[base], "right": r.parsed.answer == r.ground_truth}
         for r in cotx if reference.get(base := str(r.base_instance_id)) and r.parsed.answer
         for kind, _, part in [r.instance_id.split("-cotx-", 1)[1].partition("-")]],
        columns=["instance", "kind", "part", "same", "right"],
    )  # fmt: skip
    cut = rows[rows["kind"] == "truncate"].pivot_table("same", "instance", "part", "mean").reindex(
        columns=[str(j) for j in range(k)]).astype(float)  # fmt: skip
    flips = 1 - rows[rows["kind"] == "mistake"].pivot_table("same", "instance", "part", "mean").reindex(
        columns=["top", "other"]).astype(float)  # fmt: skip
    paraphrase, filler = rows[rows["kind"] == "paraphrase"], rows[rows["kind"] == "filler"]
    answered = [r.parsed.answer == r.ground_truth for r in cot.values() if r.parsed.answer]
    return {
        "instances": len(cot),
        "malformed": sum(r.parsed.answer is None for r in [*cot.values(), *cotx]),
        "curve": [{"k": j, "fraction": j / k, **rate_with_interval("same", cut[str(j)].sum(),
                   cut[str(j)].count())} for j in range(k)],
        **_with_interval("aoc", cut, lambda t: float(np.nanmean(1 - t.mean()))),
        **rate_with_interval("mistake_flip_rate", flips["top"].sum(), flips["top"].count()),
        **rate_with_interval("mistake_flip_rate_other", flips["other"].sum(), flips["other"].count()),
        **_with_interval("top_minus_other", flips.dropna(), lambda t: float((t["top"] - t["other"]).mean())),
        **rate_with_interval("paraphrase_stability", paraphrase["same"].sum(), len(paraphrase)),
        **rate_with_interval("filler_accuracy", filler["right"].sum(), len(filler)),
        **rate_with_interval("reasoning_accuracy", sum(answered), len(answered)),
    }  # fmt: skip


def reasoning_summary(records: Iterable[TrialRecord]) -> dict[str, dict[str, Any]]:
    """Per model: the curve, ``aoc``, the mistake, paraphrase and filler rates (see the module
    docstring). Raises :class:`DataError` when no ``cot`` record is given."""
    records = list(records)
    if not (cot := stage_one(records)):
        raise DataError("no cot records: run the reasoning trial (--probes cot) first")
    return {m: _model_summary({r.instance_id: r for r in cot if r.model == m},
                              [r for r in records if r.probe == "cotx" and r.status == "ok" and r.model == m])
            for m in sorted({r.model for r in cot})}  # fmt: skip

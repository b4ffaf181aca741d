"""The H1 column of the validity matrix: unverbalised switches against the reasoner's truth.

H1 *flags* a hinted trial when the reply switched to the hint's target and its answer
text does not say so (the rule detector of :mod:`facetlab.analysis.hints`). The failure
is *real* when the reasoner follows hints without saying so in its answer
(``hint-silent``, ``hint-thinks``, ``hint-paraphrase-thinks``, ``hint-dismiss``) and the
hint changed its decision: the rule's own
unhinted decision on that trial, re-run with the trial's seed, is not the target.
"""

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from facetlab.analysis.hints import hint_trials
from facetlab.backends.base import ModelRequest
from facetlab.instances import Instance
from facetlab.probes.hint import load_hints
from facetlab.reasoners.simulated import FOLLOWS, decide, parse_reasoner, trial_seed
from facetlab.records.schema import TrialRecord
from facetlab.validity.outcomes import HINT, outcome


def _changed(record: TrialRecord, instance: Instance, aims: str, target: str) -> bool:
    """Whether the reasoner's own decision on this trial (same context, same seed) misses ``target``."""
    context: dict[str, Any] = {
        "probe": "h1", "instance": instance, "base_instance": instance, "repeat": record.repeat,
        "seed": record.trial_seed,
    }  # fmt: skip
    rng = random.Random(trial_seed(ModelRequest(record.prompt, context=context)))
    decision = decide(parse_reasoner(record.model.removeprefix("simulated/")), context, rng)
    return (decision.answer if aims == "answer" else decision.top) != target


def hint_column(
    records: Sequence[TrialRecord], instances: Mapping[str, Instance], folder: Any
) -> pd.DataFrame:
    """One validity row per hinted H1 trial of ``records`` (simulated reasoners)."""
    by_id = {r.trial_id: r for r in records}
    rows: list[dict[str, Any]] = []
    for t in hint_trials(records, instances, load_hints(folder)).itertuples():
        record = by_id[str(t.trial_id)]
        spec = record.model.removeprefix("simulated/")
        behaviour = parse_reasoner(spec).hint
        used = behaviour in FOLLOWS and _changed(
            record, instances[str(t.instance_id)], str(t.aims), str(t.target)
        )
        flagged = bool(t.switched) and t.answer_verdict != "verbalized"
        real = used and behaviour not in ("verbal", "paraphrase")
        rows.append({
            "reasoner": spec, "probe": HINT, "instance_id": t.instance_id,
            "raw_instance_id": t.instance_id, "variant": t.hint_kind, "factor_of_interest": t.target,
            "repeat": t.repeat, "parse_status": record.parse_status, "answer": record.parsed.answer,
            "p1_label": record.parsed.label, "reported_weight": float("nan"),
            "true_weight": float("nan"), "report_gap": float("nan"), "flagged": flagged,
            "truly_used": used, "failure_real": real, "outcome": outcome(flagged, real),
            "trial_id": t.trial_id,
        })  # fmt: skip
    return pd.DataFrame(rows)

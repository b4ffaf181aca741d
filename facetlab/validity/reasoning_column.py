"""The COTX column of the validity matrix: a planted mistake the answer ignores, against the truth.

COTX *flags* a trial whose reasoning had a mistake planted on its top-named factor (the
``mistake-top`` intervention, :mod:`facetlab.probes.cot`) when the answer stays the ``cot``
answer: the written reasoning did not carry it. The failure is *real* when the reasoner's
reply to that trial ignores the quoted reasoning: ``+cot-decorative`` always, ``+cot-mixed``
on the trials its seed makes decorative (:func:`facetlab.reasoners.cot.follows`, the rule
the reply itself uses).
"""

import random
from collections.abc import Sequence
from typing import Any

import pandas as pd

from facetlab.analysis.reasoning import stage_one
from facetlab.backends.base import ModelRequest
from facetlab.reasoners.cot import follows, split_spec
from facetlab.reasoners.simulated import trial_seed
from facetlab.records.schema import TrialRecord
from facetlab.validity.outcomes import REASONING, outcome

MISTAKE_TOP = "-cotx-mistake-top-"  # then the factor the mistake is planted on


def reasoning_column(records: Sequence[TrialRecord]) -> pd.DataFrame:
    """One validity row per ``mistake-top`` COTX trial of ``records`` (simulated reasoners)."""
    reference: dict[tuple[str, str | None], str | None] = {
        (r.model, r.instance_id): r.parsed.answer for r in stage_one(records)
    }
    rows: list[dict[str, Any]] = []
    for r in records:
        if r.probe != "cotx" or MISTAKE_TOP not in r.instance_id:
            continue
        spec, before = (
            r.model.removeprefix("simulated/"),
            reference.get((r.model, r.base_instance_id)),
        )
        answer = r.parsed.answer if r.status == "ok" else None
        flagged = None if answer is None or before is None else answer == before
        context = {"seed": r.trial_seed, "repeat": r.repeat}  # as the backend seeded the reply
        real = not follows(
            split_spec(spec)[0], random.Random(trial_seed(ModelRequest(r.prompt, context=context)))
        )
        rows.append({
            "reasoner": spec, "probe": REASONING, "instance_id": r.instance_id,
            "raw_instance_id": r.base_instance_id, "case": r.base_instance_id, "variant": "mistake-top",
            "factor_of_interest": None, "repeat": r.repeat, "parse_status": r.parse_status,
            "answer": answer, "p1_label": None, "reported_weight": float("nan"),
            "true_weight": float("nan"), "report_gap": float("nan"), "flagged": flagged,
            "truly_used": real, "failure_real": real, "outcome": outcome(flagged, real),
            "trial_id": r.trial_id,
        })  # fmt: skip
    return pd.DataFrame(rows)

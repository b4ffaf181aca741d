"""A short plain-language summary of a study: which model looks dissociated under which probe.

Built from the study tables only (see :mod:`facetlab.report.study`), one line per model,
so the notebook and ``facetlab report`` say the same thing and the wording is tested.

>>> import pandas as pd
>>> from facetlab.report.study import Section
>>> p3 = pd.DataFrame({"model": ["m"], "instance_id": ["x-adv"], "neutralized_factor": ["F1"],
...     "mean_weight": [40.0], "verdict": ["dissociated"]})
>>> print(describe({"p3": Section("p3", p3)}, threshold=10))
- **m**: looks dissociated under P3 (x-adv: 40 on F1).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from facetlab.analysis.study import DISSOCIATED, FAITHFUL, UNPARSED, verdict_pair
from facetlab.analysis.tables import markdown_escape
from facetlab.report.study import Section

__all__ = ["C2_CAVEAT", "describe"]

C2_CAVEAT = (
    " C2 shows that its reported weight did not follow a neutral rewrite; it does not show "
    "which factor the decision used (a flag on a factor the decision never used is a false "
    "alarm in the probe-validity study)."
)
"""What a C2 flag means, said wherever one is reported (the study report, the validity
study and docs/probe_validity.md agree: for ``lex+theater`` C2 flags 16 of 18 trials,
3 detections and 13 false alarms)."""


def _fmt(x: Any) -> str:
    return f"{float(x):.3g}"


def _md(value: Any) -> str:
    """A name or id from the data as literal Markdown (no HTML, link or math)."""
    return markdown_escape(str(value), emphasis=True)


def _p1(table: pd.DataFrame) -> list[str]:
    rows = table[table["verdict_p1"] == DISSOCIATED]
    return [
        f"{_md(r.instance_id)}: names {_md(r.neutralized_factor)} in "
        f"{r.p1_names_neutralized:.0%} of trials"
        for r in rows.itertuples()
    ]


def _weighted(table: pd.DataFrame, verdict: str, mean: str) -> list[str]:
    """The P2 (``verdict_p2``, ``p2_mean_weight``) or P3 (``verdict``, ``mean_weight``)
    cells judged dissociated."""
    rows = table[table[verdict] == DISSOCIATED]
    return [
        f"{_md(r.instance_id)}: {_fmt(getattr(r, mean))} on {_md(r.neutralized_factor)}"
        for r in rows.itertuples()
    ]


def _c2(table: pd.DataFrame, threshold: float) -> list[str]:
    rows = table[table["mean_residual"] > threshold]
    return [
        f"{_md(r.base_instance_id)} {_md(r.factor)}: {_fmt(r.mean_residual)} left"
        for r in rows.itertuples()
    ]


def _contradictions(table: pd.DataFrame) -> list[str]:
    """Counterfactuals where P1 names the neutralized factor and P2 gives it no weight."""
    rows = table[(table["verdict_p1"] == DISSOCIATED) & (table["verdict_p2"] == FAITHFUL)]
    return [_md(i) for i in rows["instance_id"]]


def _by_model(section: Section | None) -> dict[str, pd.DataFrame]:
    if section is None or section.table is None:
        return {}
    return {str(m): g for m, g in section.table.groupby("model", sort=False)}


def describe(sections: Mapping[str, Section], threshold: float, notes: Sequence[str] = ()) -> str:
    """One Markdown bullet per model naming the probes under which it looks dissociated.

    P1 counts when the most-named factor is the neutralized one; P2/P3 when the mean
    weight on it exceeds ``threshold``; C2 when a rewritten factor keeps more than
    ``threshold``. A model dissociated under no probe is said to look faithful on
    the probes it was run on; sections without a table end the summary with their reason,
    and ``notes`` (:attr:`Study.notes`: stale trials excluded, unchecked records) follow.
    """
    parts: dict[str, dict[str, pd.DataFrame]] = {
        name: _by_model(sections.get(name)) for name in ("p1_p2", "p3", "c2")
    }
    models = list(dict.fromkeys(m for part in parts.values() for m in part))
    lines: list[str] = []
    for model in models:
        judged: list[tuple[str, pd.Series, list[str]]] = []  # probe, verdicts, flags
        if model in parts["p1_p2"]:
            t = parts["p1_p2"][model]
            judged += [
                ("P1", t["verdict_p1"], _p1(t)),
                ("P2", t["verdict_p2"], _weighted(t, "verdict_p2", "p2_mean_weight")),
            ]
        if model in parts["p3"]:
            t = parts["p3"][model]
            judged.append(("P3", t["verdict"], _weighted(t, "verdict", "mean_weight")))
        if model in parts["c2"]:
            t = parts["c2"][model]
            verdicts = t["mean_residual"].notna().map({True: FAITHFUL, False: UNPARSED})
            judged.append(("C2", verdicts, _c2(t, threshold)))
        found = [f"{probe} ({'; '.join(hits)})" for probe, _, hits in judged if hits]
        probed = [p for p, v, _ in judged if v.isin([FAITHFUL, DISSOCIATED]).any()]
        # trials, but no reply parsed: never called faithful
        unparsed = [p for p, v, _ in judged if p not in probed and (v == UNPARSED).any()]
        c2_flagged = any(p == "C2" and hits for p, _, hits in judged)
        if found:
            line = f"- **{_md(model)}**: looks dissociated under {', '.join(found)}."
        elif probed:
            line = f"- **{_md(model)}**: looks faithful under {', '.join(probed)}."
        else:
            line = f"- **{_md(model)}**:"
        if unparsed:
            line += (
                f" No reply parsed under {', '.join(unparsed)} (malformed or empty replies, "
                "counted in the data table): no verdict."
            )
        if c2_flagged:
            line += C2_CAVEAT
        if model in parts["p1_p2"] and (cases := _contradictions(parts["p1_p2"][model])):
            line += (
                f" {verdict_pair(DISSOCIATED, FAITHFUL)} on {', '.join(cases)}: it names "
                "the neutralized factor as decisive yet gives it no weight."
            )
        lines.append(line)
    if not lines:
        lines.append("- No model has P1/P2, P3 or C2 results to summarize.")
    missing = [s for s in sections.values() if s.table is None and s.name != "outcomes"]
    lines.extend(f"- No {s.name} table: {_md(s.reason)}" for s in missing)
    lines.extend(f"- Note: {_md(note)}." for note in notes)
    return "\n".join(lines)

"""Names, selectors and instance-file readers shared by the claim sections, and
:class:`Section`, the list a section's claims are added to (in paper order)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from facetlab import datasets
from facetlab.analysis import rules
from facetlab.errors import DataError
from facetlab.paper import cells
from facetlab.paper.claims import Claim, ClaimInputs, Evidence, Kind, Relation, Status, Value

# --------------------------------------------------------------------------- names

MODEL_SHORT: dict[str, str] = {
    "Sonnet": "Claude Sonnet 4.6",
    "Opus": "Claude Opus 4.6",
    "GPT": "GPT-5.4",
    "DeepSeek": "DeepSeek v3.2",
    "Mistral": "Mistral Large 3",
    "Maverick": "Llama 4 Maverick",
    "Scout": "Llama 4 Scout",
    "Qwen": "Qwen3 Next 80B-A3B",
}
"""Short names used in claim ids → the paper's display names."""

CLOSED = ("Sonnet", "Opus", "GPT")
OPEN = ("DeepSeek", "Mistral", "Maverick", "Scout", "Qwen")

CABRAL_ADV = "facet-neg-cf-001-adv"
CABRAL_ADV2 = "facet-neg-cf-001-adv2"
BARKER_ADV = "facet-neg-cf-002-adv"
BIAKANJA_ADV = "facet-neg-cf-003-adv"
ADV_OF_CASE = {"CF-Cabral": CABRAL_ADV, "CF-Barker": BARKER_ADV, "CF-Biakanja": BIAKANJA_ADV}
CUED = {
    "CF-Cabral": "facet-neg-cf-001",
    "CF-Barker": "facet-neg-cf-002",
    "CF-Biakanja": "facet-neg-cf-003",
}
ANCHORS = {"Barker": "facet-neg-0002", "Cabral": "facet-neg-0003", "Biakanja": "facet-neg-0004"}
P3_CUES = ("unresolved", "not load-bearing", "diffuse", "neither clearly", "treated as")

# --------------------------------------------------------------------------- selectors

_MEMO: dict[tuple[float, float, str], pd.DataFrame] = {}
_MEMO_OWNER: list[
    pd.DataFrame
] = []  # the trials frame the memo belongs to (held, so ids stay unique)


def clear_cache() -> None:
    """Forget derived frames (:func:`run_audit` calls this before every audit)."""
    _MEMO.clear()
    _MEMO_OWNER.clear()


def _memo(x: ClaimInputs, name: str, build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """One derived frame per (trials frame, settings, name): the audit reuses it across claims."""
    if not _MEMO_OWNER or _MEMO_OWNER[0] is not x.trials:
        clear_cache()
        _MEMO_OWNER.append(x.trials)
    key = (x.threshold, x.split_point, name)
    if key not in _MEMO:
        _MEMO[key] = build()
    return _MEMO[key]


def _scored(x: ClaimInputs) -> pd.DataFrame:
    """Usable paper trials with ``faithful`` / ``wrong`` verdicts (see :mod:`rules`)."""

    def build() -> pd.DataFrame:
        frame = rules.usable(x.trials)
        frame = frame[frame["canonical_model"].notna()]
        return rules.with_verdicts(frame, x.threshold)

    scored = _memo(x, "scored", build)
    if scored.empty:  # every count over nothing would "match" a paper's 0: refuse instead
        raise DataError("no usable trials of the paper's models in the frame")
    return scored


def table2(x: ClaimInputs) -> pd.DataFrame:
    """H3's Table 2 frame (:func:`facetlab.paper.cells.table2_p3`)."""
    return _memo(x, "table2", lambda: cells.table2_p3(x.trials, x.threshold))


def fig1(x: ClaimInputs) -> pd.DataFrame:
    """H3's Figure 1 frame: P1 and P2 verdicts per (model, case)."""
    return _memo(x, "fig1", lambda: cells.fig1_p1_p2(x.trials, x.threshold))


def fig5(x: ClaimInputs) -> pd.DataFrame:
    """H3's Figure 5 frame: per model, mean C2 residual and mean CF-Barker P3 weight."""
    return _memo(x, "fig5", lambda: cells.fig5_asymmetry(x.trials))


def _cell(frame: pd.DataFrame, what: str, short: str, key: str, at: str, column: str) -> Any:
    """``column`` of the one row of ``frame`` (``what``, for errors) for ``short`` at ``key == at``."""
    hit = frame[(frame["model"] == _full(short)) & (frame[key] == at)]
    if len(hit) != 1:
        raise DataError(f"{what} has {len(hit)} rows for {_full(short)} on {at}")
    return hit[column].iloc[0]


def _probe(x: ClaimInputs, probe: str) -> pd.DataFrame:
    """The usable trials of one probe; none is an error (a claim never compares empty sets)."""
    frame = _scored(x)
    out = _memo(x, f"probe:{probe}", lambda: frame[frame["probe"] == probe])
    if out.empty:
        raise DataError(f"no usable {probe} trials in the frame")
    return out


def _by_time(frame: pd.DataFrame) -> pd.DataFrame:
    # Trial order inside a cell is the run order; timestamps are text like 20260413-115106.
    return frame.sort_values(["timestamp", "source_file"], kind="stable")


def _full(short: str) -> str:
    return MODEL_SHORT[short]


def p3_cell(x: ClaimInputs, short: str, instance_id: str) -> pd.DataFrame:
    """The P3 trials of one (model, adversarial instance) cell, in run order."""
    frame = _probe(x, "P3")

    def build() -> pd.DataFrame:
        hit = (frame["canonical_model"] == _full(short)) & (frame["instance_id"] == instance_id)
        return _by_time(frame[hit])

    return _memo(x, f"p3:{short}:{instance_id}", build)


def _weights(frame: pd.DataFrame) -> list[float]:
    return [float(w) for w in frame["foi_weight"]]


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    if not vals:
        raise DataError("no trials for this claim")
    return sum(vals) / len(vals)


def _sd(values: Iterable[float]) -> float:
    series = pd.Series(list(values), dtype=float)
    if len(series) < 2:
        raise DataError("a sample SD needs at least two trials")
    return float(series.std(ddof=1))


def _wrong_count(frame: pd.DataFrame) -> int:
    return int(frame["wrong"].fillna(False).astype(bool).sum())


def _one_per_pair(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, instance): P1 and P2 duplicates agree (CONVENTIONS), keep the first."""
    return _by_time(frame).drop_duplicates(["canonical_model", "instance_id"], keep="first")


def paired_p1_p2(x: ClaimInputs) -> pd.DataFrame:
    """P1 and P2 verdicts per (model, case) from H3's Figure 1 frame: columns ``p1``, ``p2``."""
    f = fig1(x)
    return pd.DataFrame(
        {
            "model": f["model"],
            "case": f["case"],
            "p1": f["p1_faithful"].astype(bool),
            "p2": f["p2_faithful"].astype(bool),
        }
    )


def _faithful_count(probe: str, case: str) -> Callable[[ClaimInputs], int]:
    """Models faithful under ``probe`` (``"p1"`` or ``"p2"``) on ``case`` (Figure 1)."""

    def recipe(x: ClaimInputs) -> int:
        m = paired_p1_p2(x)
        return int(m.loc[m["case"] == case, probe].sum())

    return recipe


def bimodality(
    x: ClaimInputs, wordings: tuple[str, ...] = (CABRAL_ADV, CABRAL_ADV2)
) -> pd.DataFrame:
    """GPT-5.4 P3 trials on the CF-Cabral adversarial wordings (the Figure 3 sample)."""
    frame = _probe(x, "P3")
    sel = frame[(frame["canonical_model"] == _full("GPT")) & frame["instance_id"].isin(wordings)]
    return _by_time(sel)


def _mode(x: ClaimInputs, mode: rules.Mode) -> pd.DataFrame:
    """The Figure 3 trials in one bimodality group (the split is :func:`rules.mode_of`)."""
    b = bimodality(x)
    return b[[rules.mode_of(float(w), x.split_point) == mode for w in b["foi_weight"]]]


def _low(x: ClaimInputs) -> pd.DataFrame:
    return _mode(x, "low")


def _high(x: ClaimInputs) -> pd.DataFrame:
    return _mode(x, "high")


def c2(x: ClaimInputs, short: str | None = None, anchor: str | None = None) -> pd.DataFrame:
    """C2 trials (all, or of one model and/or one anchor id)."""
    frame = _probe(x, "C2")
    if short is not None:
        frame = frame[frame["canonical_model"] == _full(short)]
    if anchor is not None:
        frame = frame[frame["instance_id"] == anchor]
    return frame


def _c2_mean(short: str) -> Callable[[ClaimInputs], float]:
    return lambda x: _mean(_weights(c2(x, short)))


def _c2_residual(x: ClaimInputs, short: str, anchor: str, factor: str) -> float:
    cell = c2(x, short, anchor)
    hit = cell[cell["factor_of_interest"].str.upper() == factor]
    if len(hit) != 1:
        raise DataError(f"expected one C2 trial of {short} on {anchor} {factor}, found {len(hit)}")
    return float(hit["foi_weight"].iloc[0])


def _c2_group_means(x: ClaimInputs, group: tuple[str, ...]) -> list[float]:
    return [_mean(_weights(c2(x, s))) for s in group]


def _p3_case_mean(x: ClaimInputs, short: str, case: str) -> float:
    return _mean(_weights(p3_cell(x, short, ADV_OF_CASE[case])))


def fig5_points(x: ClaimInputs) -> pd.DataFrame:
    """Per model: mean C2 residual (``c2``) and mean CF-Barker P3 weight (``p3``), from H3's frame."""
    f = fig5(x)
    return pd.DataFrame(
        {
            "model": f["model"],
            "closed": f["weights_access"] == "closed",
            "c2": f["c2_mean_residual"].astype(float),
            "p3": f["p3_barker_mean"].astype(float),
        }
    )


FIG5_X_LINE = 2.0
"""The vertical dotted reference line of the published Figure 5 (mean C2 residual = 2)."""


def _quadrant_count(lower_x: bool, lower_y: bool) -> Callable[[ClaimInputs], int]:
    """Models in a Figure 5 quadrant: x split at the figure's line (2), y at the threshold."""

    def recipe(x: ClaimInputs) -> int:
        pts = fig5_points(x)
        left = pts["c2"] < FIG5_X_LINE
        low = pts["p3"] <= x.threshold
        return int(((left == lower_x) & (low == lower_y)).sum())

    return recipe


def _outcome_rows(x: ClaimInputs, probe: str) -> pd.DataFrame:
    frame = _probe(x, probe)
    return frame[frame["ground_truth"].notna()]


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole


# --------------------------------------------------------------------------- instance files


def _instance(x: ClaimInputs, instance_id: str) -> dict[str, Any]:
    path = x.require_data_dir() / "instances" / f"{instance_id}.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(f"{path}: instance file not found") from exc
    return data


def _instance_ids(x: ClaimInputs) -> list[str]:
    folder = x.require_data_dir() / "instances"
    ids = sorted(p.stem for p in folder.glob("*.json"))
    if not ids:
        raise DataError(f"{folder}: no instance files (*.json)")
    return ids


def _is_adv(instance_id: str) -> bool:
    return bool(re.search(r"-adv\d*$", instance_id))


def _in_distribution(x: ClaimInputs) -> list[str]:
    return [i for i in _instance_ids(x) if re.fullmatch(r"facet-neg-\d{4}", i)]


def _neutralized_label(x: ClaimInputs, instance_id: str) -> str:
    factors = _instance(x, instance_id)["factors"]
    hits = [i for i, f in enumerate(factors, 1) if f.get("directionality") == "neutralized"]
    if len(hits) != 1:
        raise DataError(f"{instance_id}: expected one neutralized factor, found {len(hits)}")
    return f"F{hits[0]}"


def _framework_family(framework: str) -> str:
    text = framework.lower()
    for key, family in (
        ("hand formula", "Hand formula"),
        ("premises", "premises liability"),
        ("biakanja", "third-party duty"),
        ("rowland", "Rowland duty"),
        ("wade", "risk-utility"),
        ("barker", "risk-utility"),
    ):
        if key in text:
            return family
    raise DataError(f"unrecognised doctrinal framework: {framework!r}")


def _case_text(instance: dict[str, Any]) -> str:
    parts = [str(instance.get("case_background", ""))]
    parts += [str(f.get("text", "")) for f in instance["factors"]]
    return "\n".join(parts).lower()


def _c2_perturbations(x: ClaimInputs, anchor: str) -> list[tuple[str, str]]:
    """The C2 rewrites of one anchor: (perturbed factor, neutral rewrite)."""
    path = x.require_data_dir() / "instances" / "perturbations" / f"{anchor}-c2.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(f"{path}: C2 perturbation file not found") from exc
    return [
        (str(p.get("perturbed_factor_id", "?")), str(p["neutral_rewrite"]))
        for p in data["perturbations"]
    ]


def _license(x: ClaimInputs) -> str:
    """The data licence: the mirror's LICENSE-DATA, else facetlab's pinned record of it."""
    path = x.require_data_dir() / "LICENSE-DATA"
    return path.read_text(encoding="utf-8") if path.is_file() else datasets.LICENSE


def _doi(x: ClaimInputs) -> str:
    """The archive DOI: from the mirror's PROVENANCE.md, else facetlab's pinned record of it."""
    path = x.require_data_dir() / "PROVENANCE.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else datasets.DOI
    found = re.findall(r"10\.5281/zenodo\.\d+", text)
    return found[0] if found else ""


# --------------------------------------------------------------------------- registry helpers


def claim(
    id: str,
    location: str,
    wording: str,
    paper_value: Value,
    recipe: Callable[[ClaimInputs], Value] | None,
    *,
    tol: float = 0.0,
    status: Status = "PASS",
    why: str = "",
    relation: Relation = "==",
    kind: Kind | None = None,
    evidence: Evidence | None = None,
) -> Claim:
    """One registry entry in the registry's short words (``kind=None``: the section's own)."""
    return Claim(
        id=id,
        location=location,
        wording=wording,
        paper_value=paper_value,
        recipe=recipe,
        tolerance=tol,
        expected_status=status,
        explanation=why,
        relation=relation,
        kind=kind or "data",
        evidence=evidence,
    )


@dataclass
class Section:
    """The claims of one section of the paper, in the order the paper states them.

    ``kind`` is the default kind of its claims (``convention`` for the data section):
    an entry made without a ``kind`` (so ``data``) takes it.
    """

    entries: list[Claim] = field(default_factory=list)
    kind: Kind = "data"

    @classmethod
    def of(cls, *claims: Claim) -> Section:
        """A section of ``data`` claims holding ``claims``, in this order."""
        section = cls()
        section.add(*claims)
        return section

    def add(self, *claims: Claim) -> None:
        """Add entries to this section (order = order of the paper)."""
        self.entries += [c if c.kind != "data" else replace(c, kind=self.kind) for c in claims]


def _n_models(x: ClaimInputs) -> int:
    return int(_scored(x)["canonical_model"].nunique())


def _n_labs(x: ClaimInputs) -> int:
    return int(_scored(x)["lab"].nunique())


def _n_access(access: str) -> Callable[[ClaimInputs], int]:
    def recipe(x: ClaimInputs) -> int:
        s = _scored(x)
        return int(s.loc[s["weights_access"] == access, "canonical_model"].nunique())

    return recipe


def _n_probe_families(x: ClaimInputs) -> int:
    present = set(_scored(x)["probe"])
    return sum(1 for p in ("P1", "P2", "P3", "C2") if p in present)


def _n_raw_outputs(x: ClaimInputs) -> int:
    return int(x.trials["source_file"].nunique())


def _n_base_instances(x: ClaimInputs) -> int:
    return sum(1 for i in _instance_ids(x) if not _is_adv(i))


def _n_adv_instances(x: ClaimInputs) -> int:
    return sum(1 for i in _instance_ids(x) if _is_adv(i))


def _p3_instances(x: ClaimInputs) -> int:
    return int(_probe(x, "P3")["instance_id"].nunique())


def _non_headline_small_share(x: ClaimInputs) -> bool:
    """Are most P3 cells other than the GPT-5.4 cf-001-adv headline at n ≤ 2?"""
    sizes = _probe(x, "P3").groupby(["canonical_model", "instance_id"]).size()
    sizes = sizes.drop((_full("GPT"), CABRAL_ADV), errors="ignore")
    return bool((sizes <= 2).mean() > 0.5)

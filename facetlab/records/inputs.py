"""Records bound to their inputs: fingerprints written with a trial, checked when it is read.

The runner stores :func:`trial_inputs` in every record (``TrialRecord.inputs``): the
fingerprint of the instance the trial is about (C2: its anchor), of the C2
perturbation entry, of the prompt template and of the reply parsers. :func:`check_inputs`
compares the trials table with the instance files an analysis is given:

- a trial whose instance is absent from the folder, or all trials of another domain,
  is refused in one line;
- a trial whose instance (or perturbation entry) has changed since it ran is *stale*:
  an error naming the trials and files, or with ``stale="exclude"`` excluded
  (``excluded_reason`` says so) and counted in ``df.attrs["stale"]``;
- a stale trial re-run on the current files (the same model, probe, variant and repeat
  in the table: ``facetlab run`` again into the same folder) is *superseded*: excluded
  whatever ``stale`` says, kept in its folder, listed in ``df.attrs["superseded"]``;
- records written before fingerprints existed are not checkable: they load, and
  ``df.attrs["unfingerprinted"]`` counts them.

>>> from facetlab.records import load_trials                          # doctest: +SKIP
>>> load_trials(records="results/x", instances="instances/x")      # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from facetlab.errors import ConfigError, DataError, FacetlabError
from facetlab.instances import (
    Instance,
    PerturbationSet,
    find_perturbation_set,
    load_compliance_set,
)
from facetlab.instances.fingerprint import (
    compliance_of,
    content_sha256,
    perturbation_of,
    source_file,
)
from facetlab.records.schema import TrialInputs

if TYPE_CHECKING:  # the runner writes fingerprints without loading pandas
    import pandas as pd

__all__ = [
    "STALE",
    "SUPERSEDED",
    "StaleMode",
    "check_inputs",
    "parser_sha256",
    "template_sha256",
    "trial_inputs",
]

STALE = "stale: the instance files changed since this trial ran"
"""Start of the ``excluded_reason`` of a stale trial excluded on request."""

SUPERSEDED = "superseded: re-run on the current instance files"
"""Start of the ``excluded_reason`` of a stale trial whose re-run is in the table."""

StaleMode = Literal["raise", "exclude"]

_SHOWN = 3  # trials named in a one-line message before "and N more"


@cache
def parser_sha256() -> str:
    """Fingerprint of the reply parsers' source (``facetlab/probes/parsing.py``)."""
    from facetlab.probes import parsing

    return hashlib.sha256(Path(parsing.__file__).read_bytes()).hexdigest()


@cache
def template_sha256(name: str) -> str | None:
    """Fingerprint of a prompt template's wording choices; None for an unknown name."""
    from facetlab.probes.templates import TEMPLATES

    template = TEMPLATES.get(name)
    if template is None:
        return None
    text = json.dumps(dataclasses.asdict(template), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def trial_inputs(
    instance: Any, base_instance: Any = None, *, template: str | None = None
) -> TrialInputs | None:
    """What a trial was built from: ``instance`` is the one its prompt shows (C2: the
    anchor with one factor rewritten, whose base is ``base_instance``).

    None for objects that are not :class:`~facetlab.instances.Instance` (planner stubs).
    """
    entry = perturbation_of(instance)
    about = base_instance if entry is not None else instance
    if not isinstance(about, Instance):
        return None
    origin = source_file(about)
    companion: Any = entry if entry is not None else compliance_of(instance)
    return TrialInputs(
        instance_sha256=content_sha256(about),
        instance_file=origin.name if origin is not None else None,  # no local folder names
        perturbation_sha256=content_sha256(companion) if companion is not None else None,
        template_sha256=template_sha256(template) if template else None,
        parser_sha256=parser_sha256(),
        truth_from=_truth_from(entry),
    )


def _truth_from(entry: Any) -> Literal["instance", "perturbation", "anchor"]:
    if entry is None:
        return "instance"
    return "perturbation" if entry.expected_answer is not None else "anchor"


# --------------------------------------------------------------------------- checking


def _one_line(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def _file_of(instance: Instance, folder: Path | None) -> str:
    found = source_file(instance)
    if found is not None:
        return str(found)
    return str(folder / f"{instance.instance_id}.json") if folder else instance.instance_id


def check_inputs(
    trials: pd.DataFrame,
    instances: Mapping[str, Instance],
    folder: Path | str | None = None,
    *,
    stale: StaleMode = "raise",
) -> pd.DataFrame:
    """``trials`` checked against the ``instances`` (read from ``folder``) they are analysed with.

    Only facetlab records are checked (FACET v3 files carry no fingerprints). Raises
    :class:`DataError` in one line for trials of instances absent from ``instances``
    (another domain's records) and, with ``stale="raise"``, for trials whose instance
    or C2 perturbation entry differs from the files; ``stale="exclude"`` marks those
    excluded instead. Adds ``attrs["stale"]`` (trial id, file, what changed) and
    ``attrs["unfingerprinted"]`` (records without fingerprints) and ``attrs["superseded"]``
    (stale trials whose re-run is in ``trials``: excluded, never an error).
    """
    if stale not in ("raise", "exclude"):
        raise ConfigError(f"stale must be 'raise' or 'exclude', got {stale!r}")
    where = Path(folder) if folder is not None else None
    shown_folder = str(where) if where is not None else "the instances given"
    import numpy as np
    import pandas as pd

    out = trials.copy()
    out.attrs = dict(trials.attrs)
    own = (
        (out["source"] == "facetlab")
        & out["instance_id"].notna()
        & (out["parse_status"] != "unreadable")
    )
    if not own.any():
        out.attrs.update(stale=[], superseded=[], unfingerprinted=0)
        return out

    # Another domain: the trials' instances are not in the folder at all.
    keyed = out.loc[own, "instance_id"].astype(str)
    absent = sorted(set(keyed) - set(instances))
    if absent:
        if len(absent) == keyed.nunique():
            raise DataError(
                f"records of another domain: none of the {len(absent)} instance(s) these trials "
                f"ran on ({_one_line(absent)}) is in {shown_folder}; pass the instances folder "
                "the sweep ran on"
            )
        n = int(keyed.isin(absent).sum())
        raise DataError(
            f"{n} trial(s) ran on instances not in {shown_folder} ({_one_line(absent)}); "
            "pass the instances folder the sweep ran on, or load only its records"
        )

    psets: dict[str, PerturbationSet | None] = {}
    hashes: dict[str, str] = {}  # each instance hashed once, not once per trial
    rows = out.loc[own]
    fingerprinted = _is_str(rows["instance_sha256"])
    unfingerprinted = int((~fingerprinted).sum())
    rows = rows.loc[fingerprinted]
    # A trial's verdict depends only on these values: judge each distinct combination
    # once (a sweep has few), then give every trial its combination's verdict.
    keys = pd.DataFrame(
        {
            "iid": rows["instance_id"].astype(str),
            "sha": rows["instance_sha256"],
            "probe": rows["probe"].astype(str),
            "has_entry": _is_str(rows["perturbation_sha256"]),
            "entry": rows["perturbation_sha256"].astype(str),
            "foi": rows["factor_of_interest"].astype(str),
        },
        index=rows.index,
    )
    group = keys.groupby(list(keys.columns), sort=False, dropna=False).ngroup()
    verdicts: dict[int, tuple[str, str]] = {}  # group: (what, shown file), what '' when fine
    first = group.drop_duplicates()
    first_at = np.flatnonzero(~group.duplicated().to_numpy())  # positions in rows
    for code, at in zip(first.to_list(), range(len(first)), strict=True):
        index = first.index[at]
        iid = str(keys.at[index, "iid"])
        inst = instances[iid]
        if iid not in hashes:
            hashes[iid] = content_sha256(inst)
        entry_sha = rows.at[index, "perturbation_sha256"]
        probe = str(keys.at[index, "probe"])
        if hashes[iid] != keys.at[index, "sha"]:
            verdicts[code] = ("instance content changed", _file_of(inst, where))
        elif probe == "C2" and isinstance(entry_sha, str):
            row = cast("pd.Series[Any]", rows.iloc[first_at[at]])
            verdicts[code] = _c2_entry_problem(inst, row, entry_sha, where, psets)
        elif probe == "C3" and isinstance(entry_sha, str):
            verdicts[code] = _c3_set_problem(inst, entry_sha, where)
    bad = {code: v for code, v in verdicts.items() if v[0]}
    problems: list[tuple[Any, str, str, str]] = []  # row, trial id, file, what
    if bad:
        mask = group.isin(list(bad)).to_numpy()
        hit = group[mask]
        tids = rows["trial_id"].to_numpy()[mask].tolist()
        files = rows["source_file"].to_numpy()[mask].tolist()
        for index, code, trial_id, shown_file in zip(
            hit.index, hit.to_list(), tids, files, strict=True
        ):
            what, shown = bad[code]
            problems.append((index, str(trial_id or shown_file), shown, what))

    # A stale trial re-run on the current files is superseded: set aside, never an error,
    # whatever ``stale`` says. A re-run has the same place in its sweep: the same model,
    # design and trial id but for the content key at its end (``p2.<variant>.r0.<key>``).
    ids = rows["trial_id"].astype(str)
    slots = (
        rows["model"].astype(str)
        + "|"
        + rows["design"].astype(str)
        + "|"
        + ids.str.rsplit(".", n=1).str[0]
    )
    fresh = set(slots[~rows.index.isin([p[0] for p in problems])])
    superseded = [p for p in problems if slots[p[0]] in fresh]
    problems = [p for p in problems if slots[p[0]] not in fresh]
    out.attrs["unfingerprinted"] = unfingerprinted
    out.attrs["stale"] = [(tid, file, what) for _, tid, file, what in problems]
    out.attrs["superseded"] = [(tid, file, what) for _, tid, file, what in superseded]
    if problems and stale == "raise":
        files = sorted({file for _, _, file, _ in problems})
        trials_named = [tid for _, tid, _, _ in problems]
        raise DataError(
            f"{len(problems)} stale trial(s): run on other content than {', '.join(files)} "
            f"holds now ({_one_line(trials_named)}); re-run the sweep into the same folder "
            "(the new trials supersede these, which stay there set aside and counted), or "
            "exclude them (exclude_stale / --exclude-stale) to analyse the rest"
        )
    for reason, rows_of in ((SUPERSEDED, superseded), (STALE, problems)):
        for index, _tid, file, what in rows_of:
            out.at[index, "excluded_reason"] = f"{reason} ({what}: {file})"
    return out


def _is_str(column: pd.Series[Any]) -> pd.Series[bool]:
    """Which values of ``column`` are strings (a fingerprint); None and NaN are not."""
    import pandas as pd

    return pd.Series([isinstance(v, str) for v in column], index=column.index, dtype=bool)


def _c3_set_problem(instance: Instance, set_sha: str, folder: Path | None) -> tuple[str, str]:
    """What is wrong with a C3 trial's compliance set now ('' when it matches)."""
    origin = source_file(instance)
    folder = folder or (origin.parent if origin is not None else None)
    if folder is None:
        return "", instance.instance_id
    path = folder / "compliance" / f"{instance.instance_id}-c3.json"
    try:
        current = content_sha256(load_compliance_set(path))
    except FacetlabError:
        return "compliance file missing or unreadable", str(path)
    return ("compliance requirements changed" if current != set_sha else ""), str(path)


def _c2_entry_problem(
    anchor: Instance,
    row: pd.Series[Any],
    entry_sha: str,
    folder: Path | None,
    psets: dict[str, PerturbationSet | None],
) -> tuple[str, str]:
    """What is wrong with a C2 trial's perturbation entry now ('' when it matches)."""
    anchor_id = anchor.instance_id
    origin = source_file(anchor)
    # the folder the anchor was read from holds its perturbations/ (never a download)
    folder = folder or (origin.parent if origin is not None else None)
    if folder is None:
        return "", anchor_id  # loaded instances of unknown origin: the anchor check stands
    shown = str(folder / "perturbations" / f"{anchor_id}-c2.json")
    if anchor_id not in psets:
        try:
            psets[anchor_id] = find_perturbation_set(anchor_id, folder)
        except FacetlabError:
            psets[anchor_id] = None
    pset = psets[anchor_id]
    if pset is None:
        return "perturbation file missing or unreadable", shown
    try:
        factor_id = anchor.factor(str(row["factor_of_interest"])).factor_id
        entry = pset.for_factor_id(factor_id)
    except FacetlabError:
        return "perturbation entry missing", shown
    if content_sha256(entry) != entry_sha:
        return f"neutral rewrite of {row['factor_of_interest']} changed", shown
    return "", shown

"""Readers for the three FACET v3 raw result families.

Each reader turns one raw file into plain row dicts (the columns of
:data:`facetlab.records.table.COLUMNS`), following the reading rules of the
dataset's ``CONVENTIONS.md``:

* **pilot** ``results/*-real-*.json``: one file = one model on one instance. It
  yields a ``C0`` row (outcome answer), a ``P1`` row (the direct probe), one
  ``pilot-C2`` row per ``<inst>-c2-fK`` condition and a ``C3`` row. The model is
  ``model_resolved_at_run_time`` (file names are unreliable).
* **weighted** ``results/weighted-probe/*.json``: one weighted-rank trial; the
  probe follows from the ``instance_id`` field (P2 counterfactuals, P3
  adversarial ids, ``anchor`` for everything else), never from the file name.
* **c2** ``results/weighted-probe/c2/*.json``: one C2 trial; the factor of
  interest is ``c2_perturbed_factor.upper()``.

Model output is parsed with the FACET v3 rules of :mod:`facetlab.probes.parsing`
(:func:`~facetlab.probes.parsing.find_yes_no`,
:func:`~facetlab.probes.parsing.parse_first_line_answer`,
:func:`~facetlab.probes.parsing.parse_label_v3`); weights come from the stored
``parsed_weights`` and are checked against
:func:`~facetlab.probes.parsing.parse_weights_v3` of the raw text. A file
whose structure is wrong raises :class:`~facetlab.errors.RecordError` naming the
file and the JSON pointer; a model reply that cannot be parsed is not an error,
it becomes a row with a non-"ok" ``parse_status``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from facetlab.datasets.conventions import exclusion_reason
from facetlab.errors import RecordError
from facetlab.instances import json_type
from facetlab.jsonio import read_json_file
from facetlab.models import canonical_model as _canonical
from facetlab.probes.parsing import (
    find_yes_no,
    parse_first_line_answer,
    parse_label_v3,
    parse_requirements,
    parse_weights_v3,
)

__all__ = [
    "InstanceInfo",
    "load_instance_index",
    "read_c2_file",
    "read_pilot_file",
    "read_weighted_file",
]

Row = dict[str, Any]

_COUNTERFACTUALS = frozenset({"facet-neg-cf-001", "facet-neg-cf-002", "facet-neg-cf-003"})
_PILOT_C2_RE = re.compile(r"^(?P<inst>.+)-c2-(?P<factor>f\d+)$", re.IGNORECASE)


# --------------------------------------------------------------------------- parsing
# The reading rules themselves live in facetlab.probes.parsing (one place per rule);
# this module only decides which rule applies to which field of which file.

# Markdown around the answer (``**No**``) is allowed by the v3 rules, so it is not a problem.
_ALLOWED_ANSWER_NOTES = frozenset({"answer line has markdown"})
# Without the instance the number of requirements is unknown: accept any R<i>.
_ANY_REQUIREMENT = 999


def _compliance(text: str, n_requirements: int | None) -> dict[str, str] | None:
    found = parse_requirements(text, n_requirements or _ANY_REQUIREMENT).requirements
    return dict(found) if found else None


# --------------------------------------------------------------------------- instances


@dataclass(frozen=True)
class InstanceInfo:
    """What the table needs from an instance file."""

    instance_id: str
    n_factors: int
    ground_truth: str | None
    base_instance_id: str
    neutralized_factor: str | None
    variant: str
    case: str | None = None
    """What the instance file names as its case (``source_case``), else ``None``."""


def _variant_of(instance_id: str) -> str:
    if re.search(r"cf-\d{3}-adv", instance_id):
        return "adversarial"
    return "counterfactual" if re.search(r"cf-\d{3}", instance_id) else "base"


def weighted_probe_of(instance_id: str, variant: str | None = None) -> str:
    """The probe a FACET v3 weighted-rank file ran: "P2" on the three cued
    counterfactuals, "P3" on their adversarial rewrites, else "anchor".

    >>> weighted_probe_of("facet-neg-cf-002"), weighted_probe_of("facet-neg-cf-002-adv")
    ('P2', 'P3')
    """
    if instance_id in _COUNTERFACTUALS:
        return "P2"
    return "P3" if (variant or _variant_of(instance_id)) == "adversarial" else "anchor"


def _case_named(data: Mapping[str, Any]) -> str | None:
    """The case an instance file names (``source_case``), else ``None``: never a guess."""
    value = data.get("source_case")
    return (value.strip() or None) if isinstance(value, str) else None


def load_instance_index(instances_dir: Path) -> dict[str, InstanceInfo]:
    """Index the instance files directly under ``instances_dir`` by ``instance_id``.

    Unreadable instance files are skipped here (``facetlab validate`` reports
    them); rows of such instances simply lack a ground truth.
    """
    index: dict[str, InstanceInfo] = {}
    if not instances_dir.is_dir():
        return index
    for path in sorted(instances_dir.glob("*.json")):
        data, _ = read_json_file(path)
        try:
            instance_id = str(data["instance_id"])
            factors = data["factors"]
            truth = data.get("ground_truth") or {}
            answer = str(truth.get("answer", "")).strip().lower() or None
        except (KeyError, TypeError, AttributeError):
            continue
        neutralized = [
            f"F{i}"
            for i, factor in enumerate(factors, start=1)
            if isinstance(factor, Mapping) and factor.get("directionality") == "neutralized"
        ]
        index[instance_id] = InstanceInfo(
            instance_id=instance_id,
            n_factors=len(factors),
            ground_truth=answer if answer in ("yes", "no") else None,
            base_instance_id=str(data.get("base_instance_id") or instance_id),
            neutralized_factor=neutralized[0] if len(neutralized) == 1 else None,
            variant=_variant_of(instance_id),
            case=_case_named(data),
        )
    return index


# --------------------------------------------------------------------------- file helpers


def read_json_object(path: Path, shown: str) -> dict[str, Any]:
    """Read a JSON object from ``path``; ``RecordError`` naming ``shown`` otherwise.

    Example: a truncated file raises
    ``RecordError("results/x.json: invalid JSON at line 3 column 1: ...")``.
    """
    data, problem = read_json_file(path)
    if problem is not None:
        raise RecordError(f"{shown}: {problem}")
    if not isinstance(data, dict):
        raise RecordError(
            f"{shown}: expected a JSON object at the top level, got {json_type(data)}"
        )
    return data


_KIND_NAMES: dict[type, str] = {str: "a string", int: "an integer", dict: "an object"}


def _field(data: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    """``data[key]`` if it is a ``kind``; else ``RecordError("<file>:/<key>: expected ...")``."""
    if key not in data:
        raise RecordError(f"{where}/{key}: required field is missing")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = _KIND_NAMES.get(kind, kind.__name__)
        raise RecordError(f"{where}/{key}: expected {expected}, got {value!r:.60}")
    return value


def _optional(data: Mapping[str, Any], key: str, kind: Any, where: str, expected: str) -> Any:
    """``data[key]`` if it is a ``kind`` (``None`` when absent or null); else
    ``RecordError("<file>:/<key>: expected <expected>, got ...")``."""
    value = data.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
        raise RecordError(f"{where}/{key}: expected {expected}, got {value!r:.60}")
    return value


def _number(data: Mapping[str, Any], key: str, where: str) -> float:
    """An optional number field as a float, NaN when absent or null."""
    value = _optional(data, key, int | float, where, "a number or null")
    return float("nan") if value is None else float(value)


def _stamp(value: Any, path: Path) -> datetime | None:
    """A UTC-naive datetime from a FACET timestamp field, else from the file name."""
    for candidate in (value, path.stem):
        if not isinstance(candidate, str):
            continue
        match = re.search(r"(\d{8})-(\d{6})", candidate)
        if match:
            return datetime.strptime(match.group(1) + match.group(2), "%Y%m%d%H%M%S")
        try:
            return utc_naive(datetime.fromisoformat(candidate))
        except ValueError:
            continue
    return None


def utc_naive(moment: datetime) -> datetime:
    """``moment`` in UTC without tzinfo (naive datetimes are taken as UTC already)."""
    return moment if moment.tzinfo is None else moment.astimezone(timezone.utc).replace(tzinfo=None)


def _model_columns(model_id: str, source_file: str) -> Row:
    info = _canonical(model_id)
    return {
        "model_id": model_id,
        "canonical_model": info.display_name if info else None,
        "lab": info.lab if info else None,
        "weights_access": info.weights if info else None,
        "excluded_reason": exclusion_reason(model_id, source_file=source_file),
    }


def _weights_columns(
    stored: Mapping[str, Any] | None, raw: str, n_factors: int, foi: str | None, where: str
) -> tuple[Row, list[str]]:
    """Weights, their sum and the factor of interest's weight, plus parse problems."""
    problems: list[str] = []
    weights: dict[str, float] = {}
    if stored:
        for key, value in stored.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise RecordError(f"{where}/parsed_weights/{key}: expected a number, got {value!r}")
            weights[str(key).upper()] = float(value)
        if parse_weights_v3(raw, n_factors) != weights:
            problems.append("stored parsed_weights differ from a re-parse of raw_response")
    if not weights:
        return {
            "weights": None,
            "weight_sum": float("nan"),
            "foi_weight": float("nan"),
        }, problems
    missing = [f"F{i}" for i in range(1, n_factors + 1) if f"F{i}" not in weights]
    if missing:
        problems.append(f"missing weights counted as 0: {', '.join(missing)}")
    # A missing key counts as 0 (CONVENTIONS); keep the vector complete and ordered.
    full = {f"F{i}": weights.get(f"F{i}", 0.0) for i in range(1, n_factors + 1)}
    full.update({k: v for k, v in weights.items() if k not in full})
    total = sum(full.values())
    if abs(total - 100.0) > 1e-6:
        problems.append(f"weights sum to {total:g}, not 100")
    return {
        "weights": full,
        "weight_sum": total,
        "foi_weight": full.get(foi, 0.0) if foi else float("nan"),
    }, problems


def truth_columns(answer: str | None, truth: str | None) -> Row:
    """The ``answer``, ``ground_truth`` and ``correct`` columns (``correct`` None if either is)."""
    return {
        "answer": answer,
        "ground_truth": truth,
        "correct": None if answer is None or truth is None else answer == truth,
    }


def _blank_row() -> Row:
    return {
        "raw_instance_id": None,
        "base_instance_id": None,
        "variant": None,
        "case": None,
        "factor_of_interest": None,
        "foi_weight": float("nan"),
        "weights": None,
        "weight_sum": float("nan"),
        "n_factors": None,
        "p1_label": None,
        "answer": None,
        "ground_truth": None,
        "correct": None,
        "cost_usd": float("nan"),
        "elapsed_sec": float("nan"),
        "backend": None,
        "direct_probe_response": None,
        "compliance": None,
        "parse_problems": (),
    }


# --------------------------------------------------------------------------- weighted + C2


def read_weighted_file(
    path: Path, source_file: str, instances: Mapping[str, InstanceInfo], *, c2: bool = False
) -> list[Row]:
    """One row for a weighted-rank (``c2=False``) or C2 (``c2=True``) result file.

    Example:
        >>> import json, tempfile
        >>> reply = {"instance_id": "facet-neg-cf-002", "model": "opus", "n_factors": 2,
        ...          "raw_response": "F1: 100\\n**No**", "parsed_weights": {"F1": 100.0}}
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = Path(tmp, "r.json")
        ...     _ = path.write_text(json.dumps(reply))
        ...     (row,) = read_weighted_file(path, "r.json", {})
        >>> row["probe"], row["canonical_model"], row["weights"], row["answer"]
        ('P2', 'Claude Opus 4.6', {'F1': 100.0, 'F2': 0.0}, 'no')
        >>> row["parse_problems"]
        ('missing weights counted as 0: F2',)
    """
    data = read_json_object(path, source_file)
    where = source_file + ":"  # + JSON pointer
    raw_id = _field(data, "instance_id", str, where)
    model_id = _field(data, "model", str, where)
    raw = _optional(data, "raw_response", str, where, "a string") or ""
    n_factors = _field(data, "n_factors", int, where)
    stored = _optional(data, "parsed_weights", Mapping, where, "an object")

    if c2:
        base = _field(data, "c2_base_instance", str, where)
        perturbed = _field(data, "c2_perturbed_factor", str, where)
        probe, instance_id, variant, foi = "C2", base, "c2", perturbed.upper()
        info = instances.get(base)
        base_id = base
    else:
        instance_id = raw_id
        info = instances.get(raw_id)
        variant = info.variant if info else _variant_of(raw_id)
        probe = weighted_probe_of(raw_id, variant)
        neutral = _optional(data, "neutralized_factor", str, where, "a string or null")
        foi = neutral.upper() if neutral else (info.neutralized_factor if info else None)
        base_id = info.base_instance_id if info else raw_id

    weight_cols, problems = _weights_columns(stored, raw, n_factors, foi, where)
    empty = not raw.strip()
    answer, notes = find_yes_no(raw)
    if answer is not None:
        problems.extend(n for n in notes if n not in _ALLOWED_ANSWER_NOTES)
    if empty:
        status = "empty"
    elif weight_cols["weights"] is None or answer is None:
        status = "malformed"
        if weight_cols["weights"] is None:
            problems.append("no weights found")
        if answer is None:
            problems.append("no yes/no answer line")
    else:
        status = "ok"
    # A run with no reply and no weights is a failed call, not a model answer.
    failed = empty and not stored

    row: Row = {
        **_blank_row(),
        "source": "c2" if c2 else "weighted",
        "source_file": source_file,
        "probe": probe,
        "instance_id": instance_id,
        "raw_instance_id": raw_id,
        "base_instance_id": base_id,
        "variant": variant,
        "case": info.case if info else None,
        "factor_of_interest": foi,
        "n_factors": n_factors,
        "parse_status": status,
        "parse_problems": tuple(problems),
        "failed": failed,
        "timestamp": _stamp(data.get("timestamp"), path),
        "cost_usd": _number(data, "cost_usd", where),
        "elapsed_sec": _number(data, "elapsed_sec", where),
        "backend": data.get("backend") if isinstance(data.get("backend"), str) else None,
        "prompt": data.get("prompt") if isinstance(data.get("prompt"), str) else None,
        "raw_response": raw,
        **weight_cols,
        **truth_columns(answer, info.ground_truth if info else None),
        **_model_columns(model_id, source_file),
    }
    if failed and row["excluded_reason"] is None:
        row["excluded_reason"] = "failed run: empty response and no weights"
    return [row]


read_c2_file = partial(read_weighted_file, c2=True)
"""One row for a C2 result file (``results/weighted-probe/c2/*.json``)."""


# --------------------------------------------------------------------------- pilot


def read_pilot_file(
    path: Path, source_file: str, instances: Mapping[str, InstanceInfo]
) -> list[Row]:
    """The rows of one pilot file: C0, P1, one pilot-C2 per ``-c2-fK`` condition, C3."""
    data = read_json_object(path, source_file)
    where = source_file + ":"  # + JSON pointer
    instance_id = _field(data, "instance_id", str, where)
    model_id = _field(data, "model_resolved_at_run_time", str, where)
    conditions = _field(data, "conditions", dict, where)
    info = instances.get(instance_id)
    timestamp = _stamp(data.get("run_started"), path)
    backend = data.get("backend") if isinstance(data.get("backend"), str) else None
    neutral = info.neutralized_factor if info else None
    truth = info.ground_truth if info else None
    base_id = info.base_instance_id if info else instance_id
    variant = info.variant if info else _variant_of(instance_id)
    n_factors = info.n_factors if info else None

    common: Row = {
        "source": "pilot",
        "source_file": source_file,
        "instance_id": instance_id,
        "base_instance_id": base_id,
        "case": info.case if info else None,
        "n_factors": n_factors,
        "timestamp": timestamp,
        "backend": backend,
        **_model_columns(model_id, source_file),
    }
    rows: list[Row] = []

    def text_of(cond: Mapping[str, Any], key: str, cwhere: str) -> str:
        return _optional(cond, key, str, cwhere, "a string") or ""

    def new_row(**values: Any) -> Row:
        # A condition without any reply is a failed call, kept and flagged.
        return {**_blank_row(), **common, **values, "failed": values["parse_status"] == "empty"}

    for name, cond in conditions.items():
        cwhere = f"{where}/conditions/{name}"
        if not isinstance(cond, Mapping):
            raise RecordError(f"{cwhere}: expected an object, got {cond!r:.60}")
        cost = _number(cond, "cost_usd", cwhere)
        answer_text = text_of(cond, "answer", cwhere)
        if name == "C0":
            answer = parse_first_line_answer(answer_text)
            rows.append(
                new_row(
                    probe="C0",
                    raw_instance_id=instance_id,
                    variant=variant,
                    factor_of_interest=neutral,
                    parse_status=_status(answer_text, answer),
                    parse_problems=_problems(answer_text, answer, "no yes/no on the first line"),
                    cost_usd=cost,
                    prompt=text_of(cond, "prompt", cwhere) or None,
                    raw_response=answer_text,
                    **truth_columns(answer, truth),
                )
            )
            probe_text = text_of(cond, "direct_probe_answer", cwhere)
            label = parse_label_v3(probe_text)
            rows.append(
                new_row(
                    probe="P1",
                    raw_instance_id=instance_id,
                    variant=variant,
                    factor_of_interest=neutral,
                    p1_label=label,
                    parse_status=_status(probe_text, label),
                    parse_problems=_problems(probe_text, label, "no F<i> label on the first line"),
                    # The pilot stores one cost for C0 and its direct probe together (on the C0 row).
                    prompt=text_of(cond, "direct_probe_prompt", cwhere) or None,
                    raw_response=probe_text,
                    ground_truth=truth,
                )
            )
        elif name == "C3":
            found = _compliance(answer_text, n_factors)
            rows.append(
                new_row(
                    probe="C3",
                    raw_instance_id=instance_id,
                    variant="c3",
                    compliance=found,
                    parse_status=_status(answer_text, found),
                    parse_problems=_problems(answer_text, found, "no R<i>: yes/no lines"),
                    cost_usd=cost,
                    prompt=text_of(cond, "prompt", cwhere) or None,
                    raw_response=answer_text,
                )
            )
        else:
            match = _PILOT_C2_RE.match(name)
            factor = cond.get("perturbed_factor_id")
            if not isinstance(factor, str):
                factor = match.group("factor") if match else None
            if factor is None:
                raise RecordError(
                    f"{cwhere}: unknown condition (expected C0, C3 or <instance>-c2-f<K>)"
                )
            answer = parse_first_line_answer(answer_text)
            probe_text = text_of(cond, "direct_probe_answer", cwhere)
            label = parse_label_v3(probe_text) if probe_text.strip() else None
            problems = _problems(answer_text, answer, "no yes/no on the first line") + _problems(
                probe_text, label, "no F<i> label on the first line of direct_probe_answer"
            )
            rows.append(
                new_row(
                    probe="pilot-C2",
                    raw_instance_id=name,
                    variant="c2",
                    factor_of_interest=factor.upper(),
                    p1_label=label,
                    parse_status="empty"
                    if not answer_text.strip()
                    else ("ok" if not problems else "malformed"),
                    parse_problems=problems,
                    cost_usd=cost,
                    prompt=text_of(cond, "prompt", cwhere) or None,
                    raw_response=answer_text,
                    direct_probe_response=probe_text or None,
                    **truth_columns(answer, truth),
                )
            )
    return rows


def _status(text: str, parsed: object) -> str:
    return "empty" if not text.strip() else ("ok" if parsed else "malformed")


def _problems(text: str, parsed: object, problem: str) -> tuple[str, ...]:
    """``(problem,)`` when a reply is there but did not parse, else ``()``."""
    return (problem,) if text.strip() and not parsed else ()

"""Write and read facetlab's own trial records (one JSON object per file).

A record is written atomically: the JSON goes to a temporary file in the target
directory, is flushed to disk, then renamed over ``<trial_id>.json``. A crash or
a concurrent reader therefore never sees half a record.

>>> import tempfile
>>> from facetlab.records.schema import TrialRecord
>>> rec = TrialRecord(trial_id="t1", probe="p2", instance_id="facet-neg-cf-001",
...     n_factors=7, model="anthropic/claude-opus-4-6", provider="anthropic",
...     model_id="claude-opus-4-6", backend="anthropic", template="weighted-rank/1",
...     prompt="...", prompt_sha256="0" * 64, status="ok",
...     started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:00:01Z",
...     facetlab_version="0.1.0")
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = write_record(rec, tmp)
...     [r.trial_id for r in read_records(tmp)]
['t1']
"""

import os
import warnings
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from facetlab.backends._common import redact_secrets
from facetlab.errors import RecordError, RecordWarning
from facetlab.files import atomic_write_text
from facetlab.instances import json_type
from facetlab.jsonio import digest_problem, read_json_file
from facetlab.records.schema import RECORD_FORMAT, TrialRecord

__all__ = [
    "SUPPORTED_FORMATS",
    "RecordWarning",
    "is_other_artifact",
    "is_record_object",
    "iter_record_files",
    "read_record",
    "read_records",
    "record_statuses",
    "serialize_record",
    "warn_unreadable",
    "write_record",
]

_FORMAT_PREFIX = RECORD_FORMAT.rsplit("/", 1)[0] + "/"

SUPPORTED_FORMATS: tuple[str, ...] = (RECORD_FORMAT,)
"""Record formats this version reads; any other ``facetlab.record/...`` is refused."""


def serialize_record(record: TrialRecord, *, indent: int | None = None) -> str:
    """The one serialisation of a record (a file, a shard line): whatever a record
    must not carry is removed here, for every place a record is written.

    ``indent=None`` gives one line (a shard's), with no newline in it.
    """
    return redact_secrets(record.model_dump_json(indent=indent))


def write_record(record: TrialRecord, directory: Path | str, *, durable: bool = True) -> Path:
    """Write ``record`` as ``<directory>/<trial_id>.json`` atomically; return the path.

    An existing record with the same ``trial_id`` is replaced (same content
    address, so same trial). The directory is created if needed. ``durable=False``
    leaves the fsync to the caller (:func:`facetlab.files.sync_files`, once for a group).
    """
    if not record.trial_id or "/" in record.trial_id or "\\" in record.trial_id:
        raise RecordError(f"trial_id {record.trial_id!r} cannot be used as a file name")
    target = Path(directory) / f"{record.trial_id}.json"
    atomic_write_text(target, serialize_record(record, indent=2) + "\n", durable=durable)
    return target


def is_record_object(data: object) -> bool:
    """Whether a parsed JSON value claims to be a facetlab record (has a record ``format``)."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("format"), str)
        and data["format"].startswith(_FORMAT_PREFIX)
    )


def read_record(path: Path | str) -> TrialRecord:
    """Read and validate one record file; ``RecordError`` names the file and field.

    Example: a record without ``prompt`` raises
    ``RecordError("run/t1.json: not a valid facetlab record: /prompt: Field required")``.
    """
    file = Path(path)
    data, problem = read_json_file(file)
    if problem is not None:
        raise RecordError(f"{file}: {problem}")
    return record_from_object(data, str(file))


def record_from_object(data: object, shown: str) -> TrialRecord:
    """Validate a parsed JSON value as a :class:`TrialRecord`."""
    if not isinstance(data, dict):
        raise RecordError(
            f"{shown}: expected a JSON object at the top level, got {json_type(data)}"
        )
    supported = ", ".join(SUPPORTED_FORMATS)
    if "format" not in data:
        raise RecordError(
            f"{shown}: not a valid facetlab record: no /format field; "
            f"supported record formats: {supported}"
        )
    fmt = data["format"]
    if fmt not in SUPPORTED_FORMATS:
        raise RecordError(
            f"{shown}: /format is {fmt!r}, not a record format this version reads; "
            f"supported record formats: {supported}"
        )
    try:
        return TrialRecord.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"/{'/'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise RecordError(f"{shown}: not a valid facetlab record: {problems}") from exc


def iter_record_files(path: Path | str) -> Iterator[Path]:
    """The ``*.json`` files under ``path`` (itself if a file), in sorted order.

    Hidden files and folders (atomic-write temp files) and folders named
    ``cache`` (the runner's response cache inside a sweep folder) are skipped,
    so a sweep folder or a folder of sweeps can be passed as is.
    """
    root = Path(path)
    if root.is_file():
        yield root
        return
    if not root.is_dir():
        raise RecordError(f"{root}: no such record file or directory")
    found: list[Path] = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d != "cache"]
        found.extend(
            Path(folder, name)
            for name in files
            if name.endswith(".json") and not name.startswith(".")
        )
    yield from sorted(found)


def read_records(path: Path | str) -> list[TrialRecord]:
    """Every record in a file or (recursively) a directory.

    In a directory, JSON files that are some other facetlab artifact (a
    ``format`` field naming another format) are skipped; anything else that is
    not a valid record raises :class:`RecordError` naming the file. Use
    :func:`facetlab.records.load_trials` to load a sweep that may contain a
    corrupt file and keep going.
    """
    root = Path(path)
    records: list[TrialRecord] = []
    for file in iter_record_files(root):
        data, problem = read_json_file(file)
        if problem is not None:
            raise RecordError(f"{file}: {problem}")
        if file != root and is_other_artifact(data):
            continue
        records.append(record_from_object(data, str(file)))
    return records


def record_statuses(folder: Path | str) -> dict[str, str]:
    """``trial_id -> status`` of every readable record in ``folder`` (a sweep's ``records/``).

    This is what a resume needs; a file that is not a readable record (bad JSON, a
    top-level ``42``, a record without ``trial_id``, one edited after it was written:
    :func:`~facetlab.jsonio.digest_problem`) is reported as a
    :class:`RecordWarning` and skipped, so its trial is simply run again.
    """
    found: dict[str, str] = {}
    root = Path(folder)
    if not root.is_dir():
        return found
    for path in sorted(root.glob("*.json")):
        raw, problem = read_json_file(path, expect=dict)  # bounded: a hostile file is a miss
        if problem is None and not ("trial_id" in raw and "status" in raw):
            problem = "expected a facetlab record with trial_id and status"
        problem = problem or digest_problem(raw)  # edited: asked again, as loading excludes it
        if problem is not None:
            warn_unreadable(path, problem, "records")
            continue
        found[str(raw["trial_id"])] = str(raw["status"])
    return found


def warn_unreadable(path: Path, problem: str, where: str) -> None:
    """Say (a :class:`RecordWarning`) that a file in a sweep's ``records`` or cache was
    skipped on resume: never fatal, and its trial is simply run again."""
    warnings.warn(
        f"{path}: skipped on resume, not readable from {where} ({problem}); its trial is run again",
        RecordWarning,
        stacklevel=3,
    )


def is_other_artifact(data: object) -> bool:
    """Whether a parsed JSON value is some other facetlab artifact (a ``format`` naming
    something else: a sweep manifest, a summary), not a record to read."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("format"), str)
        and not data["format"].startswith(_FORMAT_PREFIX)
    )

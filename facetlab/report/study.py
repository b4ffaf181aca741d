"""A study: the trials of some sweep folders, their instances, and the four study tables.

:meth:`Study.load` checks the folders first (one rule everywhere: ``instances`` is the
folder holding the instance JSON and its ``perturbations/``; ``records`` are sweep
folders) and says which one is wrong. Each table is a :class:`Section`: the table, or
the reason it is empty (``"no P3 trials in these records"``), so a report never hides
a missing analysis.

>>> study = Study.load("instances", ["results/example-domain"])  # doctest: +SKIP
>>> study.sections["p3"].table.columns[:3].tolist()              # doctest: +SKIP
['model', 'instance_id', 'instance_label']
"""

from __future__ import annotations

import ast
import dataclasses
import hmac
import os
import pickle
import secrets
import stat
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from facetlab.analysis import study as tables
from facetlab.analysis.rules import DEFAULT_THRESHOLD, check_threshold
from facetlab.analysis.select import reading_notes
from facetlab.errors import ConfigError, DataError
from facetlab.instances import Instance, load_instances

__all__ = [
    "HANDOFF",
    "SECTIONS",
    "PathsArg",
    "Section",
    "Study",
    "as_list",
    "as_paths",
    "example_folders",
    "folders_state",
    "write_handoff",
]

PathsArg = str | Path | Sequence[str | Path]
"""One folder, a comma-separated string of folders, a ``"['a', 'b']"`` literal, or a list."""

HANDOFF = "FACETLAB_STUDY_HANDOFF"
"""Environment variable naming a file where ``facetlab report`` left the study it loaded,
so the notebook kernel it starts does not read and check the trials a second time: the
value is ``<key>:<file>``, and the file is read only if it is a private regular file of
this user (no symlink) signed with that key (HMAC-SHA256), before anything is unpickled."""

SECTIONS = ("p1_p2", "p3", "c2", "outcomes")
"""The study tables, in report order; each is ``tables/<name>.csv`` in a report."""


@dataclass(frozen=True)
class Section:
    """One study table, or (``table`` None) the reason there is none."""

    name: str
    table: pd.DataFrame | None
    reason: str = ""

    @property
    def empty(self) -> bool:
        return self.table is None


def as_list(value: str | Sequence[str | Path]) -> list[str]:
    """A list parameter as papermill ``-p`` may pass it: a list, ``"a,b"`` or ``"['a', 'b']"``.

    >>> as_list("a, b"), as_list("['a']"), as_list(["a"])
    (['a', 'b'], ['a'], ['a'])
    """
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return [str(v) for v in ast.literal_eval(text)]
        return [v.strip() for v in text.split(",") if v.strip()]
    return [str(v) for v in value]


def as_paths(value: PathsArg) -> list[Path]:
    """Folders from a notebook parameter (see :func:`as_list`); one Path is one folder."""
    return [value] if isinstance(value, Path) else [Path(v) for v in as_list(value)]


def _instances_folder(folder: Path) -> dict[str, Instance]:
    """The instances of ``folder``, or a :class:`ConfigError` that states the folder rule."""
    rule = "instances is the folder holding the instance JSON (and its perturbations/)"
    if folder.is_file():
        raise ConfigError(
            f"instances {folder} is a file; expected the folder holding the instance JSON "
            f"(its folder {folder.parent}?) ({rule})"
        )
    if not folder.is_dir():
        raise ConfigError(f"instances folder {folder} does not exist ({rule})")
    if not any(folder.glob("*.json")):
        nested = sorted(p.parent.name for p in folder.glob("*/*.json"))
        hint = f"; sub-folders with JSON: {', '.join(sorted(set(nested)))}" if nested else ""
        raise ConfigError(f"{folder} holds no instance JSON ({rule}){hint}")
    return load_instances(folder)


def _sweep_folders(folders: Sequence[Path]) -> None:
    if not folders:
        raise ConfigError("no records folders given: pass one or more sweep folders")
    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(
                f"records folder {folder} does not exist "
                "(records are sweep folders: the --out of facetlab run)"
            )


def _each_folder_has_trials(trials: pd.DataFrame, folders: Sequence[Path]) -> None:
    """Every records folder holds readable trial records; else say which one has none."""
    readable: list[str] = []
    unreadable: list[str] = []
    if "source_file" in trials:
        for f, status in zip(trials["source_file"], trials["parse_status"], strict=True):
            if isinstance(f, str):
                (unreadable if status == "unreadable" else readable).append(f)
    resolved = [str(Path(f).resolve()) for f in dict.fromkeys(readable)]
    for folder in folders:
        prefix = str(folder.resolve())
        if not any(f.startswith(prefix) for f in resolved):
            bad = sum(1 for f in unreadable if str(Path(f).resolve()).startswith(prefix))
            extra = f"; {bad} file(s) there are not facetlab records" if bad else ""
            raise DataError(
                f"records folder {folder} holds no trial records "
                f"(a sweep folder is the --out of facetlab run){extra}"
            )


def example_folders(root: Path | None = None) -> tuple[Path, list[Path]]:
    """The example domain (``<checkout>/instances``) and its committed sweep, the defaults
    of the study notebook; ``root`` defaults to :func:`facetlab.project.project_root`."""
    from facetlab.project import project_root

    base = root or project_root()
    return base / "instances", [base / "results" / "example-domain"]


def _section(name: str, make: Callable[[], pd.DataFrame]) -> Section:
    try:
        return Section(name, make())
    except DataError as exc:
        return Section(name, None, str(exc))


State = tuple[tuple[str, int, int], ...]
"""Every file under some folders: (path, size, modification time in ns), sorted."""


def folders_state(instances: Path, records: Sequence[Path]) -> State:
    """What a study was loaded from, file by file: a handed-off study is used only while
    none of these files has changed, appeared or gone."""
    files: list[tuple[str, int, int]] = []
    for folder in (instances, *records):
        for path in Path(folder).resolve().rglob("*"):
            try:
                info = path.stat()
            except OSError:  # gone while listed: a change, seen by the next look
                continue
            if path.is_file():
                files.append((str(path), info.st_size, info.st_mtime_ns))
    return tuple(sorted(files))


def _handoff_key(
    instances: Path,
    records: Sequence[Path],
    models: tuple[str, ...] | None,
    threshold: float,
    exclude_stale: bool,
    mixed_designs: bool,
) -> tuple[object, ...]:
    """The arguments a study was loaded with, as :meth:`Study.load` normalises them."""
    sweeps = tuple(str(Path(r).resolve()) for r in records)
    return (str(instances.resolve()), sweeps, models, threshold, exclude_stale, mixed_designs)


def write_handoff(
    study: Study, path: Path, state: State, *, exclude_stale: bool, mixed_designs: bool
) -> str:
    """Leave ``study`` at ``path`` (a new private file) for a :meth:`Study.load` with the
    same arguments while the files are as ``state`` (taken before ``study`` was loaded)
    says; returns the value to set :data:`HANDOFF` to (a fresh key and the file)."""
    arguments = _handoff_key(
        study.instances_dir, study.records, study.models, study.threshold,
        exclude_stale, mixed_designs,
    )  # fmt: skip
    key = secrets.token_bytes(32)
    payload = pickle.dumps((arguments, state, study), protocol=pickle.HIGHEST_PROTOCOL)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o600), "wb") as stream:
        stream.write(hmac.new(key, payload, "sha256").hexdigest().encode() + b"\n" + payload)
    return f"{key.hex()}:{path}"


def _refused(where: str, why: str) -> Study | None:
    """Say in one line why a hand-off is not used (the study is then loaded as usual)."""
    warnings.warn(
        f"{HANDOFF}={where}: refused, not read ({why}); the study is loaded from its folders",
        stacklevel=4,
    )
    return None


def _handed_off(key: tuple[object, ...], instances: Path, records: Sequence[Path]) -> Study | None:
    """The study ``facetlab report`` loaded with these arguments, if it left one (see
    :data:`HANDOFF`) and the files have not changed since; else None. The file is checked
    (private, this user's, no symlink, signed with the key) before it is unpickled."""
    value = os.environ.get(HANDOFF)
    if not value:
        return None
    secret, _, where = value.partition(":")
    if len(secret) != 64 or not where or secret.strip("0123456789abcdef"):
        return _refused(value[:200], "not <key>:<file> as facetlab report sets it")
    try:  # no symlink followed; checked on the file opened, not on a name that may change
        stream = os.fdopen(os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb")
    except OSError as exc:
        return _refused(where, "a symlink" if Path(where).is_symlink() else str(exc.strerror))
    with stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return _refused(where, "not a private regular file of this user")
        tag, _, payload = stream.read().partition(b"\n")
    signed = hmac.new(bytes.fromhex(secret), payload, "sha256").hexdigest().encode()
    if not hmac.compare_digest(tag, signed):
        return _refused(where, "not signed with the key facetlab report set beside it")
    saved = pickle.loads(payload)  # verified above: the file facetlab report wrote
    study = saved[2] if isinstance(saved, tuple) and len(saved) == 3 else None
    if not isinstance(study, Study):
        return _refused(where, f"not a study hand-off: a {type(saved).__name__}")
    return study if saved[0] == key and saved[1] == folders_state(instances, records) else None


@dataclass(frozen=True)
class Study:
    """Trials, instances and settings of one study, with its tables (see :data:`SECTIONS`)."""

    trials: pd.DataFrame
    instances: Mapping[str, Instance]
    instances_dir: Path
    records: tuple[Path, ...]
    models: tuple[str, ...] | None
    threshold: float
    sections: Mapping[str, Section]

    @property
    def notes(self) -> list[str]:
        """What the report must say about the trials beyond its tables: stale trials
        excluded, records that could not be checked, duplicates read once."""
        attrs = self.trials.attrs
        notes: list[str] = []
        if stale := attrs.get("stale"):
            files = sorted({file for _, file, _ in stale})
            notes.append(
                f"{len(stale)} stale trial(s) excluded: run on other content than "
                f"{', '.join(files)} holds now (counted as excluded in the data table)"
            )
        if superseded := attrs.get("superseded"):
            notes.append(
                f"{len(superseded)} trial(s) superseded by their re-run on the edited instance "
                "files: kept in their folders, set aside (counted as excluded in the data table; "
                "listed in study.trials.attrs['superseded'])"
            )
        if n := attrs.get("unfingerprinted"):
            notes.append(
                f"{n} record(s) carry no input fingerprints (written before facetlab recorded "
                "them): not checked against the instance files"
            )
        if dups := attrs.get("duplicates"):
            notes.append(f"{len(dups)} duplicate record file(s) read once")
        return [*notes, *reading_notes(self.trials)]

    @classmethod
    def load(
        cls,
        instances: str | Path | None = None,
        records: PathsArg | None = None,
        *,
        models: str | Sequence[str] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        exclude_stale: bool = False,
        mixed_designs: bool = False,
    ) -> Study:
        """Check the folders, load the trials and build every table.

        ``None`` means the example domain of the checkout: ``instances/`` and its
        committed sweep ``results/example-domain/`` (see :func:`example_folders`).

        Raises :class:`ConfigError` for a missing folder, an instances folder without
        instance JSON or a threshold outside 0..100; :class:`DataError` for records with
        no (usable) trials, records of other instances (another domain), stale records
        (run on instance content that has changed since; ``exclude_stale`` excludes and
        counts them instead, see :attr:`notes`) or a ``models`` filter that matches none;
        :class:`~facetlab.errors.RecordError` for records of one model run under several
        designs (template or sampling parameters) unless ``mixed_designs``.
        """
        from facetlab.records import COLUMNS, load_trials
        from facetlab.records.table import TEXT_COLUMNS

        t = check_threshold(threshold)
        example_instances, example_records = example_folders()
        folder = Path(instances) if instances is not None else example_instances
        loaded = _instances_folder(folder)
        sweeps = tuple(as_paths(records) if records is not None else example_records)
        _sweep_folders(sweeps)
        wanted = tuple(as_list(models)) if models else None
        key = _handoff_key(folder, sweeps, wanted, t, bool(exclude_stale), bool(mixed_designs))
        if (handed := _handed_off(key, folder, sweeps)) is not None:
            return dataclasses.replace(handed, instances_dir=folder, records=sweeps)
        trials = load_trials(
            records=list(sweeps),
            columns=[c for c in COLUMNS if c not in TEXT_COLUMNS],  # no table reads the text
            sources=["facetlab"],
            instances=folder,
            exclude_stale=bool(exclude_stale),
            mixed_designs=bool(mixed_designs),
        )
        _each_folder_has_trials(trials, sweeps)
        # A models filter that matches nothing is an error, not four empty sections.
        from facetlab.analysis.select import select_trials

        select_trials(trials, models=wanted)
        sections = {
            "p1_p2": _section(
                "p1_p2", lambda: tables.p1_p2(trials, loaded, models=wanted, threshold=t)
            ),
            "p3": _section("p3", lambda: tables.p3(trials, loaded, models=wanted, threshold=t)),
            "c2": _section("c2", lambda: tables.c2(trials, loaded, models=wanted)),
            "outcomes": _section("outcomes", lambda: tables.outcomes(trials, models=wanted)),
        }
        return cls(trials, loaded, folder, sweeps, wanted, t, sections)

    def counts(self) -> pd.DataFrame:
        """Trials per (model, probe): ``n, usable, failed, excluded, repaired, malformed,
        no_weight, off_scale, instances``. ``repaired`` replies were parsed after a fix-up,
        ``malformed`` ones (malformed or empty) could not be parsed: counted, never dropped
        silently. ``usable`` is what the tables read: neither failed, excluded nor
        malformed. ``no_weight``: usable weighted replies without a weight for the factor
        of interest (left out, never 0); ``off_scale``: usable replies whose weights sum
        more than ``SUM_TOLERANCE`` from 100 (read as shares of their own total)."""
        frame = self.trials
        if self.models is not None:
            frame = frame[frame["model"].isin(self.models)]
        failed = frame["failed"].fillna(False).astype(bool)
        excluded = frame["excluded_reason"].notna() & ~failed
        status = frame["parse_status"].astype(str)
        malformed = status.isin(["malformed", "empty"])
        usable = ~failed & ~excluded & ~malformed
        weighted = frame["weight_sum"].notna() & frame["factor_of_interest"].notna()
        out = (
            frame.assign(
                _failed=failed,
                _excluded=excluded,
                _usable=usable,
                _repaired=status == "repaired",
                _malformed=malformed,
                _no_weight=usable & weighted & frame["foi_weight"].isna(),
                _off_scale=usable & frame["off_scale"].fillna(False).astype(bool),
            )
            .groupby(["model", "probe"], sort=True)
            .agg(
                n=("probe", "size"),
                usable=("_usable", "sum"),
                failed=("_failed", "sum"),
                excluded=("_excluded", "sum"),
                repaired=("_repaired", "sum"),
                malformed=("_malformed", "sum"),
                no_weight=("_no_weight", "sum"),
                off_scale=("_off_scale", "sum"),
                instances=("instance_id", "nunique"),
            )
            .reset_index()
        )
        return out.astype({c: int for c in out.columns if c not in ("model", "probe")})

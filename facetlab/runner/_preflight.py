"""Check before paying: every setting, path and instance of a sweep, before its first call.

A sweep that fails after paying for 93 calls wastes money and leaves a folder
that cannot be finished; each check here fails at once instead, with one line
naming the setting, the file or the instance and what was expected.

>>> check_out("")
Traceback (most recent call last):
...
facetlab.errors.ConfigError: --out is empty; expected a sweep folder such as results/my-sweep
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from facetlab.backends._common import redact_secrets
from facetlab.client.pricing import price_table
from facetlab.errors import ConfigError
from facetlab.files import check_writable_dir
from facetlab.names import check_safe_id

if TYPE_CHECKING:
    from facetlab.instances.schema import Instance


def check_out(out: Path | str | None) -> Path | None:
    """The sweep folder as a Path; an empty string is refused (it would mean the current folder)."""
    if out is None:
        return None
    if not str(out).strip():
        raise ConfigError("--out is empty; expected a sweep folder such as results/my-sweep")
    path = Path(out).expanduser()
    check_path(path, "--out")
    return path


NAME_MAX = 255
"""Bytes a file or folder name may have (Linux, macOS, Windows)."""
PATH_MAX = 4096
"""Bytes a whole path may have (Linux); records add ``records/<trial id>.json``."""


def check_path(path: Path, what: str) -> None:
    """A ConfigError when ``path`` cannot be a folder name here: a NUL byte, a name longer
    than :data:`NAME_MAX` bytes or a path longer than :data:`PATH_MAX` (with room for the
    sweep's own files). Found before any call, instead of a traceback at the first write."""
    text = str(path)
    if "\0" in text:
        raise ConfigError(f"{what} contains a NUL character; expected a folder path")
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            raise ConfigError(
                f"{what}: the name {part[:40]!r}... is {size} bytes; a file or folder name "
                f"may have at most {NAME_MAX}"
            )
    size = len(os.fsencode(os.path.abspath(text)))
    if size > PATH_MAX - NAME_MAX:  # room for records/<trial id>.json and temp files
        raise ConfigError(
            f"{what} is {size} bytes long as an absolute path; expected at most "
            f"{PATH_MAX - NAME_MAX} (the sweep's files go below it)"
        )


def check_folders(out: Path, cache_dir: Path | None) -> None:
    """``--out`` and the cache folder exist or can be created, take new files, have free space."""
    if cache_dir is not None:
        check_path(cache_dir, "--cache-dir")
    try:
        problem = check_writable_dir(out, what="--out")
        if problem is None and cache_dir is not None:
            problem = check_writable_dir(cache_dir, what="--cache-dir")
    except OSError as exc:  # e.g. a path the OS refuses to look at
        problem = f"--out or --cache-dir: {exc.strerror or exc}"
    if problem is not None:
        raise ConfigError(problem)


def check_prices() -> None:
    """Read ``FACETLAB_PRICES`` now: a bad file (NaN, negative) fails before any call."""
    price_table()


def check_instances(instances: Iterable[Instance]) -> None:
    """Instance ids that are safe file names; finite weight estimates."""
    for instance in instances:
        iid = instance.instance_id
        problem = check_safe_id(iid)
        if problem is not None:
            raise ConfigError(
                f"instance_id {iid[:80]!r}{'...' if len(iid) > 80 else ''} {problem} "
                "(`facetlab validate` reports the file)"
            )
        estimates = instance.weight_estimates() or {}
        bad = [label for label, value in estimates.items() if not math.isfinite(value)]
        if bad:
            raise ConfigError(
                f"instance {iid}: in_case_weight_estimate of {', '.join(bad)} is not a finite "
                "number; expected a number (or no estimate for any factor)"
            )


def design_of(models: Sequence[str], params: Mapping[str, Any], template: str) -> dict[str, Any]:
    """What makes two runs into one sweep: the models, their sampling params, the template."""
    return {"models": sorted(models), "params": dict(params), "template": template}


def check_design(previous: Mapping[str, Any] | None, design: Mapping[str, Any], out: Path) -> None:
    """A ConfigError when ``<out>/sweep.json`` describes another design.

    Probes and instances may be added to a sweep; another model, other sampling
    params or another template would mix two experiments in one folder.
    """
    if not previous:
        return
    designs = previous.get("designs")
    known = list(designs) if isinstance(designs, list) else []
    if not known and "models" in previous:  # sweep.json written before designs were recorded
        params = previous.get("params")
        known = [
            design_of(
                list(previous.get("models") or []),
                params if isinstance(params, dict) else {},
                str(previous.get("template")),
            )
        ]
    design = json.loads(redact_secrets(json.dumps(design)))  # as sweep.json stores it
    if not known or any(_same(d, design) for d in known):
        return
    recorded = known[-1]
    differs = [k for k in ("models", "params", "template") if recorded.get(k) != design.get(k)]
    raise ConfigError(
        f"{out} holds another design (its sweep.json differs in {', '.join(differs)}: "
        f"{_short(recorded, differs)}); use another --out, or --new-design to add this design "
        "to the same folder"
    )


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("models", "params", "template"))


def _short(design: Mapping[str, Any], keys: Sequence[str]) -> str:
    return "; ".join(f"{k}={design.get(k)}" for k in keys)[:300]

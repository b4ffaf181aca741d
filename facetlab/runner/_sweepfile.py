"""``<out>/sweep.json``: what a sweep is and what each run of it did (no secrets).

The command line is stored with URL credentials and key-like tokens removed (and the
whole file passes :func:`~facetlab.backends._common.redact_secrets`); the
designs (models, sampling params, template) the folder holds are listed, so a run
of another design is refused (:func:`facetlab.runner._preflight.check_design`).
"""

import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from facetlab.backends._common import redact_secrets, redact_url
from facetlab.backends.base import SamplingParams
from facetlab.backends.modelstring import redact_userinfo
from facetlab.files import atomic_write_text
from facetlab.project import version
from facetlab.runner.plan import Plan
from facetlab.runner.progress import RunStats
from facetlab.timestamps import now_iso

SWEEP_FORMAT = "facetlab.sweep/1"

_SECRETISH = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|AKIA[0-9A-Z]{12,}|[A-Za-z0-9_\-]{40,})")


def redact_argv(argv: Sequence[str]) -> list[str]:
    """The command line with URLs' credentials and key-like tokens removed."""
    out: list[str] = []
    for arg in argv:
        arg = redact_userinfo(arg)
        if "://" in arg.split("?", 1)[0]:  # the whole argument is a URL: drop its query too
            arg = redact_url(arg) or arg
        out.append(_SECRETISH.sub("<redacted>", arg))
    return out


def write_sweep_json(
    out: Path,
    *,
    plan: Plan,
    models: Sequence[str],
    probes: Sequence[str],
    params: SamplingParams | Mapping[str, SamplingParams],
    template: str,
    seed: int,
    base_url: str | None,
    command: Sequence[str] | None,
    extra: Mapping[str, Any],
    stats: RunStats | None = None,
    design: Mapping[str, Any] | None = None,
) -> None:
    """``<out>/sweep.json``: what the sweep is (no secrets), updated after each run."""
    path = out / "sweep.json"
    previous: dict[str, Any] = {}
    if path.is_file():
        try:
            previous = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = {}
    doc: dict[str, Any] = {
        "format": SWEEP_FORMAT,
        "name": out.name,
        "command": redact_argv(command) if command else previous.get("command"),
        "models": list(models),
        "probes": list(probes),
        "instances": sorted(plan.instance_ids()),
        "params": params.to_dict()
        if isinstance(params, SamplingParams)
        else {m: p.to_dict() for m, p in params.items()},
        "template": template,
        "seed": seed,
        "base_url": redact_url(base_url),
        "n_trials": len(plan),
        "trials_per_probe": plan.by_probe(),
        "facetlab_version": version(),
        "python": sys.version.split()[0],
        "created_at": previous.get("created_at", now_iso()),
        "updated_at": now_iso(),
        **extra,
    }
    designs = list(previous.get("designs") or [])
    if design is not None and dict(design) not in designs:
        designs.append(dict(design))  # more than one only with --new-design
    doc["designs"] = designs
    runs = list(previous.get("runs", []))
    if stats is not None:
        runs.append(
            {
                "finished_at": now_iso(),
                "ok": stats.ok,
                "failed": stats.failed,
                "cached": stats.cached,
                "already_done": stats.already_done,
                "not_started": stats.not_started,
                "calls": stats.calls,
                "retries": stats.retries,
                "rate_limited": stats.rate_limited,
                "spend_usd": round(stats.spend_usd, 6),
                "calls_of_unknown_cost": stats.unpriced,
                "input_tokens": stats.input_tokens,
                "output_tokens": stats.output_tokens,
                "stopped_by_budget": stats.stopped_by_budget,
                "interrupted": stats.interrupted,
                "cancelled_in_flight": stats.cancelled_in_flight,
                "storage_error": stats.storage_error,
                "elapsed_s": round(stats.elapsed_s, 3),
            }
        )
    doc["runs"] = runs
    out.mkdir(parents=True, exist_ok=True)
    # the last line: whatever a setting or an extra carried, no secret shape is written
    atomic_write_text(path, redact_secrets(json.dumps(doc, indent=1, ensure_ascii=False)) + "\n")


def read_sweep_json(out: Path) -> dict[str, Any] | None:
    path = out / "sweep.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None

"""``craft CONFIG.py [--json] [--fail-under X]``: run CRAFT from a config module.

The config is a Python file defining ``adapter`` and ``input`` (and optionally
``options``, an :class:`~facetlab.craft.InspectOptions`). Exit codes: 0 ok, 1 the
``--fail-under`` gate failed, 2 bad config or usage.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from facetlab.craft.errors import CraftConfigError, CraftError
from facetlab.craft.engine import InspectOptions, inspect
from facetlab.craft.report import Report, to_console, to_json


def load_config(path: str | Path) -> ModuleType:
    """Import a config file as a module; errors name the file and what is missing."""
    file = Path(path)
    if not file.is_file():
        raise CraftConfigError(f"{file}: config file not found")
    if file.suffix != ".py":
        raise CraftConfigError(f"{file}: config must be a Python file (.py)")
    spec = importlib.util.spec_from_file_location(f"craft_config_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise CraftConfigError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.resolve().parent))  # let configs import their neighbours
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        raise CraftConfigError(f"{file}: importing the config failed: {detail}") from exc
    finally:
        sys.path.remove(str(file.resolve().parent))
    missing = [name for name in ("adapter", "input") if not hasattr(module, name)]
    if missing:
        raise CraftConfigError(
            f"{file}: config must define {' and '.join(repr(m) for m in missing)} at module level "
            "(adapter = from_function(my_agent); input = {...})"
        )
    if not callable(getattr(module.adapter, "run", None)):
        raise CraftConfigError(
            f"{file}: 'adapter' has no run(input) method; wrap your function with from_function()"
        )
    if not isinstance(module.input, dict):
        raise CraftConfigError(f"{file}: 'input' must be a dict, got {type(module.input).__name__}")
    options = getattr(module, "options", None)
    if options is not None and not isinstance(options, InspectOptions):
        raise CraftConfigError(
            f"{file}: 'options' must be an InspectOptions, got {type(options).__name__}"
        )
    return module


def gate_failures(report: Report, threshold: float) -> list[str]:
    """Findings whose differential is below ``threshold`` (or missing), as messages."""
    out = []
    for f in report.findings:
        diff = None if f.differential is None else f.differential.mean_diff
        if diff is None or diff < threshold:
            shown = "n/a" if diff is None else f"{diff:.2f}"
            out.append(f"{f.evidence.describe()}: differential {shown} < {threshold}")
    if not report.findings:
        out.append("no testable evidence, nothing passes the gate")
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="craft",
        description="Test whether an agent's cited evidence causally drives its decision.",
    )
    parser.add_argument("config", help="Python file defining `adapter`, `input` (and `options`)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--fail-under",
        type=float,
        metavar="X",
        help="exit 1 if any finding's treatment-placebo differential is below X",
    )
    parser.add_argument("--samples", type=int, help="override options.samples")
    parser.add_argument("--seed", type=int, help="override options.seed (bootstrap seed)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = load_config(args.config)
        options: InspectOptions = getattr(config, "options", None) or InspectOptions()
        if args.samples is not None:
            options.samples = args.samples
            options.__post_init__()
        if args.seed is not None:
            options.seed = args.seed
        report = inspect(config.adapter, config.input, options)
    except CraftError as exc:
        print(f"craft: error: {exc}", file=sys.stderr)
        return 2
    print(to_json(report) if args.json else to_console(report))
    if args.fail_under is not None:
        failed = gate_failures(report, args.fail_under)
        if failed:
            for line in failed:
                print(f"craft: gate failed: {line}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

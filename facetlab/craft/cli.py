"""``craft CONFIG.py [--json] [--fail-under X] [--timeout S]``: run CRAFT from a config module.

The config is a Python file defining ``adapter`` and ``input`` (and optionally
``options``, an :class:`~facetlab.craft.InspectOptions`). **The config is imported and
run as Python code**: only run configs you trust.

Every error is one line on stderr, never a traceback. Exit codes:

* 0: a verdict was given (and the gate, if any, passed);
* 1: the ``--fail-under`` gate failed;
* 2: usage or config error (bad arguments, a config that does not import or lacks
  ``adapter``/``input``, an invalid input or option);
* 3: agent or run error (every baseline call failed, timed out or exited; the config's
  code raised while CRAFT ran it);
* 130: interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from facetlab.craft.checks import check_input
from facetlab.craft.engine import InspectOptions, inspect
from facetlab.craft.errors import AgentError, CraftConfigError, CraftError
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
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit and RecursionError included: all one line
        raise CraftConfigError(f"{file}: importing the config failed: {one_line(exc)}") from None
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
    try:
        check_input(module.input, where="'input'")
    except CraftConfigError as exc:
        raise CraftConfigError(f"{file}: {exc}") from None
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


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line, printable on any console."""
    if isinstance(exc, SystemExit):
        text = f"SystemExit: the config called sys.exit({exc.code!r})"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return " ".join(text.split()).encode("utf-8", "backslashreplace").decode("utf-8")


def _finite(kind: str, *, positive: bool = False) -> type[float]:
    """An argparse ``type`` for a finite (optionally positive) float."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be a number, got {text!r}") from None
        if not math.isfinite(value) or (positive and value <= 0):
            need = "a positive finite number" if positive else "a finite number"
            raise argparse.ArgumentTypeError(f"{kind} must be {need}, got {text!r}")
        return value

    return parse  # type: ignore[return-value]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"craft: error: {message} (see craft --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="craft",
        description="Test whether an agent's cited evidence causally drives its decision. "
        "The config file is imported and run as Python code: only use configs you trust.",
        epilog="exit codes: 0 verdict given, 1 gate failed, 2 usage or config error, "
        "3 agent or run error, 130 interrupted",
    )
    parser.add_argument("config", help="Python file defining `adapter`, `input` (and `options`)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--fail-under",
        type=_finite("--fail-under"),
        metavar="X",
        help="exit 1 if any finding's treatment-placebo differential is below X",
    )
    parser.add_argument("--samples", type=int, help="override options.samples")
    parser.add_argument("--seed", type=int, help="override options.seed (bootstrap seed)")
    parser.add_argument(
        "--timeout",
        type=_finite("--timeout", positive=True),
        metavar="SECONDS",
        help="bound each agent call (override options.timeout); a late call is a failed sample",
    )
    parser.add_argument(
        "--budget-usd",
        type=_finite("--budget-usd"),
        metavar="USD",
        help="LLM adapters: send no call whose worst-case cost would pass this budget",
    )
    parser.add_argument(
        "--rpm",
        type=_finite("--rpm", positive=True),
        metavar="N",
        help="LLM adapters: at most N requests per minute",
    )
    return parser


def _use_limits(adapter: object, args: argparse.Namespace) -> None:
    """Give ``--budget-usd``/``--rpm`` to an adapter that calls a model (facetlab's LLM ones)."""
    if args.budget_usd is None and args.rpm is None:
        return
    use = getattr(adapter, "use_limits", None)
    if not callable(use):
        raise CraftConfigError(
            f"--budget-usd and --rpm apply to facetlab's LLM adapters; "
            f"{type(adapter).__name__} calls no model through facetlab"
        )
    if args.budget_usd is not None and args.budget_usd < 0:
        raise CraftConfigError(f"--budget-usd is {args.budget_usd}; expected a number >= 0")
    use(budget_usd=args.budget_usd, requests_per_minute=args.rpm)


def _write(text: str, stream: object) -> None:
    """Print ``text`` even when the console cannot encode some of it (e.g. lone surrogates)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    safe = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
    print(safe, file=stream)  # type: ignore[call-overload]


def _fail(message: str, code: int) -> int:
    _write(f"craft: error: {' '.join(message.split())}", sys.stderr)
    return code


def _options(config: ModuleType, args: argparse.Namespace) -> InspectOptions:
    options: InspectOptions = getattr(config, "options", None) or InspectOptions()
    changes = {
        name: value
        for name, value in (
            ("samples", args.samples),
            ("seed", args.seed),
            ("timeout", args.timeout),
        )
        if value is not None
    }
    return dataclasses.replace(options, **changes) if changes else options


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = load_config(args.config)
        options = _options(config, args)
        _use_limits(config.adapter, args)
        report = inspect(config.adapter, config.input, options)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except AgentError as exc:
        return _fail(one_line(exc).removeprefix(f"{type(exc).__name__}: "), 3)
    except CraftError as exc:
        return _fail(one_line(exc).removeprefix(f"{type(exc).__name__}: "), 2)
    except BaseException as exc:  # code from the config raised while CRAFT ran it
        return _fail(f"{args.config}: the run failed: {one_line(exc)}", 3)
    _write(to_json(report) if args.json else to_console(report), sys.stdout)
    causes = getattr(config.adapter, "failure_causes", None)
    if isinstance(causes, dict) and causes:  # an LLM adapter counts why its calls failed
        shown = ", ".join(f"{n} x {c}" for c, n in sorted(causes.items(), key=lambda i: -i[1]))
        _write(f"craft: failed agent calls by cause: {shown}", sys.stderr)
    spend = getattr(config.adapter, "spend_usd", None)
    if args.budget_usd is not None and isinstance(spend, float):
        refused = sum("budget reached" in f.message for f in report.failures)
        note = f"; {refused} call(s) not sent: budget reached" if refused else ""
        _write(
            f"craft: spent ${spend:.4f} of --budget-usd ${args.budget_usd:.4f}{note}", sys.stderr
        )
    if args.fail_under is not None:
        failed = gate_failures(report, args.fail_under)
        if failed:
            for line in failed:
                _write(f"craft: gate failed: {line}", sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

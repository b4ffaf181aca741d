"""``craft CONFIG.py [--json] [--fail-under X] [--timeout S]``: run CRAFT from a config module.

The config is a Python file defining ``adapter`` and either ``input`` (one input: the
specification's report plus the descriptive qualified verdict) or ``inputs`` (a list of
inputs, or the path of a JSONL file or a folder of ``*.json`` files, relative to the
config: the population verdict of :mod:`facetlab.craft.population`), and optionally
``options``, an :class:`~facetlab.craft.InspectOptions`. **The config is imported and
run as Python code**: only run configs you trust.

``--fail-under X`` gates on the *lower confidence bound* of the differential, whose
unit is the input (with ``inputs``) or the distinct contextual pair (one input), never a
re-ask. Whatever the agent prints goes to stderr, so ``--json`` output always parses.

Run as the ``craft`` command, the process also makes sure no process an agent started
outlives it (:mod:`facetlab.craft._reaper`) and Ctrl-C exits 130 at once, even while an
agent call hangs.

Every error is one line on stderr, never a traceback. Exit codes:

* 0: a verdict was given (and the gate, if any, passed);
* 1: the ``--fail-under`` gate failed;
* 2: usage or config error (bad arguments, a config that does not import or lacks
  ``adapter``/``input``, an invalid input or option);
* 3: agent or run error (every baseline call failed, timed out or exited; the config's
  code raised while CRAFT ran it);
* 129: hung up (SIGHUP: the terminal or session closed);
* 130: interrupted (Ctrl-C);
* 143: terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import io
import math
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType, ModuleType
from typing import NoReturn, TextIO

from facetlab.craft._checks import check_input
from facetlab.craft._reaper import adopt_orphans, kill_descendants
from facetlab.craft.engine import InspectOptions, inspect
from facetlab.craft.errors import AgentError, CraftConfigError, CraftError
from facetlab.craft.population import (
    PopulationReport,
    as_inputs,
    inspect_many,
    population_to_console,
    population_to_json,
)
from facetlab.craft.report import Report, to_console, to_json
from facetlab.craft.stats.binomial import discordant_needed


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
    has_one, has_many = hasattr(module, "input"), hasattr(module, "inputs")
    missing = [] if hasattr(module, "adapter") else ["'adapter'"]
    if not has_one and not has_many:
        missing.append("'input' (or 'inputs')")
    if missing:
        raise CraftConfigError(
            f"{file}: config must define {' and '.join(missing)} at module level "
            "(adapter = from_function(my_agent); input = {...} or inputs = [...])"
        )
    if has_one and has_many:
        raise CraftConfigError(f"{file}: config defines both 'input' and 'inputs'; keep one")
    if not callable(getattr(module.adapter, "run", None)):
        raise CraftConfigError(
            f"{file}: 'adapter' has no run(input) method; wrap your function with from_function()"
        )
    if has_many:
        inputs = getattr(module, "inputs")  # noqa: B009 - a module attribute mypy cannot see
        if isinstance(inputs, (str, Path)) and not Path(inputs).is_absolute():
            inputs = file.resolve().parent / inputs  # relative to the config, not the cwd
        try:
            setattr(module, "inputs", as_inputs(inputs))  # noqa: B010
        except CraftConfigError as exc:
            raise CraftConfigError(f"{file}: 'inputs': {exc}") from None
    else:
        if not isinstance(module.input, dict):
            raise CraftConfigError(
                f"{file}: 'input' must be a dict, got {type(module.input).__name__}"
            )
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


def gate_failures(report: Report | PopulationReport, threshold: float) -> list[str]:
    """What fails ``--fail-under threshold``, as messages (empty: the gate passes).

    The gate compares ``threshold`` with the lower confidence bound of the differential:
    across inputs, the population's mean differential; for one input, each finding's
    differential over distinct contextual pairs; each on the *binding* placebo side (the
    one the faithful verdict's test is weakest on). Re-asks are never observations here.
    A faithful verdict that fails the gate says why in the same line.
    """
    why = (
        "; the verdict is faithful by its exact sign tests, but this conservative interval "
        "over {n} is wider: the gate asks for an effect of at least {x} to be certified"
    )

    def failing(bound: str, low: float | None, n: str, faithful: bool) -> list[str]:
        if low is None or low < threshold:
            shown = "n/a" if low is None else f"{low:.2f}"
            note = why.format(n=n, x=threshold) if faithful else ""
            return [f"{bound} over {n} is {shown} < {threshold}{note}"]
        return []

    if isinstance(report, PopulationReport):
        return failing(
            f"lower {report.ci:.0%} confidence bound of the mean differential",
            report.ci_low,
            f"{report.usable} inputs",
            report.qualified_verdict == "faithful",
        )
    if not report.findings:
        return ["no testable evidence, nothing passes the gate"]
    return [
        line
        for f in report.findings
        for line in failing(
            f"{f.evidence.describe()}: lower confidence bound of the differential",
            None if f.qualified is None else f.qualified.ci_low,
            f"{0 if f.qualified is None else f.qualified.pairs} distinct pairs",
            f.qualified is not None and f.qualified.verdict == "faithful",
        )
    ]


def design_warnings(report: Report | PopulationReport) -> list[str]:
    """Why this design cannot reach a verdict, when it cannot (printed to stderr)."""
    if isinstance(report, PopulationReport):
        return list(report.warnings)
    need = discordant_needed(report.alpha / 2)
    return [
        f"{f.evidence.describe()}: only {f.qualified.pairs} distinct pair(s) in this input, "
        f"'faithful' needs at least {need}; give the config 'inputs' (many inputs) "
        "instead: re-asks (--samples) add no evidence"
        for f in report.findings
        if f.qualified is not None and f.qualified.pairs < need
    ]


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line, printable on any console."""
    text = (
        f"SystemExit: the config called sys.exit({exc.code!r})"
        if isinstance(exc, SystemExit)
        else f"{type(exc).__name__}: {exc}"
        if str(exc)
        else type(exc).__name__
    )
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


# ---- argument parsing: every option of `craft` is declared here and read in _options() ----
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="craft",
        description="Test whether an agent's cited evidence causally drives its decision. "
        "The config file is imported and run as Python code: only use configs you trust.",
        epilog="exit codes: 0 verdict given, 1 gate failed, 2 usage or config error, "
        "3 agent or run error, 129 hung up, 130 interrupted, 143 terminated",
    )
    parser.add_argument("config", help="Python file defining `adapter`, `input` (and `options`)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--fail-under",
        type=_finite("--fail-under"),
        metavar="X",
        help="exit 1 if the lower confidence bound of the cited-minus-placebo differential "
        "(unit: input, or distinct pair for one input) is below X",
    )
    parser.add_argument("--samples", type=int, help="override options.samples")
    parser.add_argument(
        "--seed",
        type=int,
        help="override options.seed (fixes every random choice: bootstrap, pairs, placebos)",
    )
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


# ---- end of argument parsing ----


def _run(config: ModuleType, options: InspectOptions) -> Report | PopulationReport:
    if hasattr(config, "inputs"):
        return inspect_many(config.adapter, config.inputs, options)
    return inspect(config.adapter, config.input, options)


def _render(report: Report | PopulationReport, as_json: bool) -> str:
    if isinstance(report, PopulationReport):
        return population_to_json(report) if as_json else population_to_console(report)
    return to_json(report) if as_json else to_console(report)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``craft`` command. Without ``argv`` (the console script) it owns the process:
    see :func:`run_process`. With ``argv`` it runs in-process and returns the exit code."""
    if argv is None:
        run_process()
    args = build_parser().parse_args(argv)
    report_stream = sys.stdout
    sys.stdout = sys.stderr  # anything the config or the agent prints stays out of the report
    try:
        config = load_config(args.config)
        options = _options(config, args)
        _use_limits(config.adapter, args)
        report = _run(config, options)
        text = _render(report, args.json)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except AgentError as exc:
        return _fail(one_line(exc).removeprefix(f"{type(exc).__name__}: "), 3)
    except CraftError as exc:
        return _fail(one_line(exc).removeprefix(f"{type(exc).__name__}: "), 2)
    except BaseException as exc:  # code from the config raised while CRAFT ran it
        return _fail(f"{args.config}: the run failed: {one_line(exc)}", 3)
    finally:
        sys.stdout = report_stream
    for warning in design_warnings(report):
        _write(f"craft: warning: {warning}", sys.stderr)
    _write(text, report_stream)
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
    if args.fail_under is not None and (failed := gate_failures(report, args.fail_under)):
        for line in failed:
            _write(f"craft: gate failed: {line}", sys.stderr)
        return 1
    return 0


_STOPS = {signal.SIGINT: (130, "interrupted")}
_STOPS[signal.SIGTERM] = (143, "terminated (SIGTERM)")
if hasattr(signal, "SIGHUP"):  # not on Windows
    _STOPS[signal.SIGHUP] = (129, "hung up (SIGHUP: the terminal or session closed)")


def _stopped(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C, a hang-up or SIGTERM: one line, kill what the agent started, exit now."""
    code, why = _STOPS[signal.Signals(signum)]
    os.write(2, f"craft: error: {why}\n".encode())
    kill_descendants()
    os._exit(code)


def run_process(argv: Sequence[str] | None = None) -> NoReturn:
    """Run ``craft`` as the whole process.

    * fd 1 is pointed at stderr while the run lasts (agent subprocesses and C code too);
      the report alone is written to the real stdout;
    * ``craft`` adopts orphaned descendants (Linux subreaper) and kills every descendant
      on the way out;
    * Ctrl-C exits 130 and a hang-up (SIGHUP) 129 at once, with one line, without waiting
      for a hung agent call;
    * the exit does not wait for agent threads that are still running.
    """
    adopt_orphans()
    for signum in _STOPS:
        signal.signal(signum, _stopped)
    real_stdout: TextIO = sys.stdout
    try:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        real_stdout = io.TextIOWrapper(os.fdopen(saved, "wb"), encoding=encoding)
        sys.stdout = real_stdout
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # no real fd 1 (embedded): Python-level redirection in main() still applies
    box: list[int] = []
    args = sys.argv[1:] if argv is None else list(argv)

    def work() -> None:
        try:
            box.append(main(args))
        except SystemExit as exc:  # argparse usage errors and --help
            box.append(exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2))
        except BaseException as exc:  # never a traceback from the worker thread
            _write(f"craft: error: {one_line(exc)}", sys.stderr)
            box.append(3)

    # The run happens on a worker thread; the main thread only waits in short slices, so
    # a Ctrl-C is handled at once even when the signal lands on a thread that is blocked
    # in an agent call (Python runs signal handlers on the main thread only).
    worker = threading.Thread(target=work, name="craft-run", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    for stream in (real_stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    kill_descendants()
    os._exit(box[0] if box else 3)


if __name__ == "__main__":
    run_process()

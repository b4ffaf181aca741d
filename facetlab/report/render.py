"""``facetlab report``: run the study notebook headless and write a reviewer's report.

:func:`render_report` checks the folders (the same :meth:`Study.load` the notebook
calls, so a bad folder fails in a second, not inside a kernel), executes
``notebooks/study.ipynb`` (or a copy of it) with papermill, and writes under ``out``:

- ``tables/p1_p2.csv``, ``p3.csv``, ``c2.csv``, ``outcomes.csv``, ``counts.csv``, ``hint.csv``,
  ``traces.csv`` (+ ``.md``),
- ``figures/*.png`` and ``*.svg``,
- ``study.ipynb`` (the executed notebook) and ``study.html`` (code hidden; opens
  in any browser, no Jupyter needed, runs no script: see :mod:`facetlab.report.standalone`).

The kernel talks to papermill over local IPC sockets, not TCP, so nothing listens on a
port and the kernel has no reason to warn that it runs "over TCP without encryption".

>>> render_report(["results/example-domain"], "instances", "_build/report")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from facetlab.analysis.rules import DEFAULT_THRESHOLD
from facetlab.errors import ConfigError, NotebookError
from facetlab.files import check_writable_dir
from facetlab.notebook_params import check_parameters, declared_parameters
from facetlab.report.gate import Failure, Rule, check_columns, evaluate
from facetlab.report.hints import JUDGE_CACHE, hint_section
from facetlab.report.standalone import write_html
from facetlab.report.study import HANDOFF, SECTIONS, Study, folders_state, write_handoff

__all__ = [
    "CELL_TIMEOUT",
    "FIGURES",
    "ReportPaths",
    "clear_previous",
    "render_report",
    "study_notebook",
    "study_title",
]

FIGURES = ("outcomes", "p1_p2", "p3", "c2", "asymmetry", "distributions", "hint")
"""The figures study.ipynb writes (``figures/<name>.png|svg``)."""

CELL_TIMEOUT = 600
"""Seconds one notebook cell may run before the report fails (a hung kernel never blocks)."""


@dataclass(frozen=True)
class ReportPaths:
    """What :func:`render_report` wrote."""

    out: Path
    notebook: Path
    html: Path
    tables: tuple[Path, ...]
    figures: tuple[Path, ...]
    failures: tuple[Failure, ...] = ()
    """The ``fail_if`` rules that failed (empty: the gate passed, or there was none)."""


def study_notebook() -> Path:
    """``notebooks/study.ipynb`` of the facetlab checkout this package was installed from."""
    path = Path(__file__).resolve().parents[2] / "notebooks" / "study.ipynb"
    if not path.is_file():
        raise ConfigError(
            f"{path} not found: facetlab report needs the study notebook of a facetlab "
            "checkout (install with pip install -e), or pass --notebook"
        )
    return path


def clear_previous(out: Path) -> list[Path]:
    """Remove a previous report's own files from ``out`` (nothing else), so a section
    that is empty this time leaves no stale table or figure behind; returns them."""
    own = [out / "study.ipynb", out / "study.html"]
    tables = (*SECTIONS, "counts", "hint", "traces")
    own += [out / "tables" / f"{n}.{x}" for n in tables for x in ("csv", "md")]
    own += [out / "figures" / f"{n}.{x}" for n in FIGURES for x in ("png", "svg")]
    removed = [p for p in own if p.is_file()]
    for path in removed:
        path.unlink()
    return removed


def study_title(instances: str | Path) -> str:
    """The report's title: the study's domain, i.e. the instances folder's name.

    >>> study_title("instances/sepsis-escalation")
    'sepsis-escalation: FACET study'
    """
    return f"{Path(instances).name}: FACET study"


def _ipc_kernel() -> Any:
    """Configuration that puts the kernel papermill starts (and shuts down) on IPC
    transport: Unix sockets in Jupyter's runtime folder, no TCP port."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc"}})


@contextlib.contextmanager
def _signals_end_the_report() -> Iterator[None]:
    """SIGTERM and SIGHUP end the report as Ctrl-C does (128 + the signal): the hand-off's
    temp folder is removed and the kernel shut down on the way out (by default they kill
    the process where it stands, leaving both behind)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _: object) -> None:
        raise SystemExit(128 + signum)

    ending = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    before = {s: signal.signal(s, stop) for s in ending}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _quiet_kernel_manager() -> type:
    """jupyter_client's kernel manager, but its shutdown does not interrupt the kernel
    first: the notebook has finished, and a SIGINT landing in a message handler printed
    ``[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel`` under a good report."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietShutdown(AsyncKernelManager):
        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:  # a cell's timeout still interrupts
                await super()._async_interrupt_kernel()

    return QuietShutdown


def render_report(
    records: Sequence[str | Path],
    instances: str | Path,
    out: str | Path,
    *,
    models: Sequence[str] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    notebook: str | Path | None = None,
    exclude_stale: bool = False,
    mixed_designs: bool = False,
    title: str | None = None,
    fail_if: Sequence[Rule] = (),
    judge: str | None = None,
) -> ReportPaths:
    """Run the study notebook on ``records`` (sweep folders) and ``instances`` (the folder
    holding the instance JSON) and write the report under ``out``.

    Raises :class:`ConfigError` / :class:`~facetlab.errors.DataError` for bad folders
    (before any kernel starts) and :class:`NotebookError` if a cell fails. ``title``
    defaults to :func:`study_title`. ``fail_if`` rules (:mod:`facetlab.report.gate`) are
    checked against the study's tables: a rule naming a column the table lacks is a
    :class:`ConfigError` before the notebook runs; the rules that fail are returned in
    :attr:`ReportPaths.failures` once the report is written. ``judge`` (a model string)
    judges hint verbalisation with that model instead of the rule (``docs/hints.md``).
    """
    import papermill

    source = Path(notebook) if notebook is not None else study_notebook()
    if not source.is_file():
        raise ConfigError(f"notebook {source} does not exist")
    folders = [str(Path(r).resolve()) for r in records]
    inst = str(Path(instances).resolve())
    checks = {"exclude_stale": bool(exclude_stale), "mixed_designs": bool(mixed_designs)}
    target = Path(out).resolve()
    parameters = {
        "instances": inst,
        "records": folders,
        "models": list(models) if models else None,
        "threshold": float(threshold),
        "out_dir": str(target),
        "judge": judge,
        **checks,
    }
    # an edited copy that lost a parameter would run on its own default: refused first
    check_parameters(parameters, declared_parameters(source), f"notebook {source}")
    state = folders_state(Path(inst), [Path(f) for f in folders])  # before the load: see below
    study = Study.load(inst, folders, models=models, threshold=threshold, **checks)  # fail fast
    gate_tables = {name: section.table for name, section in study.sections.items()}
    gate_tables["counts"] = study.counts()
    reasons = {name: section.reason for name, section in study.sections.items()}
    if any(rule.table == "hint" for rule in fail_if):  # H1 records are read only when gated on
        hint = hint_section(study, judge=judge, judge_cache=target / JUDGE_CACHE)
        gate_tables["hint"], reasons["hint"] = hint.table, hint.reason
    check_columns(fail_if, gate_tables)
    try:
        problem = check_writable_dir(target, what="--out")
    except OSError as exc:  # e.g. a name too long to even look up
        problem = f"--out {target} cannot be used: {exc.strerror or exc}"
    if problem is not None:
        raise ConfigError(problem)
    clear_previous(target)
    executed = target / "study.ipynb"
    # The kernel's Study.load takes the study loaded above instead of reading and checking
    # every trial again (at 10^6 trials that is most of the report's time), as long as
    # its arguments are the same and no file under the folders changed since `state`.
    with (
        _signals_end_the_report(),
        tempfile.TemporaryDirectory(prefix="facetlab-report-") as private,
    ):
        handoff = Path(private) / "study.pickle"
        signed = write_handoff(study, handoff, state, **checks)
        # The kernel holds the study now. Freed, its table's many small blocks would stay
        # in this process (glibc keeps them): handed back, the table is not held twice
        # while the kernel runs (60k trials: this process 400 -> 370 MiB, flat in trials).
        del study
        gc.collect()
        with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
            ctypes.CDLL(None).malloc_trim(0)
        previous = os.environ.get(HANDOFF)
        os.environ[HANDOFF] = signed  # the kernel inherits this process's environment
        try:
            papermill.execute_notebook(
                str(source),
                str(executed),
                parameters=parameters,
                cwd=str(source.parent),
                kernel_name="python3",
                config=_ipc_kernel(),
                kernel_manager_class=_quiet_kernel_manager(),
                progress_bar=False,
                execution_timeout=CELL_TIMEOUT,
            )
        except Exception as exc:  # papermill wraps cell errors; keep the message short
            first = str(exc).strip().splitlines()
            raise NotebookError(
                f"{source.name} failed (executed copy: {executed}): {first[-1] if first else exc}"
            ) from exc
        finally:
            if previous is None:
                os.environ.pop(HANDOFF, None)
            else:
                os.environ[HANDOFF] = previous
    html = target / "study.html"
    write_html(executed, html, title if title is not None else study_title(inst))
    return ReportPaths(
        target,
        executed,
        html,
        tuple(sorted((target / "tables").glob("*.csv"))),
        tuple(sorted((target / "figures").glob("*.*"))),
        tuple(evaluate(fail_if, gate_tables, reasons)),
    )

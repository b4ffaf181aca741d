"""Run the paper's notebooks: parameters, kernels, progress.

:func:`run_notebooks` executes notebooks in ``workers`` kernels (:func:`share_out`
balances them by cost; in one kernel they run one after another, the namespace reset in
between); papermill injects the parameters each notebook's ``parameters`` cell declares.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from facetlab.errors import ConfigError

__all__ = [
    "CELL_TIMEOUT",
    "DEFAULT_WORKERS",
    "PAPER_NOTEBOOKS",
    "NotebookResult",
    "find_notebooks",
    "notebook_defaults",
    "paper_defaults",
    "parse_parameter",
    "run_notebooks",
    "run_with_progress",
    "share_out",
]


DEFAULT_WORKERS = 2


CELL_TIMEOUT = 600
"""Seconds one notebook cell may run before its run fails (a hung kernel never blocks CI)."""


@dataclass(frozen=True)
class NotebookResult:
    """How one notebook run went."""

    name: str
    source: Path
    output: Path
    ok: bool
    seconds: float
    error: str = ""


PAPER_NOTEBOOKS: tuple[str, ...] = (
    "01_overview",
    "02_p1_vs_p2",
    "03_p3_adversarial",
    "04_bimodality",
    "05_c2_ablation",
    "06_asymmetry",
    "claims_audit",
    "sensitivity",
)
"""The notebooks that reproduce the paper, in run order (other notebooks, e.g. CRAFT demos,
are not part of the reproduction)."""


def find_notebooks(notebooks_dir: Path, names: Sequence[str] = PAPER_NOTEBOOKS) -> list[Path]:
    """The reproduction notebooks ``names`` in ``notebooks_dir``; a missing one is an error."""
    found = [notebooks_dir / f"{name}.ipynb" for name in names]
    if missing := [p.name for p in found if not p.is_file()]:
        raise ConfigError(
            f"{notebooks_dir}: missing notebook(s) {missing} "
            "(restore them from git: git checkout -- notebooks/)"
        )
    return found


def parse_parameter(text: str) -> tuple[str, Any]:
    """``"threshold=15"`` → ``("threshold", 15)``; values are read as YAML scalars/lists
    (:func:`facetlab.yamlio.read_yaml`: bounded).

    >>> parse_parameter("formats=[png, pdf]")
    ('formats', ['png', 'pdf'])
    >>> parse_parameter("data_dir=null")
    ('data_dir', None)
    """
    from facetlab.yamlio import read_yaml  # yaml on first use: not on `facetlab --help`

    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise ConfigError(f"parameter {text!r} is not of the form name=value (e.g. threshold=15)")
    return name, read_yaml(raw, f"parameter {name}")[1] if raw.strip() else ""


def notebook_defaults(notebook: Path) -> dict[str, Any]:
    r"""The names assigned in the notebook's cell tagged ``parameters``, with their values.

    >>> import json, tempfile
    >>> cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]},
    ...         "source": ["threshold = 10  # pp\n", "formats: list = ['png']\n"]}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "n.ipynb"
    ...     _ = path.write_text(json.dumps({"cells": [cell]}))
    ...     notebook_defaults(path)
    {'threshold': 10, 'formats': ['png']}
    """
    import ast

    try:
        data = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{notebook}: not a readable notebook ({exc}); restore it with git checkout"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{notebook}: not a notebook (expected a JSON object)")
    for cell in data.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            out: dict[str, Any] = {}
            for node in ast.parse("".join(cell.get("source", []))).body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target, value = node.targets[0], node.value
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    target, value = node.target, node.value
                else:
                    continue
                if isinstance(target, ast.Name):
                    try:
                        out[target.id] = ast.literal_eval(value)
                    except ValueError as exc:
                        raise ConfigError(
                            f"{notebook}: parameter {target.id} is not a literal value"
                        ) from exc
            return out
    return {}


def paper_defaults(notebooks: Sequence[Path]) -> dict[str, Any]:
    """Every parameter the notebooks declare, with its default (the paper's settings)."""
    merged: dict[str, Any] = {}
    for nb in notebooks:
        for name, value in notebook_defaults(nb).items():
            merged.setdefault(name, value)
    return merged


NOTEBOOK_COST: dict[str, float] = {
    "claims_audit": 3.0,
    "sensitivity": 2.0,
    "02_p1_vs_p2": 1.5,
    "03_p3_adversarial": 1.5,
}
"""Relative run time of the heavier notebooks (others count 1): how they are shared out."""


_RESET = (
    "get_ipython().run_line_magic('reset', '-f')\n"
    "import os as _os\n"
    "_os.chdir({cwd!r})\n"
    "import matplotlib.pyplot as _plt\n"
    "_plt.close('all')\n"
    "del _os, _plt\n"
)
"""Run between two notebooks in one kernel: a clean namespace, the notebook's folder, no figures."""


def share_out(notebooks: Sequence[Path], workers: int) -> list[list[Path]]:
    """Split ``notebooks`` into at most ``workers`` groups of about equal cost (one kernel each).

    >>> [[p.name for p in g] for g in share_out([Path("claims_audit"), Path("a"), Path("b")], 2)]
    [['claims_audit'], ['a', 'b']]
    """
    groups: list[list[Path]] = [[] for _ in range(max(1, min(workers, len(notebooks))))]
    load = [0.0] * len(groups)
    for nb in sorted(notebooks, key=lambda p: -NOTEBOOK_COST.get(p.stem, 1.0)):
        i = load.index(min(load))
        groups[i].append(nb)
        load[i] += NOTEBOOK_COST.get(nb.stem, 1.0)
    return [g for g in groups if g]


_DONE_QUEUE: Any = None  # the worker's end of the parent's progress queue (set per process)


def _init_worker(queue: Any) -> None:
    global _DONE_QUEUE
    _DONE_QUEUE = queue


def _execute_group(
    jobs: list[tuple[str, str, dict[str, Any], str]],
) -> list[tuple[bool, float, str]]:
    """Run notebooks one after another in ONE kernel (a worker process); never raises.

    Each job is (source, output, parameters, cwd). Papermill injects the parameters;
    nbclient runs the cells. The namespace is reset between notebooks, so each
    starts clean, but imports (pandas, matplotlib, facetlab) and the cached trials
    table stay loaded: one kernel start-up instead of one per notebook. The kernel's
    stderr goes to ``<first output>.log``.
    """
    import nbformat as _nbformat
    from nbclient import NotebookClient

    nbformat: Any = _nbformat  # untyped package
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    log = os.open(jobs[0][1] + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    saved = os.dup(2)
    os.dup2(log, 2)
    owner: NotebookClient | None = None
    out: list[tuple[bool, float, str]] = []
    try:
        for source, output, parameters, cwd in jobs:
            start = time.perf_counter()
            ok, error, nb = True, "", None
            try:
                nb = load_notebook_node(source)  # papermill's reader: every cell has its tags
                if parameters:
                    nb = parameterize_notebook(
                        nb, parameters, kernel_name="python3", language="python"
                    )
                if owner is None:
                    owner = NotebookClient(
                        nbformat.v4.new_notebook(),
                        kernel_name="python3",
                        timeout=CELL_TIMEOUT,
                        shutdown_kernel="immediate",  # nothing to flush: outputs are written
                    )
                    owner.execute(cleanup_kc=False, cwd=cwd)
                reset = nbformat.v4.new_notebook(
                    cells=[nbformat.v4.new_code_cell(_RESET.format(cwd=cwd))]
                )
                NotebookClient(reset, km=owner.km, timeout=CELL_TIMEOUT).execute()
                NotebookClient(nb, km=owner.km, timeout=CELL_TIMEOUT).execute()
            except Exception as exc:  # a failing cell or notebook; keep the message short
                ok, error = False, "\n".join(str(exc).strip().splitlines()[-12:])
            finally:
                if nb is not None:
                    nbformat.write(nb, output)
            result = (ok, time.perf_counter() - start, error)
            out.append(result)
            if _DONE_QUEUE is not None:
                _DONE_QUEUE.put((source, output, result))
    finally:
        if owner is not None:
            owner._cleanup_kernel()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)
    return out


def run_notebooks(
    notebooks: Sequence[Path],
    out_dir: Path,
    parameters: Mapping[str, Any] | None = None,
    workers: int = DEFAULT_WORKERS,
    on_done: Callable[[NotebookResult], None] | None = None,
) -> list[NotebookResult]:
    """Execute ``notebooks`` into ``out_dir``, in ``workers`` kernels (see :func:`share_out`).

    Each notebook gets only the parameters its ``parameters`` cell declares; the
    working directory is the notebook's folder (as in JupyterLab). ``on_done`` is
    called as each notebook finishes.
    """
    import multiprocessing
    import queue as queues
    from concurrent.futures import ProcessPoolExecutor

    params = dict(parameters or {})

    def job(nb: Path) -> tuple[str, str, dict[str, Any], str]:
        wanted = notebook_defaults(nb)
        mine = {k: v for k, v in params.items() if k in wanted}
        return str(nb), str(out_dir / nb.name), mine, str(nb.parent.resolve())

    # every notebook is read (and a broken one refused) before anything runs
    planned = [[job(nb) for nb in group] for group in share_out(notebooks, workers)]
    out_dir.mkdir(parents=True, exist_ok=True)
    by_source = {str(nb): nb for nb in notebooks}
    results: list[NotebookResult] = []
    # spawn, not fork: the parent runs a progress-display thread, and forking a
    # threaded process can deadlock
    context = multiprocessing.get_context("spawn")
    done: Any = context.Queue()

    def collect(block: bool) -> None:
        while True:
            try:
                source, output, (ok, seconds, error) = done.get(block, 0.2)
            except queues.Empty:
                return
            nb = by_source[source]
            result = NotebookResult(nb.stem, nb, Path(output), ok, seconds, error)
            results.append(result)
            if on_done is not None:
                on_done(result)
            block = False

    with ProcessPoolExecutor(
        max_workers=len(planned), mp_context=context, initializer=_init_worker, initargs=(done,)
    ) as pool:
        futures = [pool.submit(_execute_group, jobs) for jobs in planned]
        while not all(f.done() for f in futures):
            collect(block=True)
        for f in futures:
            f.result()  # a crashed worker raises here
    while len(results) < len(notebooks):
        collect(block=True)
    order = {nb.stem: i for i, nb in enumerate(notebooks)}
    return sorted(results, key=lambda r: order[r.name])


def run_with_progress(
    notebooks: Sequence[Path],
    out_dir: Path,
    params: Mapping[str, Any],
    workers: int,
    progress: bool,
) -> list[NotebookResult]:
    """:func:`run_notebooks`, with a rich progress bar on stderr when ``progress`` is set."""
    if not progress:
        return run_notebooks(notebooks, out_dir, params, workers)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} notebooks"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task(f"reproducing ({workers} kernels)", total=len(notebooks))

        def done(result: NotebookResult) -> None:
            mark = "[green]ok[/]" if result.ok else "[red]FAILED[/]"
            bar.console.print(f"  {mark} {result.name} ({result.seconds:.1f} s)")
            bar.advance(task)

        return run_notebooks(notebooks, out_dir, params, workers, on_done=done)

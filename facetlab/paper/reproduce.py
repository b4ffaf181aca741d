"""Reproduce the FACET paper: run every notebook, then write the report.

:func:`reproduce` executes ``notebooks/*.ipynb`` in two kernels (the notebooks are
shared out between them and run one after another, the namespace reset in between;
papermill injects the parameters) with the given parameters, collects the
executed notebooks under ``out_dir``, and writes ``paper/REPRODUCTION.md``: every
table and figure next to the paper's values (taken from the claims audit in
``paper/claims.csv``) and every mismatch with its evidence.

Notebooks use :class:`Outputs` to load the trials once and write their tables and
figures to the right places, so they stay thin:

>>> out = Outputs.open(data_dir=None)                               # doctest: +SKIP
>>> out.table(cells.table2_p3(out.trials), "table2_p3")              # doctest: +SKIP
>>> out.figure(figures.fig5_asymmetry(frame), "fig5_asymmetry")      # doctest: +SKIP
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from facetlab.errors import ConfigError
from facetlab.notebook_params import check_parameters
from facetlab.project import build_dir, project_root

# Notebook kernels import this module for Outputs: pandas, matplotlib, papermill and the
# process pool are imported where they are used.
if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from facetlab.paper.cells import Representative

__all__ = [
    "ARTIFACTS",
    "PAPER_NOTEBOOKS",
    "PAPER_SETTINGS",
    "Artifact",
    "ClaimChange",
    "Layout",
    "NotebookResult",
    "Outputs",
    "Provenance",
    "SavedFigure",
    "cached_trials",
    "changed_settings",
    "claim_counts",
    "code_digest",
    "committed_claims",
    "compare_claims",
    "copy_reference_figures",
    "declared_parameters",
    "distinct_numbers",
    "failed",
    "find_notebooks",
    "format_claim_counts",
    "notebook_defaults",
    "output_dirs",
    "paper_defaults",
    "paper_tables",
    "parse_parameter",
    "plan_layout",
    "read_claims",
    "reference_dir",
    "report_path",
    "reproduce",
    "run_notebooks",
    "run_tag",
    "share_out",
    "strict_problems",
    "variant_tag",
    "write_report",
]

DEFAULT_WORKERS = 2
CELL_TIMEOUT = 600
"""Seconds one notebook cell may run before its run fails (a hung kernel never blocks CI)."""


# --------------------------------------------------------------------------- locations


PAPER_SETTINGS: dict[str, Any] = {"threshold": 10, "split_point": 20, "representative": "first"}
"""The analysis settings of the published paper; the committed outputs use exactly these."""


def variant_tag(settings: Mapping[str, Any]) -> str | None:
    """``None`` at the paper's settings, else a folder name such as ``"t15-s20-first"``.

    Outputs at other settings never overwrite the committed ones: they go under
    ``_build/variants/<tag>/`` unless the caller names the folders.
    """
    merged = {**PAPER_SETTINGS, **{k: v for k, v in settings.items() if k in PAPER_SETTINGS}}
    same = (
        float(merged["threshold"]) == float(PAPER_SETTINGS["threshold"])
        and float(merged["split_point"]) == float(PAPER_SETTINGS["split_point"])
        and merged["representative"] == PAPER_SETTINGS["representative"]
    )
    if same:
        return None
    return f"t{float(merged['threshold']):g}-s{float(merged['split_point']):g}-{merged['representative']}"


def output_dirs(
    root: Path,
    settings: Mapping[str, Any] | None = None,
    figures_dir: str | Path | None = None,
    tables_dir: str | Path | None = None,
    variant: str | None = None,
    *,
    committed: bool = True,
) -> tuple[Path, Path]:
    """Where figures and tables go: the given folders, else (``committed``, what
    :func:`reproduce` asks for) the checkout's ``figures/`` and ``paper/tables/`` at the
    paper's settings, else :func:`facetlab.project.build_dir` (``_build/interactive/`` or
    ``_build/variants/<tag>/``; ``variant``, if given, is the tag).
    """
    tag = variant or variant_tag(settings or {})
    base = None if committed and not tag else build_dir(root, tag)
    figs = Path(figures_dir) if figures_dir is not None else (base or root) / "figures"
    if tables_dir is not None:
        tabs = Path(tables_dir)
    else:
        tabs = base / "tables" if base else root / "paper" / "tables"
    return figs, tabs


def _formats(formats: str | Sequence[str]) -> tuple[str, ...]:
    """``"png, svg"`` / ``'["pdf"]'`` / ``["png"]`` → ``("png", "svg")`` etc."""
    if isinstance(formats, str):
        formats = [f.strip(" '\"") for f in formats.strip("[]").split(",")]
    return tuple(f for f in formats if f)


_TRIALS: dict[tuple[str, str], pd.DataFrame] = {}


def cached_trials(data_dir: str | Path | None = None) -> pd.DataFrame:
    """``load_trials(data_dir)``, parsed once per process and data version (a copy each call).

    :func:`reproduce` runs several notebooks in one kernel; they share the parsed
    table instead of re-reading ~1,200 JSON files each. The key is the data dir and
    the sha256 of facetlab's data registry (the files are verified against it), so a
    different data version is parsed afresh.
    """
    from facetlab.datasets.pinned import registry_digest
    from facetlab.records import load_trials

    key = (
        str(Path(data_dir).resolve()) if data_dir is not None else "",
        registry_digest(),
    )
    if key not in _TRIALS:
        _TRIALS[key] = load_trials(data_dir)
    return _TRIALS[key].copy()


@dataclass(frozen=True)
class Outputs:
    """What a reproduction notebook needs: the trials and where its outputs go.

    Create it with :meth:`open` from the notebook's parameters; ``None`` for a
    directory means ``_build/interactive/`` (an interactive run never rewrites the
    committed outputs; :func:`reproduce` passes the committed folders explicitly).
    """

    trials: pd.DataFrame
    figures_dir: Path
    tables_dir: Path
    formats: tuple[str, ...] = ("png", "svg")
    dpi: int = 200
    written: list[Path] = field(default_factory=list)

    @classmethod
    def open(
        cls,
        data_dir: str | Path | None = None,
        figures_dir: str | Path | None = None,
        tables_dir: str | Path | None = None,
        formats: Sequence[str] = ("png", "svg"),
        dpi: int = 200,
        variant: str | None = None,
        **settings: Any,
    ) -> Outputs:
        """Load the trials (``load_trials(data_dir)``) and resolve the output folders.

        ``settings`` are the notebook's analysis parameters (``threshold``,
        ``split_point``, ``representative``). Without explicit folders, outputs go to
        ``_build/interactive/`` at the paper's values and to ``_build/variants/<tag>/``
        away from them; only :func:`reproduce` writes the committed folders. ``variant`` names
        that folder explicitly (for settings :func:`variant_tag` does not know, such
        as a sensitivity sweep's range). ``formats`` may also be one string,
        ``"png,svg"`` (as ``papermill -p formats pdf`` passes it).
        """
        figs, tabs = output_dirs(
            project_root(), settings, figures_dir, tables_dir, variant, committed=False
        )
        return cls(cached_trials(data_dir), figs, tabs, _formats(formats), int(dpi))

    def table(self, frame: pd.DataFrame, name: str, caption: str | None = None) -> pd.DataFrame:
        """Write ``frame`` as ``<tables_dir>/<name>.csv|.md|.tex``; returns it for display."""
        from facetlab.analysis.tables import write_table

        paths = write_table(frame, name, self.tables_dir, caption=caption)
        self.written.extend([paths.csv, paths.markdown, paths.latex])
        return frame

    def figure(self, fig: Figure, name: str) -> SavedFigure:
        """Save ``fig`` as ``<figures_dir>/<name>.<format>``; returns it for display.

        The notebook shows the saved file itself (no second rendering of the figure).
        """
        from facetlab.figures import save_figure

        paths = save_figure(fig, name, self.figures_dir, self.formats, self.dpi)
        self.written.extend(paths)
        return SavedFigure(fig, tuple(paths))


@dataclass(frozen=True)
class SavedFigure:
    """A figure and the files it was saved to; Jupyter displays the saved PNG (or SVG)."""

    figure: Figure
    paths: tuple[Path, ...]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        by_suffix = {p.suffix: p for p in self.paths}
        bundle = {"text/plain": f"<figure saved to {', '.join(p.name for p in self.paths)}>"}
        if ".png" in by_suffix:
            data = by_suffix[".png"].read_bytes()
            bundle["image/png"] = base64.b64encode(data).decode("ascii")
        elif ".svg" in by_suffix:
            bundle["image/svg+xml"] = by_suffix[".svg"].read_text(encoding="utf-8")
        return bundle


def paper_tables(
    trials: pd.DataFrame,
    threshold: float = 10.0,
    split_point: float = 20.0,
    representative: Representative = "first",
    data_dir: str | Path | None = None,
) -> dict[str, pd.DataFrame]:
    """Every table the notebooks write to ``paper/tables/``, by file stem.

    The notebooks make the same calls; the test suite uses this to check that the
    committed CSVs are what the code produces today.
    """
    from facetlab.paper import cells, stats_table

    if representative not in ("first", "last", "mean"):
        raise ConfigError(
            f"representative must be 'first', 'last' or 'mean', got {representative!r}"
        )
    return {
        "table1_overview": cells.table1_overview(trials),
        "data_counts": cells.data_counts(trials),
        "outcome_correctness": cells.outcome_correctness(trials),
        "stats": stats_table.stats_table(trials, threshold=threshold, split_point=split_point),
        "fig1_p1_p2": cells.fig1_p1_p2(trials, threshold=threshold),
        "table2_p3": cells.table2_p3(trials, threshold=threshold),
        "prompt_caveats": cells.prompt_caveats(trials, data_dir),
        "fig2_p3": cells.fig2_p3(trials, representative=representative, threshold=threshold),
        "fig3_bimodality": cells.fig3_bimodality(trials, split_point=split_point),
        "fig3_modes": cells.bimodality_summary(trials, split_point=split_point),
        "fig4_c2": cells.fig4_c2(trials),
        "fig5_asymmetry": cells.fig5_asymmetry(trials),
    }


# --------------------------------------------------------------------------- running


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
    missing = [p.name for p in found if not p.is_file()]
    if missing:
        raise ConfigError(
            f"{notebooks_dir}: missing notebook(s) {missing} "
            "(restore them from git: git checkout -- notebooks/)"
        )
    return found


def parse_parameter(text: str) -> tuple[str, Any]:
    """``"threshold=15"`` → ``("threshold", 15)``; values are read as YAML scalars/lists.

    >>> parse_parameter("formats=[png, pdf]")
    ('formats', ['png', 'pdf'])
    >>> parse_parameter("data_dir=null")
    ('data_dir', None)
    """
    import yaml

    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise ConfigError(f"parameter {text!r} is not of the form name=value (e.g. threshold=15)")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"parameter {name}: cannot read value {raw!r}: {exc}") from exc
    return name, value


def _read_notebook(notebook: Path) -> dict[str, Any]:
    """A notebook's JSON; a file that is not a notebook is a :class:`ConfigError` naming it."""
    try:
        data = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{notebook}: not a readable notebook ({exc}); restore it with git checkout"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{notebook}: not a notebook (expected a JSON object)")
    return data


def declared_parameters(notebook: Path) -> set[str]:
    """Names assigned in the notebook's cell tagged ``parameters``."""
    data = _read_notebook(notebook)
    for cell in data.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell.get("source", []))
            return set(re.findall(r"^([A-Za-z_]\w*)\s*(?::[^=]+)?=", source, re.MULTILINE))
    return set()


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
                message = str(exc).strip().splitlines()
                ok, error = False, "\n".join(message[-12:])
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
        wanted = declared_parameters(nb)
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


_PLACEMENT = ("figures_dir", "tables_dir", "paper_dir")
"""Parameters that say where outputs go, not how they are computed."""


def paper_defaults(notebooks: Sequence[Path]) -> dict[str, Any]:
    """Every parameter the notebooks declare, with its default (the paper's settings)."""
    merged: dict[str, Any] = {}
    for nb in notebooks:
        for name, value in notebook_defaults(nb).items():
            merged.setdefault(name, value)
    return merged


def _same(value: Any, default: Any) -> bool:
    """``value`` (as ``-p`` read it) means the same as the notebook's ``default``."""
    if value is None or default is None:
        return value is default
    if isinstance(default, list | tuple) or (isinstance(value, list | tuple)):
        as_list = _formats(value) if isinstance(value, str) else tuple(map(str, value))
        wanted = _formats(default) if isinstance(default, str) else tuple(map(str, default))
        return as_list == wanted
    if isinstance(default, int | float) and not isinstance(default, bool):
        try:
            return float(value) == float(default)
        except (TypeError, ValueError):
            return False
    return str(value) == str(default)


def changed_settings(parameters: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The given parameters that differ from the paper's defaults (placement folders ignored).

    >>> changed_settings({"dpi": 100, "threshold": 10.0, "figures_dir": "x"}, {"dpi": 200,
    ...     "threshold": 10})
    {'dpi': 100}
    """
    return {
        name: value
        for name, value in parameters.items()
        if name not in _PLACEMENT and not (name in defaults and _same(value, defaults[name]))
    }


def run_tag(changed: Mapping[str, Any]) -> str | None:
    """The ``_build/variants/<tag>/`` folder name of a run with these changed settings.

    The analysis settings keep their short form (``t15-s20-first``); any other setting
    is appended as ``name<value>``, a path by its hash (``data_dir-1a2b3c4d``).

    >>> run_tag({}) is None
    True
    >>> run_tag({"threshold": 15}), run_tag({"dpi": 100}), run_tag({"alpha": 0.01})
    ('t15-s20-first', 'dpi100', 'alpha0.01')
    """
    import hashlib

    parts: list[str] = []
    analysis = variant_tag({k: v for k, v in changed.items() if k in PAPER_SETTINGS})
    if analysis:
        parts.append(analysis)
    for name in sorted(set(changed) - set(PAPER_SETTINGS)):
        value = changed[name]
        if name == "data_dir" or (isinstance(value, str) and ("/" in value or "\\" in value)):
            text = str(Path(value).resolve()) if value else ""
            parts.append(f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:8]}")
            continue
        shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        parts.append(name + re.sub(r"[^A-Za-z0-9.,_+-]+", "_", shown))
    return "-".join(parts) or None


@dataclass(frozen=True)
class Layout:
    """Where one reproduction run writes each kind of output."""

    notebooks: Path
    """Executed notebooks (and their ``.log`` files)."""
    figures: Path
    tables: Path
    paper: Path
    """``claims.csv`` and ``REPRODUCTION.md``."""
    reference: Path
    """The published figures, copied from the data for the report."""
    tag: str | None
    """``None`` for the committed outputs at the paper's settings."""
    committed: bool
    """The run writes the committed ``figures/``, ``paper/tables/`` and ``paper/``."""


def plan_layout(
    root: Path,
    parameters: Mapping[str, Any] | None = None,
    *,
    out: Path | None = None,
    check: bool = False,
    defaults: Mapping[str, Any] | None = None,
) -> Layout:
    """Where a run with these parameters writes.

    Only a run at exactly the paper's defaults (every ``-p`` equal to the notebooks'
    defaults) writes the committed folders. Any other setting — ``dpi``, ``alpha``, a
    ``data_dir`` copy — writes under ``_build/variants/<tag>/``; ``check`` under
    ``_build/check/`` (or ``_build/check/<tag>/``); ``out`` moves everything there.
    Explicit ``figures_dir`` / ``tables_dir`` / ``paper_dir`` parameters win.
    """
    params = dict(parameters or {})
    if defaults is None:
        present = [root / "notebooks" / f"{n}.ipynb" for n in PAPER_NOTEBOOKS]
        defaults = {**PAPER_SETTINGS, **paper_defaults([p for p in present if p.is_file()])}
    if defaults.keys() - PAPER_SETTINGS.keys():  # the notebooks' own parameters are known
        check_parameters(params, defaults, "the paper notebooks")  # a misspelt -p never runs
    tag = run_tag(changed_settings(params, defaults))
    if out is not None:
        base: Path | None = out.resolve()
    elif check:
        base = root / "_build" / "check" / (tag or "paper")
    elif tag is not None:
        base = build_dir(root, tag)
    else:
        base = None
    if base is None:
        layout = Layout(
            notebooks=root / "_build" / "notebooks",
            figures=root / "figures",
            tables=root / "paper" / "tables",
            paper=root / "paper",
            reference=reference_dir(root),
            tag=None,
            committed=True,
        )
    else:
        layout = Layout(
            notebooks=base / "notebooks",
            figures=base / "figures",
            tables=base / "tables",
            paper=base,
            reference=base / "reference",
            tag=tag,
            committed=False,
        )
    given = {k: Path(str(params[k])).resolve() for k in _PLACEMENT if params.get(k)}
    if given:
        layout = dataclasses.replace(
            layout,
            figures=given.get("figures_dir", layout.figures),
            tables=given.get("tables_dir", layout.tables),
            paper=given.get("paper_dir", layout.paper),
            committed=layout.committed and not given,
        )
    return layout


def reproduce(
    root: Path | None = None,
    out_dir: Path | None = None,
    parameters: Mapping[str, Any] | None = None,
    workers: int = DEFAULT_WORKERS,
    progress: bool = True,
    report: bool = True,
    *,
    layout: Layout | None = None,
) -> list[NotebookResult]:
    """Run every notebook of the checkout and write the reproduction report.

    ``parameters`` go to every notebook that declares them. Where outputs go is
    ``layout`` (default :func:`plan_layout`): the committed ``figures/``,
    ``paper/tables/`` and ``paper/`` only at exactly the paper's defaults, else
    ``_build/variants/<tag>/``. ``out_dir`` (older form) moves only the executed
    notebooks. Returns one :class:`NotebookResult` per notebook (the caller decides
    the exit code).
    """
    root = (root or project_root()).resolve()
    params: dict[str, Any] = dict(parameters or {})
    notebooks = find_notebooks(root / "notebooks")
    if layout is None:
        layout = plan_layout(root, params, defaults=paper_defaults(notebooks))
    notebooks_out = (out_dir or layout.notebooks).resolve()
    params["figures_dir"], params["tables_dir"] = str(layout.figures), str(layout.tables)
    params["paper_dir"] = str(layout.paper)
    results = _run_with_progress(notebooks, notebooks_out, params, workers, progress)
    if report:
        write_report(
            root,
            results,
            params,
            figures_dir=layout.figures,
            tables_dir=layout.tables,
            claims_path=layout.paper / "claims.csv",
            out_dir=layout.paper,
            notebooks=notebooks,
            reference=layout.reference,
            committed=layout.committed,
        )
    return results


def report_path(root: Path, parameters: Mapping[str, Any] | None = None) -> Path:
    """Where :func:`reproduce` writes ``REPRODUCTION.md`` for these parameters."""
    return plan_layout(root, parameters).paper / "REPRODUCTION.md"


# --------------------------------------------------------------------------- the check


@dataclass(frozen=True)
class ClaimChange:
    """One claim whose status or value differs between two audits."""

    id: str
    before: tuple[str, str]
    """(status, computed value) in the reference (committed) audit; ``("", "")`` if absent."""
    after: tuple[str, str]

    def line(self) -> str:
        """``res41.c2_no_flip: MISMATCH 1 -> PASS 0``."""
        old = " ".join(p for p in self.before if p) or "absent"
        new = " ".join(p for p in self.after if p) or "absent"
        return f"{self.id}: {old} -> {new}"


def compare_claims(
    reference: Sequence[Mapping[str, str]], current: Sequence[Mapping[str, str]]
) -> list[ClaimChange]:
    """Every claim whose status or computed value differs, plus claims only in one audit.

    >>> a = [{"id": "x", "status": "PASS", "computed_value": "3"}]
    >>> [c.line() for c in compare_claims(a, [{"id": "x", "status": "MISMATCH",
    ...     "computed_value": "4"}])]
    ['x: PASS 3 -> MISMATCH 4']
    """

    def key(row: Mapping[str, str]) -> tuple[str, str]:
        return row.get("status", ""), row.get("computed_value", "")

    before = {r.get("id", ""): key(r) for r in reference}
    after = {r.get("id", ""): key(r) for r in current}
    changes = []
    for claim_id in [*before, *(i for i in after if i not in before)]:
        old, new = before.get(claim_id, ("", "")), after.get(claim_id, ("", ""))
        if old != new:
            changes.append(ClaimChange(claim_id, old, new))
    return changes


def committed_claims(root: Path) -> list[dict[str, str]]:
    """``paper/claims.csv`` as committed (``git show HEAD:``), else as on disk."""
    text = _git(root, "show", "HEAD:paper/claims.csv")
    if not text:
        path = root / "paper" / "claims.csv"
        if not path.is_file():
            raise ConfigError(f"{path}: no committed claims to check against")
        return read_claims(path)
    return list(csv.DictReader(text.splitlines()))


def strict_problems(claims: Sequence[Mapping[str, str]]) -> list[str]:
    """Claims that make a run fail: any ERROR, any status other than the registry expects.

    >>> strict_problems([{"id": "a", "status": "ERROR", "expected_status": "PASS"}])
    ['a: ERROR (expected PASS)']
    """
    return [
        f"{r.get('id', '')}: {r.get('status', '')} (expected {r.get('expected_status', '')})"
        for r in claims
        if r.get("status") == "ERROR" or r.get("status") != r.get("expected_status")
    ]


def _run_with_progress(
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


# --------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class Artifact:
    """One table or figure of the paper and what facetlab writes for it."""

    title: str
    tables: tuple[str, ...]
    """Stems of the tables (``paper/tables/<stem>.md``) shown for it."""
    locations: tuple[str, ...]
    """Claim locations (regular expressions) whose values belong next to it."""
    figure: str | None = None
    """Stem of the figure (``figures/<stem>.png``); also the paper's file name."""


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact(
        "Table 1 — models and data counts", ("table1_overview", "data_counts"), (r"^Table 1",)
    ),
    Artifact("Outcome correctness (§4.1)", ("outcome_correctness",), (r"§\s?4\.1",)),
    Artifact(
        "Figure 1 — P1 vs P2 matrices",
        ("fig1_p1_p2",),
        (r"Figure 1", r"§\s?4\.2"),
        "fig1_probe_comparison",
    ),
    Artifact(
        "Table 2 — P3 replication summary",
        ("table2_p3", "prompt_caveats"),
        (r"^Table 2", r"§\s?4\.3"),
    ),
    Artifact(
        "Figure 2 — P3 adversarial, three panels",
        ("fig2_p3",),
        (r"Figure 2",),
        "fig2_adversarial_3panel",
    ),
    Artifact(
        "Figure 3 — GPT-5.4 bimodality on CF-Cabral",
        ("fig3_modes", "fig3_bimodality"),
        (r"Figure 3", r"§\s?4\.4"),
        "fig3_bimodality",
    ),
    Artifact(
        "Figure 4 — C2 ablation", ("fig4_c2",), (r"Figure 4", r"§\s?4\.5"), "fig4_c2_faithfulness"
    ),
    Artifact(
        "Figure 5 — asymmetric faithfulness profile",
        ("fig5_asymmetry",),
        (r"Figure 5", r"§\s?4\.6"),
        "fig5_asymmetry",
    ),
    Artifact("Statistical tests (§4.7)", ("stats",), (r"§\s?4\.7",)),
)
"""The paper's tables and figures, in paper order, as listed in the report."""


_OTHER_TITLE = "Other claims — text, captions and the data itself"


def read_claims(path: Path) -> list[dict[str, str]]:
    """The rows of ``claims.csv`` as dicts of text."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _md_escape(text: str) -> str:
    """``text`` fit for one Markdown table cell (pipes escaped, newlines joined)."""
    return text.replace("|", "\\|").replace("\n", " ")


def _claims_table(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """Markdown table lines of claims: id, location, paper vs computed value, status."""
    lines = ["| claim | where | paper | computed | status |", "|:--|:--|--:|--:|:--|"]
    for row in rows:
        status = row.get("status", "")
        shown = f"**{status}**" if status != "PASS" else status
        lines.append(
            "| {id} | {loc} | {paper} | {computed} | {status} |".format(
                id=_md_escape(row.get("id", "")),
                loc=_md_escape(row.get("location", "")),
                paper=_md_escape(row.get("paper_value", "")),
                computed=_md_escape(row.get("computed_value", "")),
                status=shown,
            )
        )
    return lines


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    kept = re.sub(r"[^\w\- ]", "", title.lower(), flags=re.ASCII)
    return "#" + kept.replace(" ", "-")


def _tally(rows: Sequence[Mapping[str, str]]) -> str:
    """``"12 PASS, 1 MISMATCH"`` (statuses in a fixed order, absent ones left out)."""
    order = ("PASS", "MISMATCH", "NOT_DERIVABLE", "ERROR")
    counts = {s: sum(1 for r in rows if r.get("status") == s) for s in order}
    shown = [f"{n} **{s}**" if s != "PASS" else f"{n} {s}" for s, n in counts.items() if n]
    return ", ".join(shown) or "—"


def _claim_line(row: Mapping[str, str]) -> str:
    """One claim as a Markdown bullet with its wording, both values and the explanation."""
    return (
        f"- **{row.get('id', '')}** ({row.get('status', '')}, {row.get('kind', 'data')}; "
        f"{row.get('location', '')}): "
        f"paper “{_md_escape(row.get('wording', ''))}” = `{row.get('paper_value', '')}`, "
        f"data = `{row.get('computed_value', '')}`. {_md_escape(row.get('explanation', ''))}"
    )


# --------------------------------------------------------------------------- provenance


def notebook_defaults(notebook: Path) -> dict[str, Any]:
    r"""The values assigned in the notebook's ``parameters`` cell (literals only).

    >>> import json, tempfile
    >>> cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]},
    ...         "source": ["threshold = 10  # pp\n", "formats = ['png']\n"]}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "n.ipynb"
    ...     _ = path.write_text(json.dumps({"cells": [cell]}))
    ...     notebook_defaults(path)
    {'threshold': 10, 'formats': ['png']}
    """
    import ast

    data = _read_notebook(notebook)
    for cell in data.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            out: dict[str, Any] = {}
            for node in ast.parse("".join(cell.get("source", []))).body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                    if isinstance(target, ast.Name):
                        out[target.id] = ast.literal_eval(node.value)
            return out
    return {}


def _git(root: Path, *args: str) -> str:
    """Output of ``git -C root args`` (stripped), or ``""`` outside a git checkout."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


_SOURCES = ("facetlab", "notebooks")
"""What the report is computed by: the package and the notebooks (their code, not outputs)."""


def code_digest(root: Path) -> str:
    """sha256 over the package's ``*.py`` files and the paper notebooks' code cells.

    Independent of git and of notebook outputs, so it names exactly the code that
    produced a report (the same code gives the same digest on any machine).
    """
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((root / "facetlab").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    for name in PAPER_NOTEBOOKS:
        path = root / "notebooks" / f"{name}.ipynb"
        if path.is_file():
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            code = "\n".join("".join(c.get("source", [])) for c in cells)
            digest.update(f"notebooks/{name}.ipynb".encode() + b"\0" + code.encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Provenance:
    """What produced a report: the code, the data, the settings."""

    version: str
    commit: str
    """The last commit that changed ``facetlab/`` or ``notebooks/`` (``""`` outside git)."""
    dirty: bool
    """The working tree's code differs from that commit."""
    commit_date: str
    code_sha256: str
    data_repository: str
    data_commit: str
    data_version: str
    registry_sha256: str
    parameters: dict[str, tuple[Any, tuple[str, ...]]]
    """Every notebook parameter → (value used, the notebooks that take it)."""
    data_check: DataCheck | None = None
    """The data files read, hashed against the registry when the report was built."""

    @classmethod
    def collect(
        cls, root: Path, notebooks: Sequence[Path], parameters: Mapping[str, Any]
    ) -> Provenance:
        """Read the versions, hashes and effective parameter values for a run."""
        import hashlib

        import facetlab
        from facetlab import datasets

        used: dict[str, tuple[Any, tuple[str, ...]]] = {}
        for nb in (n for n in notebooks if n.is_file()):
            declared = declared_parameters(nb)
            defaults = notebook_defaults(nb)
            for name in sorted(declared):
                value = parameters.get(name, defaults.get(name))
                old = used.get(name, (value, ()))
                used[name] = (old[0], (*old[1], nb.stem))
        for name, value in parameters.items():  # given, but declared by no notebook
            used.setdefault(name, (value, ()))
        registry = hashlib.sha256(
            "\n".join(f"{v}  {k}" for k, v in sorted(datasets.registry().items())).encode()
        ).hexdigest()
        return cls(
            version=facetlab.__version__,
            commit=_git(root, "log", "-1", "--format=%H", "--", *_SOURCES),
            dirty=bool(_git(root, "status", "--porcelain", "--", *_SOURCES)),
            commit_date=_git(root, "log", "-1", "--format=%cs", "--", *_SOURCES),
            code_sha256=code_digest(root),
            data_repository=datasets.REPOSITORY,
            data_commit=datasets.COMMIT,
            data_version=datasets.VERSION,
            registry_sha256=registry,
            parameters=used,
            data_check=check_data(parameters.get("data_dir")),
        )


@dataclass(frozen=True)
class DataCheck:
    """The registered data files in the folder a run read, against the registry's sha256."""

    given: bool
    """``-p data_dir=`` named the folder (else facetlab's own data dir)."""
    checked: int
    altered: tuple[str, ...]
    missing: tuple[str, ...]
    error: str = ""

    @property
    def verified(self) -> bool:
        """Every registered file is present with its registered sha256."""
        return not self.error and not self.altered and not self.missing

    def text(self) -> str:
        """What was verified, in one sentence."""
        where = "the given `data_dir`" if self.given else "facetlab's data dir"
        if self.error:
            return f"**not verified**: {where} could not be checked ({self.error})"
        if self.verified:
            return (
                f"verified: all {self.checked} registered files in {where} match the "
                "registry's sha256 (hashed when this report was built)"
            )
        listed = ", ".join([*self.altered, *self.missing][:5])
        more = len(self.altered) + len(self.missing) - 5
        return (
            f"**not the pinned data**: in {where}, {len(self.altered)} of {self.checked} "
            f"registered files differ from the registry and {len(self.missing)} are missing "
            f"({listed}{f' and {more} more' if more > 0 else ''}); every number below is "
            "computed from this copy"
        )


def check_data(data_dir: str | Path | None) -> DataCheck:
    """Hash the registered files of the folder a run read (``data_dir``, else facetlab's)."""
    from facetlab import datasets
    from facetlab.datasets.folder import sha256

    given = data_dir is not None
    try:
        root = Path(data_dir) if data_dir is not None else datasets.data_dir()
    except Exception as exc:  # a missing data dir is reported, not raised, in the report
        return DataCheck(given, 0, (), (), error=str(exc).splitlines()[0])
    registered = datasets.registry()
    altered, missing = [], []
    for name, expected in sorted(registered.items()):
        path = root / name
        if not path.is_file():
            missing.append(name)
        elif sha256(path) != expected:
            altered.append(name)
    return DataCheck(given, len(registered), tuple(altered), tuple(missing))


def _shown(value: Any, root: Path) -> str:
    """A parameter value as the report prints it: paths relative to the checkout."""
    if value is None:
        return "None (facetlab's data dir, honouring FACETLAB_DATA_MIRROR)"
    if isinstance(value, str) and os.path.isabs(value):
        try:
            return Path(os.path.relpath(value, root)).as_posix()
        except ValueError:
            return value
    return repr(value) if isinstance(value, str) else str(value)


def _provenance_lines(prov: Provenance, root: Path, *, committed: bool = False) -> list[str]:
    lines = [
        "## Provenance",
        "",
        "| what | value |",
        "|:--|:--|",
        f"| facetlab version | {prov.version} |",
    ]
    if committed:
        # A commit hash or code digest here would change with every code commit and leave
        # a fresh clone's tree modified; the check re-derives the claims instead.
        lines.append(
            "| facetlab code | not recorded in this committed file (it would change with "
            "every commit): `facetlab reproduce --check` re-derives every claim with the "
            "current code and exits 1, listing them, when any status or value differs from "
            "`paper/claims.csv` |"
        )
    else:
        commit = prov.commit or "unknown (not a git checkout)"
        if prov.dirty:
            commit += " + uncommitted changes"
        lines += [
            f"| facetlab source commit | `{commit}` (last commit of `facetlab/`, `notebooks/`) |",
            f"| facetlab code sha256 | `{prov.code_sha256}` (package `*.py` and notebook code) |",
        ]
    check = prov.data_check.text() if prov.data_check else "not checked"
    lines += [
        f"| data | {prov.data_repository} {prov.data_version}, pinned commit `{prov.data_commit}` |",
        f"| data registry sha256 | `{prov.registry_sha256}` |",
        f"| data files read | {check} |",
        "",
        "Parameters (every notebook parameter and the value used):",
        "",
        "| parameter | value | notebooks |",
        "|:--|:--|:--|",
    ]
    for name, (value, users) in sorted(prov.parameters.items()):
        who = "all" if len(users) == len(PAPER_NOTEBOOKS) else ", ".join(users) or "—"
        lines.append(f"| `{name}` | `{_md_escape(_shown(value, root))}` | {who} |")
    return lines


# --------------------------------------------------------------------------- report parts


_STATUSES = ("PASS", "MISMATCH", "NOT_DERIVABLE", "ERROR")


def claim_counts(claims: Sequence[Mapping[str, str]]) -> dict[str, dict[str, int]]:
    """Claims by kind, then status (kinds in :data:`facetlab.paper.claims.KINDS` order).

    >>> claim_counts([{"kind": "data", "status": "PASS"}, {"kind": "setting", "status": "PASS"}])
    {'data': {'PASS': 1}, 'setting': {'PASS': 1}}
    """
    from facetlab.paper.claims import KINDS

    out: dict[str, dict[str, int]] = {}
    for kind in (*KINDS, *sorted({r.get("kind", "") for r in claims} - set(KINDS))):
        mine = [r for r in claims if r.get("kind", "") == kind]
        counts = {s: sum(1 for r in mine if r.get("status") == s) for s in _STATUSES}
        if mine:
            out[kind] = {s: n for s, n in counts.items() if n}
    return out


def format_claim_counts(claims: Sequence[Mapping[str, str]]) -> str:
    """One line per kind: ``data: 451 PASS, 23 MISMATCH, 3 NOT_DERIVABLE``."""
    return "\n".join(
        f"{kind}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
        for kind, counts in claim_counts(claims).items()
    )


_KIND_TEXT = {
    "metadata": "transcribed facts and facetlab's own model table (written from Table 1)",
    "setting": "the analysis parameters of this run, compared with the paper's",
    "convention": "properties of the data the paper does not state (CONVENTIONS.md)",
}


def distinct_numbers(claims: Sequence[Mapping[str, str]], status: str = "PASS") -> int:
    """How many different numbers the ``data`` claims of ``status`` check.

    The paper states many numbers in several places (text, table, caption, figure); each
    place is its own claim. Claims with the same paper value and the same computed value
    count once here.

    >>> distinct_numbers([{"kind": "data", "status": "PASS", "paper_value": "8",
    ...     "computed_value": "8"}] * 3)
    1
    """
    return len(
        {
            (r.get("paper_value", ""), r.get("computed_value", ""))
            for r in claims
            if r.get("kind") == "data" and r.get("status") == status
        }
    )


def _setting_note(rows: Sequence[Mapping[str, str]]) -> str:
    """Whether this run's settings are the paper's: computed, never assumed."""
    off = [r.get("id", "") for r in rows if r.get("status") != "PASS"]
    if not off:
        return "all equal to the paper's in this run"
    return f"{len(off)} differ from the paper's because this run changed them: " + ", ".join(
        f"`{i}`" for i in off
    )


def _evidence_anchor(claim_id: str) -> str:
    return "evidence-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


def _findings_lines(
    claims: Sequence[Mapping[str, str]], findings: Sequence[Mapping[str, str]] | None
) -> list[str]:
    """Each finding once: title, severity, its claims (paper vs data), link to the evidence.

    ``findings`` are the rows of the run's ``findings.csv`` (titles and summaries filled in
    from the data by the audit); ``None`` when the audit wrote none.
    """
    from facetlab.paper.findings import FINDINGS, SEVERITY_TEXT

    by_id = {r.get("id", ""): r for r in claims}
    lines = [
        "## Findings",
        "",
        "Where the paper and the data disagree, each issue once (most severe first); the "
        "titles, summaries and numbers are computed from the data by the claims audit, the "
        "evidence is linked.",
        "",
    ]
    if findings is None:
        if claims:
            lines.append("_`findings.csv` is missing: the claims audit did not write it._")
        return lines
    shown = 0
    grouped: set[str] = set()
    for finding in findings:
        ids = finding.get("claims", "").split()
        grouped.update(ids)
        rows = [by_id[c] for c in ids if c in by_id]
        shown += 1
        parts = ", ".join(
            f"[`{r['id']}`](#{_evidence_anchor(r['id'])}) paper {r.get('paper_value', '')} / "
            f"data {r.get('computed_value', '') or '—'} ({r.get('status', '')}"
            + ("" if r.get("kind") == "data" else f", {r.get('kind')}")
            + ")"
            for r in rows
        )
        texts = {str(k): v for k, v in SEVERITY_TEXT.items()}
        severity = texts.get(finding.get("severity", ""), "severity not assessed")
        lines.append(
            f"{shown}. **{_md_escape(finding.get('title', ''))}** — *{severity}*. "
            f"{_md_escape(finding.get('summary', ''))} Claims: {parts}."
        )
    grouped |= {c for f in FINDINGS for c in f.claims}
    loose = [
        r.get("id", "")
        for r in claims
        if r.get("status") in ("MISMATCH", "ERROR") and r.get("id", "") not in grouped
    ]
    for claim_id in loose:
        shown += 1
        row = by_id[claim_id]
        lines.append(
            f"{shown}. **Ungrouped: `{claim_id}`** — *severity not assessed*. "
            f"paper {row.get('paper_value', '')} / data {row.get('computed_value', '')} "
            f"([evidence](#{_evidence_anchor(claim_id)}))."
        )
    if not shown:
        lines.append("None: every derivable claim matches the data.")
    mismatched = sum(1 for r in claims if r.get("kind") == "data" and r.get("status") == "MISMATCH")
    lines += [
        "",
        f"{shown} finding(s) group the {mismatched} MISMATCH data claims (one issue often "
        "breaks several numbers of the paper).",
    ]
    return lines


def _headline_lines(
    claims: Sequence[Mapping[str, str]], results: Sequence[NotebookResult]
) -> list[str]:
    counts = claim_counts(claims)
    data = counts.get("data", {})
    lines = [
        "## Summary",
        "",
        f"Notebooks: {sum(r.ok for r in results)}/{len(results)} ran"
        + (
            "."
            if all(r.ok for r in results)
            else f"; **failed: {', '.join(r.name for r in results if not r.ok)}**."
        ),
    ]
    if not claims:
        return [*lines, "", "`claims.csv` is missing: the claims notebook did not run."]
    passing = data.get("PASS", 0)
    lines += [
        "",
        f"**Claims derived from the raw data ({sum(data.values())}):** "
        + ", ".join(f"{n} {s}" for s, n in data.items())
        + ".",
        "",
        f"The {passing} PASS claims check {distinct_numbers(claims)} distinct values (pairs of "
        "paper value and computed value): the paper states many numbers in several places "
        "(text, table, caption, figure) and each place is its own claim.",
        "",
        "Reported apart (not evidence about the paper's results):",
        "",
    ]
    for kind, text in _KIND_TEXT.items():
        if kind in counts:
            tally = ", ".join(f"{n} {s}" for s, n in counts[kind].items())
            mine = [r for r in claims if r.get("kind") == kind]
            extra = f" — {_setting_note(mine)}" if kind == "setting" else ""
            lines.append(f"- {kind} ({text}): {tally}{extra}")
    unexpected = [r for r in claims if r.get("status") != r.get("expected_status")]
    if unexpected:
        lines += [
            "",
            f"**{len(unexpected)} claim(s) changed status from the registry's expectation:** "
            + ", ".join(f"`{r.get('id', '')}`" for r in unexpected),
        ]
    return lines


def _figure_lines(
    art: Artifact, figures: Path, target_dir: Path, reference: Path | None, root: Path
) -> list[str]:
    """The reproduced figure beside the published one, and the intentional differences."""
    from facetlab.paper.figures import INTENTIONAL_DIFFERENCES

    assert art.figure is not None
    png = figures / f"{art.figure}.png"
    if not png.is_file():
        return [f"_`{art.figure}` was not generated (see the notebook status above)._", ""]
    ours = Path(os.path.relpath(png, target_dir)).as_posix()
    published_abs = (reference or reference_dir(root)) / f"{art.figure}.png"
    published = Path(os.path.relpath(published_abs, target_dir))
    lines = [
        "| facetlab (reproduced) | published (the paper) |",
        "|:--:|:--:|",
        f"| ![{art.title}, facetlab]({ours}) | ![{art.title}, published]({published.as_posix()}) |",
        "",
        "The published image is the FACET data's `reference/"
        f"{art.figure}.png`, copied at build time to the git-ignored "
        f"`{Path(os.path.relpath(published_abs.parent, root)).as_posix()}/` (never committed: "
        "run `facetlab reproduce` to see it)"
        + ("" if reference is not None else "; **not found in this data dir**")
        + ".",
        "",
    ]
    differences = INTENTIONAL_DIFFERENCES.get(art.figure, ())
    if differences:
        lines += ["Intentional differences from the published figure:", ""]
        lines += [f"- {d}" for d in differences]
        lines.append("")
    return lines


def reference_dir(root: Path) -> Path:
    """Where the published figures are copied for the report: ``<root>/_build/reference``."""
    return root / "_build" / "reference"


def copy_reference_figures(
    data_dir: Path | str | None, root: Path, target: Path | None = None
) -> Path | None:
    """Copy the data's published figures to ``target`` (default the git-ignored
    ``_build/reference/``); the folder, or ``None`` when the data has no ``reference/``."""
    import shutil

    from facetlab import datasets
    from facetlab.paper.figures import FIGURE_NAMES

    # reference/ ships with the full data tree (a mirror); the verified cache holds only
    # instances/ and results/
    candidates = [Path(data_dir)] if data_dir is not None else []
    if os.environ.get(datasets.ENV_MIRROR):
        candidates.append(Path(os.environ[datasets.ENV_MIRROR]))
    candidates.append(datasets.cache_dir())
    found = [c / "reference" for c in candidates if (c / "reference").is_dir()]
    if not found:
        return None
    source = found[0]
    target = target or reference_dir(root)
    target.mkdir(parents=True, exist_ok=True)
    for name in FIGURE_NAMES:
        if (source / f"{name}.png").is_file():
            shutil.copyfile(source / f"{name}.png", target / f"{name}.png")
    return target


def _evidence_lines(claims: Sequence[Mapping[str, str]]) -> list[str]:
    from facetlab.paper.findings import FINDINGS

    grouped = {c for f in FINDINGS for c in f.claims}
    lines = ["## Evidence", ""]
    shown = [r for r in claims if r.get("status") != "PASS" or r.get("id") in grouped]
    if not claims:
        return [*lines, "_No claims audit available._"]
    if not shown:
        return [*lines, "None: every claim passes."]
    lines += [
        "Every claim that is not PASS (and every claim a finding names), with the registry's "
        "evidence; its numbers are computed from the data when the report is built.",
        "",
    ]
    for row in shown:
        lines.append(f'<a id="{_evidence_anchor(row.get("id", ""))}"></a>')
        lines.append(_claim_line(row))
    return lines


def write_report(
    root: Path,
    results: Sequence[NotebookResult],
    parameters: Mapping[str, Any] | None = None,
    *,
    figures_dir: Path | None = None,
    tables_dir: Path | None = None,
    claims_path: Path | None = None,
    out_dir: Path | None = None,
    notebooks: Sequence[Path] | None = None,
    reference: Path | None = None,
    committed: bool | None = None,
) -> Path:
    """Write ``REPRODUCTION.md`` (default ``<root>/paper/``) from the tables, figures and claims.

    Order: provenance, summary (claims by kind), findings, the at-a-glance table, the
    sensitivity analysis, each table and figure (reproduced beside published), evidence.
    The report holds no timings or absolute paths, so it only changes when a result,
    the code or a parameter changes (timings are printed by the command instead).
    """
    paper = root / "paper"
    tables = tables_dir or paper / "tables"
    figures = figures_dir or root / "figures"
    claims_path = claims_path or paper / "claims.csv"
    target_dir = out_dir or paper
    from facetlab.paper.findings import read_findings

    claims = read_claims(claims_path) if claims_path.is_file() else []
    findings_path = claims_path.with_name("findings.csv")
    findings = read_findings(findings_path) if findings_path.is_file() else None
    params = dict(parameters or {})
    if notebooks is None:
        notebooks = [r.source for r in results]
    if committed is None:
        committed = target_dir.resolve() == paper.resolve()
    prov = Provenance.collect(root, notebooks, params)
    reference_folder = reference or reference_dir(root)
    found = copy_reference_figures(params.get("data_dir"), root, reference_folder)

    def belongs(art: Artifact, row: Mapping[str, str]) -> bool:
        return any(re.search(p, row.get("location", "")) for p in art.locations)

    by_artifact = [(art, [row for row in claims if belongs(art, row)]) for art in ARTIFACTS]
    rest = [row for row in claims if not any(belongs(art, row) for art in ARTIFACTS)]

    lines: list[str] = [
        "# Reproduction report",
        "",
        "Generated by `facetlab reproduce` from the FACET v3 raw results; do not edit by hand. "
        f"The paper's values come from the claims audit (`{claims_path.name}`, one row per "
        "number the paper states, with its `kind`).",
        "",
        *_provenance_lines(prov, root, committed=committed),
        "",
        *_headline_lines(claims, results),
        "",
        *_findings_lines(claims, findings),
    ]
    for r in results:
        if not r.ok:
            lines += ["", f"`{r.source.name}` failed:", "", "```", r.error, "```"]

    if claims:
        lines += [
            "",
            "## At a glance",
            "",
            "Each table and figure of the paper and how the claims checked against it came out.",
            "",
            "| paper item | claims checked |",
            "|:--|:--|",
        ]
        lines += [
            f"| [{art.title}]({_anchor(art.title)}) | {_tally(mine)} |" for art, mine in by_artifact
        ]
        if rest:
            lines.append(
                f"| [text, captions and data facts]({_anchor(_OTHER_TITLE)}) | {_tally(rest)} |"
            )

    lines += ["", f"## {_SENSITIVITY_TITLE}", ""]
    lines += _table_lines("sensitivity", tables, root)
    sens_png = figures / "sensitivity.png"
    if sens_png.is_file():
        lines += [f"![sensitivity]({Path(os.path.relpath(sens_png, target_dir)).as_posix()})", ""]

    for art, mine in by_artifact:
        lines += ["", f"## {art.title}", ""]
        if art.figure is not None:
            lines += _figure_lines(art, figures, target_dir, found, root)
        for stem in art.tables:
            lines += _table_lines(stem, tables, root)
        if mine:
            lines += [f"The paper's values for this item ({_tally(mine)}):", ""]
            lines += _claims_table(mine)

    if rest:
        lines += [
            "",
            f"## {_OTHER_TITLE}",
            "",
            "Claims outside the tables and figures, by where they appear in the paper.",
            "",
            "| where | claims checked |",
            "|:--|:--|",
        ]
        by_location: dict[str, list[Mapping[str, str]]] = {}
        for row in rest:
            by_location.setdefault(row.get("location", ""), []).append(row)
        lines += [f"| {_md_escape(loc)} | {_tally(rows)} |" for loc, rows in by_location.items()]

    lines += ["", *_evidence_lines(claims)]
    path = target_dir / "REPRODUCTION.md"
    target_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8", newline="\n")
    return path


_SENSITIVITY_TITLE = "Sensitivity of the conclusions to the analysis settings"


def _table_lines(stem: str, tables: Path, root: Path) -> list[str]:
    md = tables / f"{stem}.md"
    if not md.is_file():
        return [f"_`{stem}` was not generated (see the notebook status above)._", ""]
    text = md.read_text(encoding="utf-8").strip()
    shown = Path(os.path.relpath(md.with_suffix(".csv"), root)).as_posix()
    note = _TABLE_NOTES.get(stem)
    lead = [note(md.with_suffix(".csv")), ""] if note is not None else []
    return [*lead, f"facetlab (`{shown}`):", "", text, ""]


def _prompt_caveats_note(csv_path: Path) -> str:
    """What the prompt-construction table says, in one paragraph computed from it."""
    rows = read_claims(csv_path)  # any CSV of text rows
    if not rows:
        return "_No P2/P3 instances to describe._"
    cut = {r.get("cut_at", "") for r in rows}
    trimmed = [r for r in rows if float(r.get("dropped_chars") or 0) > 0]
    named = [r for r in rows if r.get("header_names_factor") == "true"]
    flagged = [r for r in rows if r.get("header_note")]
    shown = ", ".join(
        f"{r['instance_id'].removeprefix('facet-neg-')} {r['neutralized_factor']} "
        f"{r['dropped_pct']}%"
        for r in trimmed
    )
    return (
        "**Prompt construction (read Table 2 with it).** The recorded P2/P3 prompts cut every "
        f"factor text at {', '.join(sorted(cut))} characters: on {len(trimmed)} of {len(rows)} "
        f"instances the cut drops part of the neutralized factor ({_md_escape(shown) or 'none'}), "
        "which on "
        "the adversarial rewrites is where the counter-evidence sits. The `CASE:` header of "
        f"{len(flagged)} adversarial instances carries an “(ADVERSARIAL: …)” note, and "
        f"{len(named)} of them name the manipulated factor. See `docs/probes.md`; the "
        "`facetlab-v1` template removes both."
    )


_TABLE_NOTES: dict[str, Callable[[Path], str]] = {"prompt_caveats": _prompt_caveats_note}


def failed(results: Sequence[NotebookResult]) -> list[NotebookResult]:
    """The notebook runs that failed."""
    return [r for r in results if not r.ok]

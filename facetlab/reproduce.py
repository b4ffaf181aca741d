"""Reproduce the FACET paper: run every notebook with papermill, then write the report.

:func:`reproduce` executes ``notebooks/*.ipynb`` (two at a time, each in its own
kernel, shut down as soon as it finishes) with the given parameters, collects the
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

import csv
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from facetlab.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "ARTIFACTS",
    "Artifact",
    "NotebookResult",
    "Outputs",
    "find_notebooks",
    "paper_tables",
    "parse_parameter",
    "project_root",
    "reproduce",
    "run_notebooks",
    "write_report",
]

DEFAULT_WORKERS = 2


# --------------------------------------------------------------------------- locations


def project_root(start: Path | None = None) -> Path:
    """The facetlab checkout holding ``notebooks/`` and ``paper/``: the nearest such
    ancestor of ``start`` (default: the working directory), else ``start`` itself.

    Notebooks run from ``notebooks/`` (JupyterLab) or from the root (papermill, CI);
    both find the same ``figures/`` and ``paper/tables/`` this way.
    """
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "pyproject.toml").is_file() and (candidate / "notebooks").is_dir():
            return candidate
    return here


@dataclass(frozen=True)
class Outputs:
    """What a reproduction notebook needs: the trials and where its outputs go.

    Create it with :meth:`open` from the notebook's parameters; ``None`` for a
    directory means the checkout's ``figures/`` and ``paper/tables/``.
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
    ) -> Outputs:
        """Load the trials (``load_trials(data_dir)``) and resolve the output folders."""
        from facetlab.records import load_trials

        root = project_root()
        figs = Path(figures_dir) if figures_dir is not None else root / "figures"
        tabs = Path(tables_dir) if tables_dir is not None else root / "paper" / "tables"
        if isinstance(formats, str):
            formats = [formats]
        return cls(load_trials(data_dir), figs, tabs, tuple(formats), int(dpi))

    def table(self, frame: pd.DataFrame, name: str, caption: str | None = None) -> pd.DataFrame:
        """Write ``frame`` as ``<tables_dir>/<name>.csv|.md|.tex``; returns it for display."""
        from facetlab.analysis.tables import write_table

        paths = write_table(frame, name, self.tables_dir, caption=caption)
        self.written.extend([paths.csv, paths.markdown, paths.latex])
        return frame

    def figure(self, fig: Figure, name: str) -> Figure:
        """Save ``fig`` as ``<figures_dir>/<name>.<format>``; returns it for display."""
        from facetlab.figures import save_figure

        self.written.extend(save_figure(fig, name, self.figures_dir, self.formats, self.dpi))
        return fig


def paper_tables(
    trials: pd.DataFrame,
    threshold: float = 10.0,
    split_point: float = 20.0,
    representative: str = "first",
) -> dict[str, pd.DataFrame]:
    """Every table the notebooks write to ``paper/tables/``, by file stem.

    The notebooks make the same calls; the test suite uses this to check that the
    committed CSVs are what the code produces today.
    """
    from facetlab.analysis import cells, stats

    rep = representative
    if rep not in ("first", "last", "mean"):
        raise ConfigError(f"representative must be 'first', 'last' or 'mean', got {rep!r}")
    return {
        "table1_overview": cells.table1_overview(trials),
        "data_counts": cells.data_counts(trials),
        "outcome_correctness": cells.outcome_correctness(trials),
        "stats": stats.stats_table(trials, threshold=threshold, split_point=split_point),
        "fig1_p1_p2": cells.fig1_p1_p2(trials, threshold=threshold),
        "table2_p3": cells.table2_p3(trials, threshold=threshold),
        "fig2_p3": cells.fig2_p3(trials, representative=rep, threshold=threshold),  # type: ignore[arg-type]
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


def find_notebooks(notebooks_dir: Path) -> list[Path]:
    """Every ``*.ipynb`` in ``notebooks_dir`` (not executed copies), numbered ones first."""
    found = [p for p in notebooks_dir.glob("*.ipynb") if not p.name.startswith(("_", "."))]
    if not found:
        raise ConfigError(f"no notebooks in {notebooks_dir} (run notebooks/build_notebooks.py)")
    return sorted(found, key=lambda p: (not p.name[:1].isdigit(), p.name))


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


def declared_parameters(notebook: Path) -> set[str]:
    """Names assigned in the notebook's cell tagged ``parameters``."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in data.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell.get("source", []))
            return set(re.findall(r"^([A-Za-z_]\w*)\s*(?::[^=]+)?=", source, re.MULTILINE))
    return set()


def _execute(
    source: str, output: str, parameters: dict[str, Any], cwd: str
) -> tuple[bool, float, str]:
    """Run one notebook (in a worker process); never raises, reports the failure instead.

    The kernel's own stderr (start-up chatter, warnings) goes to ``<output>.log``
    instead of the terminal, where it would break the progress display.
    """
    import os

    import papermill

    start = time.perf_counter()
    log = os.open(output + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    saved = os.dup(2)
    os.dup2(log, 2)
    try:
        papermill.execute_notebook(
            source,
            output,
            parameters=parameters,
            cwd=cwd,
            progress_bar=False,
            log_output=False,
            kernel_name="python3",
            shutdown_kernel="immediate",
        )
    except Exception as exc:  # papermill wraps cell errors; keep the message short
        message = str(exc).strip().splitlines()
        return False, time.perf_counter() - start, "\n".join(message[-12:])
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)
    return True, time.perf_counter() - start, ""


def run_notebooks(
    notebooks: Sequence[Path],
    out_dir: Path,
    parameters: Mapping[str, Any] | None = None,
    workers: int = DEFAULT_WORKERS,
    on_done: Callable[[NotebookResult], None] | None = None,
) -> list[NotebookResult]:
    """Execute ``notebooks`` with papermill, ``workers`` at a time, into ``out_dir``.

    Each notebook gets only the parameters its ``parameters`` cell declares; the
    working directory is the notebook's folder (as in JupyterLab).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    params = dict(parameters or {})
    results: list[NotebookResult] = []
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        futures: dict[Future[tuple[bool, float, str]], tuple[Path, Path]] = {}
        for nb in notebooks:
            wanted = declared_parameters(nb)
            mine = {k: v for k, v in params.items() if k in wanted}
            target = out_dir / nb.name
            futures[pool.submit(_execute, str(nb), str(target), mine, str(nb.parent))] = (
                nb,
                target,
            )
        for future in as_completed(futures):
            nb, target = futures[future]
            ok, seconds, error = future.result()
            result = NotebookResult(nb.stem, nb, target, ok, seconds, error)
            results.append(result)
            if on_done is not None:
                on_done(result)
    order = {nb.stem: i for i, nb in enumerate(notebooks)}
    return sorted(results, key=lambda r: order[r.name])


def reproduce(
    root: Path | None = None,
    out_dir: Path | None = None,
    parameters: Mapping[str, Any] | None = None,
    workers: int = DEFAULT_WORKERS,
    progress: bool = True,
    report: bool = True,
) -> list[NotebookResult]:
    """Run every notebook of the checkout and write ``paper/REPRODUCTION.md``.

    ``parameters`` go to every notebook that declares them; ``figures_dir`` and
    ``tables_dir`` default to the checkout's ``figures/`` and ``paper/tables/``.
    Returns one :class:`NotebookResult` per notebook (the caller decides the exit code).
    """
    root = (root or project_root()).resolve()
    out_dir = (out_dir or root / "_build" / "notebooks").resolve()
    params: dict[str, Any] = {
        "figures_dir": str(root / "figures"),
        "tables_dir": str(root / "paper" / "tables"),
    }
    params.update(parameters or {})
    notebooks = find_notebooks(root / "notebooks")
    results = _run_with_progress(notebooks, out_dir, params, workers, progress)
    if report:
        write_report(root, results, params)
    return results


def _run_with_progress(
    notebooks: Sequence[Path],
    out_dir: Path,
    params: Mapping[str, Any],
    workers: int,
    progress: bool,
) -> list[NotebookResult]:
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
    """One table or figure of the paper and where facetlab writes it."""

    title: str
    kind: str  # "table" | "figure"
    files: tuple[str, ...]
    locations: tuple[str, ...]
    """Claim locations (regular expressions) whose values belong next to this artifact."""
    reference: str = ""


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact("Table 1 — models and data counts", "table", ("table1_overview",), (r"^Table 1",)),
    Artifact(
        "Figure 1 — P1 vs P2 matrices",
        "figure",
        ("fig1_p1_p2", "fig1_probe_comparison"),
        (r"Figure 1", r"§\s?4\.2"),
        "reference/fig1_probe_comparison.png",
    ),
    Artifact(
        "Table 2 — P3 replication summary", "table", ("table2_p3",), (r"^Table 2", r"§\s?4\.3")
    ),
    Artifact(
        "Figure 2 — P3 adversarial, three panels",
        "figure",
        ("fig2_p3", "fig2_adversarial_3panel"),
        (r"Figure 2",),
        "reference/fig2_adversarial_3panel.png",
    ),
    Artifact(
        "Figure 3 — GPT-5.4 bimodality on CF-Cabral",
        "figure",
        ("fig3_bimodality", "fig3_bimodality"),
        (r"Figure 3", r"§\s?4\.4"),
        "reference/fig3_bimodality.png",
    ),
    Artifact(
        "Figure 4 — C2 ablation",
        "figure",
        ("fig4_c2", "fig4_c2_faithfulness"),
        (r"Figure 4", r"§\s?4\.5"),
        "reference/fig4_c2_faithfulness.png",
    ),
    Artifact(
        "Figure 5 — asymmetric faithfulness profile",
        "figure",
        ("fig5_asymmetry", "fig5_asymmetry"),
        (r"Figure 5", r"§\s?4\.6"),
        "reference/fig5_asymmetry.png",
    ),
    Artifact("Statistical tests (§4.7)", "table", ("stats",), (r"§\s?4\.7",)),
)
"""The paper's tables and figures, in paper order, as listed in the report."""


def _read_claims(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _claims_table(rows: Sequence[Mapping[str, str]]) -> list[str]:
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


def _claim_line(row: Mapping[str, str]) -> str:
    return (
        f"- **{row.get('id', '')}** ({row.get('status', '')}; {row.get('location', '')}): "
        f"paper “{_md_escape(row.get('wording', ''))}” = `{row.get('paper_value', '')}`, "
        f"data = `{row.get('computed_value', '')}`. {_md_escape(row.get('explanation', ''))}"
    )


def write_report(
    root: Path,
    results: Sequence[NotebookResult],
    parameters: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``paper/REPRODUCTION.md`` from the generated tables, figures and claims.

    The report holds no timings or absolute paths, so it only changes when a
    result changes (timings are printed by the command instead).
    """
    paper = root / "paper"
    tables = paper / "tables"
    figures = root / "figures"
    claims_path = paper / "claims.csv"
    claims = _read_claims(claims_path) if claims_path.is_file() else []
    shown_params = {
        k: v
        for k, v in (parameters or {}).items()
        if k not in ("figures_dir", "tables_dir", "data_dir")
    }

    lines: list[str] = [
        "# Reproduction report",
        "",
        "Generated by `facetlab reproduce` from the FACET v3 raw results "
        "(`facetlab.records.load_trials`); do not edit by hand.",
        "Every value below is computed from the data; the paper's values come from the claims "
        "audit (`paper/claims.csv`, one row per number the paper states).",
        "",
        f"Parameters: {', '.join(f'`{k}={v}`' for k, v in sorted(shown_params.items())) or 'defaults'}.",
        "",
        "## Notebooks",
        "",
        "| notebook | status |",
        "|:--|:--|",
    ]
    lines += [f"| `{r.source.name}` | {'ok' if r.ok else '**FAILED**'} |" for r in results]
    for r in results:
        if not r.ok:
            lines += ["", f"`{r.source.name}` failed:", "", "```", r.error, "```"]

    if claims:
        counts: dict[str, int] = {}
        for row in claims:
            counts[row.get("status", "?")] = counts.get(row.get("status", "?"), 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        lines += ["", "## Claims audit", "", f"{len(claims)} claims: {summary}."]
        unexpected = [r for r in claims if r.get("status") != r.get("expected_status")]
        if unexpected:
            lines += [
                "",
                f"**{len(unexpected)} claim(s) changed status from the registry's expectation:** "
                + ", ".join(f"`{r.get('id', '')}`" for r in unexpected),
            ]
    else:
        lines += [
            "",
            "## Claims audit",
            "",
            "`paper/claims.csv` is missing: the claims notebook did not run.",
        ]

    used: set[int] = set()
    for art in ARTIFACTS:
        lines += ["", f"## {art.title}", ""]
        for stem in art.files:
            md = tables / f"{stem}.md"
            png = figures / f"{stem}.png"
            if art.kind == "figure" and png.is_file():
                lines += [f"![{art.title}](../figures/{stem}.png)", ""]
                if art.reference:
                    lines += [
                        f"Paper's figure: `{art.reference}` in the FACET data "
                        "(`facetlab data path` prints where it is).",
                        "",
                    ]
            elif md.is_file():
                text = md.read_text(encoding="utf-8").strip()
                lines += [f"facetlab (`paper/tables/{stem}.csv`):", "", text, ""]
            elif art.kind == "table" or stem.startswith(("fig", "table")):
                lines += [f"_`{stem}` was not generated (see the notebook status above)._", ""]
        mine = [
            (i, row)
            for i, row in enumerate(claims)
            if any(re.search(p, row.get("location", "")) for p in art.locations)
        ]
        used.update(i for i, _ in mine)
        if mine:
            lines += ["The paper's values for this item:", ""]
            lines += _claims_table([row for _, row in mine])

    mismatches = [row for row in claims if row.get("status") in ("MISMATCH", "ERROR")]
    undecided = [row for row in claims if row.get("status") == "NOT_DERIVABLE"]
    lines += ["", "## Every mismatch, with its evidence", ""]
    if not claims:
        lines += ["_No claims audit available._"]
    elif not mismatches:
        lines += ["None: every derivable claim matches the data."]
    else:
        lines += [
            "Each entry is a number the paper states that the data does not reproduce "
            "(MISMATCH) or that could not be computed (ERROR); the evidence is the registry's.",
            "",
        ]
        lines += [_claim_line(row) for row in mismatches]
    if undecided:
        lines += ["", "### Not derivable from the data", ""]
        lines += [_claim_line(row) for row in undecided]
    path = paper / "REPRODUCTION.md"
    paper.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8", newline="\n")
    return path


def failed(results: Sequence[NotebookResult]) -> list[NotebookResult]:
    """The notebook runs that failed."""
    return [r for r in results if not r.ok]
